"""A temporary copy of the pipeline (dvc.yaml, stages, library, report templates) with a
params file of its own, initialised as a DVC repository without git, for end-to-end tests."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests/profiles/tiny.yaml"
DVC = [sys.executable, "-m", "dvc"]


def pipeline_copy(repo: Path, params_text: str) -> dict:
    """Copy the pipeline into ``repo`` with ``params_text`` as params.yaml, run ``dvc init``
    there; returns the environment to run dvc and the stages with."""
    for item in ["dvc.yaml", "stages", "src", "reports/templates"]:
        src, dst = ROOT / item, repo / item
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dst)
    (repo / "params.yaml").write_text(params_text)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("TMS_DEVICE", None)
    subprocess.run(DVC + ["init", "--no-scm", "-q"], cwd=repo, env=env, check=True)
    subprocess.run(DVC + ["config", "core.analytics", "false"], cwd=repo, env=env, check=True)
    return env


def repro(repo: Path, env: dict, *targets: str) -> subprocess.CompletedProcess:
    """``dvc repro [targets]`` in ``repo``; asserts it succeeded."""
    run = subprocess.run(DVC + ["repro", *targets], cwd=repo, env=env, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run
