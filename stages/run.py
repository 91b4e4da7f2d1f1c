"""Run one stage script in the project's environment: every dvc.yaml command goes through here.

    python stages/run.py stages/persian_rug/pr_train.py --n-s 128

DVC runs a stage's command with the ``python`` of the shell's PATH. Where that interpreter cannot
import the package (``.venv/bin/dvc repro`` without activating .venv, say), this script restarts
the command under the project's own ``.venv/bin/python`` when there is one; otherwise it says what
to do and exits with status 2 (nothing is written; DVC keeps the previous outputs in its cache,
``dvc checkout`` restores them). Standard library only: it must run where the package does not.
"""

import importlib.util
import os
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
#: Set on the restart, so that an environment that still lacks the package cannot loop.
RESTARTED = "TMS_STAGE_RESTARTED"


def main(argv: list[str]) -> int:
    if not argv or not argv[0].endswith(".py") or not (ROOT / argv[0]).is_file():
        print("usage: python stages/run.py stages/<paper>/<stage>.py [arguments] (the script's "
              "path from the repository root)", file=sys.stderr)
        return 2
    if importlib.util.find_spec("tms") is None:
        if VENV_PYTHON.is_file() and not os.environ.get(RESTARTED):
            os.environ[RESTARTED] = "1"
            os.execv(VENV_PYTHON, [str(VENV_PYTHON), __file__, *argv])
        print(f"error: {sys.executable} cannot import the tms package, so the stage "
              f"{argv[0]} cannot run.\n"
              "  Run the pipeline with `make repro` (it creates .venv and runs DVC in it), or\n"
              "  activate the environment first: `. .venv/bin/activate && dvc repro`.\n"
              "  Outputs DVC removed before the stage are in its cache: `dvc checkout` "
              "restores them.", file=sys.stderr)
        return 2
    os.environ.pop(RESTARTED, None)          # not inherited by what the stage starts
    script = ROOT / argv[0]
    sys.argv = [str(script), *argv[1:]]
    sys.path.insert(0, str(script.parent))
    runpy.run_path(str(script), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
