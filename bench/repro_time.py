"""Benchmark: wall time of the default profile's `dvc repro`, stage by stage, from a clean cache.

Copies the pipeline (dvc.yaml, params.yaml, stages/, src/, reports/templates/) into a temporary
directory with a fresh DVC repository, runs every stage in pipeline order and prints its time.

    .venv/bin/python bench/repro_time.py
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Stage-name prefix of each paper's stages, for the subtotals.
PAPERS = {"pr_": "Persian Rug", "ip_": "incidental", "notes_": "autoencoding notes"}


def main() -> dict[str, float]:
    """Run the stages; returns {stage: seconds, ..., 'total': seconds} (also printed)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    dvc = [sys.executable, "-m", "dvc"]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        for item in ["dvc.yaml", "params.yaml", "stages", "src", "reports/templates"]:
            src = ROOT / item
            (shutil.copytree if src.is_dir() else shutil.copy2)(src, repo / item)
        subprocess.run(dvc + ["init", "--no-scm", "-q"], cwd=repo, env=env, check=True)
        subprocess.run(dvc + ["config", "core.analytics", "false"], cwd=repo, env=env, check=True)
        names = subprocess.run(dvc + ["stage", "list", "--name-only"], cwd=repo, env=env,
                               check=True, capture_output=True, text=True).stdout.split()
        print(f"{'stage':<24}{'seconds':>10}")
        times: dict[str, float] = {}
        start_all = time.perf_counter()
        # dvc.yaml lists every stage after those it depends on: each stage alone
        # (--single-item), in that order, times the stage itself.
        for name in names:
            t = time.perf_counter()
            run = subprocess.run(dvc + ["repro", "-q", "--single-item", name], cwd=repo, env=env,
                                 capture_output=True, text=True)
            if run.returncode:
                sys.exit(f"stage {name} failed:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
            times[name] = time.perf_counter() - t
            print(f"{name:<24}{times[name]:>10.1f}", flush=True)
        times["total"] = time.perf_counter() - start_all
        for prefix, paper in PAPERS.items():
            times[paper] = sum(v for k, v in times.items() if k.startswith(prefix))
            print(f"{paper:<24}{times[paper]:>10.1f}")
        print(f"{'total':<24}{times['total']:>10.1f}")
    return times


if __name__ == "__main__":
    main()
