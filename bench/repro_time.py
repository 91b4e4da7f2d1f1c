"""Benchmark: wall time of the default profile's `dvc repro` from a clean cache, stage by stage.

Copies the pipeline (dvc.yaml, params.yaml, stages/, src/, reports/templates/) into a temporary
directory with a fresh DVC repository and runs one `dvc repro` there, as `make repro` does (its
stages started warm: tms.pipeline.warm). A stage's time runs from DVC's "Running stage" line for
it to the next one (the last: to the end), so it includes DVC's caching of the stage's outputs.

    .venv/bin/python bench/repro_time.py
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tms.core import papers
from tms.pipeline import warm

ROOT = Path(__file__).resolve().parents[1]

#: DVC's line as it starts a stage.
RUNNING = re.compile(r"Running stage '([^']+)'")
#: Stage-name prefix of each paper's stages, for the subtotals.
PAPERS = {p.prefix: p.title.split(":")[0] for p in papers.PAPERS}


def main() -> dict[str, float]:
    """Run the stages; returns {stage: seconds, ..., 'total': seconds} (also printed)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1",        # DVC's lines as they happen
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    dvc = [sys.executable, "-m", "dvc"]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        for item in ["dvc.yaml", "params.yaml", "stages", "src", "reports/templates"]:
            src = ROOT / item
            if src.is_dir():
                shutil.copytree(src, repo / item, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, repo / item)
        subprocess.run(dvc + ["init", "--no-scm", "-q"], cwd=repo, env=env, check=True)
        subprocess.run(dvc + ["config", "core.analytics", "false"], cwd=repo, env=env, check=True)
        shutil.copy2(ROOT / ".dvcignore", repo / ".dvcignore")     # no __pycache__ in code deps
        print(f"{'stage':<24}{'seconds':>10}")
        times: dict[str, float] = {}
        stage, since = None, 0.0              # the stage running, and since when

        def done(now: float) -> None:
            times[stage] = now - since
            print(f"{stage:<24}{times[stage]:>10.1f}", flush=True)

        start_all = time.perf_counter()
        with warm.starter(env, repo) as env, \
                subprocess.Popen(dvc + ["repro"], cwd=repo, env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as run:
            log = []
            for line in run.stdout:
                log.append(line)
                running = RUNNING.match(line)
                if running:
                    now = time.perf_counter()
                    if stage:
                        done(now)
                    stage, since = running[1], now
        end = time.perf_counter()
        if run.returncode:
            sys.exit(f"dvc repro failed:\n{''.join(log[-40:])}")
        done(end)
        times["total"] = end - start_all
        for prefix, paper in PAPERS.items():
            times[paper] = sum(v for k, v in times.items() if k.startswith(prefix))
            print(f"{paper:<24}{times[paper]:>10.1f}")
        print(f"{'total':<24}{times['total']:>10.1f}")
    return times


if __name__ == "__main__":
    main()
