"""Run one stage script in the project's environment: every dvc.yaml command goes through here.

    python stages/run.py stages/persian_rug/pr_train.py --n-s 128

DVC runs a stage's command with the ``python`` of the shell's PATH. Where that interpreter cannot
import the package (``.venv/bin/dvc repro`` without activating .venv, say), this script restarts
the command under the project's own ``.venv/bin/python`` when there is one; otherwise it says what
to do and exits with status 2 (nothing is written; DVC keeps the previous outputs in its cache,
``dvc checkout`` restores them). Standard library only: it must run where the package does not.

The package is always this checkout's own ``src/`` (first on the path): a copy of the checkout
whose ``.venv`` was installed elsewhere runs its own code, not the other checkout's, and says so
with the fix (``make env``). A stage that runs out of memory (a ``ulimit -v`` too low to load its
libraries, or to hold its arrays) ends in one line naming the limit, exit status 2.

**Warm starts.** Where ``$TMS_STAGE_STARTER`` names a warm starter (stages/starter.py, which
``make repro`` runs beside ``dvc repro``: tms.pipeline.warm), this process hands the stage to it
and the stage runs in a child of the starter, torch, pandas and scipy already imported, as it
would have run here; this process waits and ends as the stage ends. Where no starter answers,
or it declines, the stage runs here.
"""

import importlib.metadata
import importlib.util
import os
import resource
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
#: Set on the restart, so that an environment that still lacks the package cannot loop.
RESTARTED = "TMS_STAGE_RESTARTED"
#: The variable naming the warm starter's socket (stages/starter.py's STARTER).
STARTER = "TMS_STAGE_STARTER"


def main(argv: list[str]) -> int:
    """Run the stage script ``argv[0]`` (a path from the repository root) with the arguments
    ``argv[1:]``: warm where a starter takes it, else here; its exit status."""
    if not argv or not argv[0].endswith(".py") or not (ROOT / argv[0]).is_file():
        print("usage: python stages/run.py stages/<paper>/<stage>.py [arguments] (the script's "
              "path from the repository root)", file=sys.stderr)
        return 2
    if (status := _warm_start(argv)) is not None:
        return status
    if not _is_environment():
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
    installed = importlib.util.find_spec("tms")
    if installed is None or not Path(installed.origin).resolve().is_relative_to(SRC):
        where = Path(installed.origin).parent if installed else "a folder that is gone"
        print(f"warning: this environment's tms package is installed from {where}, not from "
              f"this checkout (it was moved or copied): running {SRC / 'tms'}; `make env` "
              f"installs this checkout's", file=sys.stderr)
    sys.path.insert(0, str(SRC))
    os.environ["PYTHONPATH"] = os.pathsep.join(      # and the processes it starts (a report's kernel)
        [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])
    script = ROOT / argv[0]
    sys.argv = [str(script), *argv[1:]]
    sys.path.insert(0, str(script.parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except (MemoryError, ImportError) as err:
        if isinstance(err, ImportError) and "failed to map segment" not in str(err):
            raise
        print(f"error: {argv[0]} ran out of memory ({type(err).__name__}: {err or 'no more'}); "
              f"this shell limits a process's address space to {_address_limit()} "
              f"(`ulimit -v`): raise the limit (loading torch and scipy alone takes about 600 "
              f"MiB) or run on a machine with more memory", file=sys.stderr)
        return 2
    return 0


def _warm_start(argv: list[str]) -> int | None:
    """The stage's exit status from a warm start (stages/starter.py: hand_over), or None to run
    it here: no starter named, none answers, or it declines."""
    if not os.environ.get(STARTER):
        return None
    starter = runpy.run_path(str(Path(__file__).with_name("starter.py")))
    return starter["hand_over"](os.environ[STARTER], str(Path(__file__).resolve()), argv)


def _is_environment() -> bool:
    """Whether this interpreter has the project installed (its distribution's record, which a
    moved checkout's .venv keeps although the path it points at is gone)."""
    try:
        importlib.metadata.distribution("tms")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _address_limit() -> str:
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return "no limit" if soft == resource.RLIM_INFINITY else f"{soft // 1024} KiB"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
