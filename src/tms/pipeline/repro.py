"""``make repro``: validate the whole params file, run ``dvc repro``, say where the results are.

    python -m tms.pipeline.repro [DVC REPRO ARGUMENTS ...]     # e.g. `pr_report`, `--force`

1. ``params.yaml`` is validated once, every section and device, before DVC starts any stage: a
   bad value stops here with the key named (exit status 2), before DVC removes the output of the
   stage it was about to run. Each ``device: auto`` says which device it chose, and why.
2. The outputs and ``dvc.lock`` entries of stages no longer in the pipeline (a profile switch)
   are removed (tms.pipeline.prune), so that the stages reading their folders come back from
   DVC's run cache. ``dvc repro`` runs with this interpreter's folder first on ``PATH``, so the
   stages' ``python`` is this environment's even when it is not activated. Its console output is
   passed through, but for the hint to ``dvc push`` (the project has no DVC remote). Its stages
   start warm (tms.pipeline.warm): torch and the other libraries imported once for them all.
3. When every stage is up to date (no arguments given), the checkpoints of interrupted runs
   are removed: none can be resumed any more.
4. Each stage's wall time this run (from the stages' records, tms.pipeline.stage.RECORDS_FILE),
   the total, and the page to open; after a whole run, what it decided (tms.pipeline.outcome):
   the verdict counts, empirical apart from mathematical, and against the committed snapshot of
   the same profile.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from tms.core import progress
from tms.core.io import CHECKPOINTS
from tms.core.schema import ParamsError
from tms.pipeline import dvc_state, outcome, prune, warm
from tms.pipeline.params import SECTION
from tms.pipeline.profiles import profile_name
from tms.pipeline.stage import DEVICE, ENDED, LOG_FILE, PARAMS_FILE, RECORDS_FILE, STARTED

INDEX = "reports/index.html"


def dvc_environment(**extra: str) -> dict[str, str]:
    """The environment DVC runs under (``dvc repro`` here, ``make verify``'s DVC calls): this
    interpreter's folder first on ``PATH``, so each stage's ``python`` is this environment's,
    with ``extra`` set."""
    return {**os.environ, **extra,
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}


def read_records(path: str | Path = RECORDS_FILE, offset: int = 0) -> list[dict]:
    """The stages' records (tms.pipeline.stage.RECORDS_FILE) from byte ``offset`` of ``path``
    on, in the order written; a line that is not a record (damaged, cut off) is skipped; none if
    there is no such file."""
    path = Path(path)
    if not path.exists():
        return []
    with path.open(encoding="utf-8", errors="replace") as log:
        log.seek(offset)
        lines = log.read().splitlines()
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and {"at", "stage", "event"} <= record.keys():
            records.append(record)
    return records


def _elapsed(first: str, last: str) -> float:
    """Seconds between two ISO time stamps; 0 where they cannot be read."""
    try:
        return datetime.fromisoformat(last).timestamp() - datetime.fromisoformat(
            first).timestamp()
    except (TypeError, ValueError):
        return 0.0


def stage_times(records: list[dict]) -> list[tuple[str, float, int]]:
    """(stage, seconds, runs) of every stage that finished in ``records`` (:func:`read_records`),
    in the order they finished.

    seconds: the finishing run's, plus, when it resumed a checkpoint (a ``resumed`` record of
    tms.core.progress), those of the interrupted runs whose work it took up: each run of the
    stage since its last finished run, back to the last that trained afresh (a ``progress``
    record without resuming), at its recorded time, or, for a run cut off without a word
    (SIGKILL, a machine stopped), from its start to its last record (progress comes every
    30 s). runs: how many runs that is (1: no resume).
    """
    times, open_runs, carried = [], {}, {}      # carried: stage → (seconds, runs) taken up

    def end(name: str, seconds: float | None, done: bool) -> tuple[float, int]:
        first, last, state = open_runs.pop(name)
        before = carried.pop(name, (0.0, 0))
        seconds = _elapsed(first, last) if seconds is None else seconds
        keep = state == "resumed" or (state == "idle" and not done)   # a run that never trained
        return (before[0] + seconds, before[1] + 1) if keep else (seconds, 1)

    for record in records:
        at, name, event = record["at"], record["stage"], record["event"]
        if event == STARTED:
            if name in open_runs:                            # the last run was cut off
                carried[name] = end(name, None, False)
            open_runs[name] = [at, at, "idle"]
            continue
        run = open_runs.setdefault(name, [at, at, "idle"])  # records from before 'started'
        run[1] = at
        if event == progress.RESUMED:
            run[2] = "resumed"
        elif run[2] == "idle" and event == progress.PROGRESS:
            run[2] = "fresh"
        if event == ENDED:
            done = record.get("status") == 0
            spent = end(name, float(record.get("seconds", 0.0)), done)
            if done:
                times.append((name, *spent))
            else:
                carried[name] = spent
    return times


def stage_devices(records: list[dict]) -> dict[str, str]:
    """stage → the device its last recorded run chose for a params ``device: auto``, with the
    reason the stage gave for a GPU (its name), from ``records`` (:func:`read_records`); stages
    that recorded none are absent."""
    devices = {}
    for r in (r for r in records if r["event"] == DEVICE and "device" in r):
        gpu = r["device"].startswith("cuda") and r.get("why")
        devices[r["stage"]] = f"{r['device']} ({r['why'].split(',')[0]})" if gpu else r["device"]
    return devices


def summary(times: list[tuple[str, float, int]]) -> list[str]:
    """The closing lines: each stage's time (``times`` as :func:`stage_times` gives them), the
    total, and the page to open."""
    lines = [f"  {name:<24} {seconds:8.1f} s" for name, seconds, _ in times]
    if times:
        lines = ["stage times this run:", *lines,
                 f"  {'total':<24} {sum(t[1] for t in times):8.1f} s   (log: {LOG_FILE})"]
    return [*lines, f"results: open {INDEX} (links to every report and claim)"]


def _records_size() -> int:
    return RECORDS_FILE.stat().st_size if RECORDS_FILE.exists() else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if {"-h", "--help"} & set(argv):
        print(__doc__)
        return 0
    try:
        said = SECTION.check_devices(SECTION.load(PARAMS_FILE))
    except (ParamsError, FileNotFoundError) as err:
        print(f"error: {err}\nnothing was run: fix {PARAMS_FILE} and run again", file=sys.stderr)
        return 2
    if why := dvc_state.problem():
        print(f"error: {why}", file=sys.stderr)
        return 2
    for line in said:
        print(line)
    try:
        gone = prune.prune()
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if gone:
        print(f"removed the outputs of {len(gone)} stages no longer in the pipeline (the params "
              f"changed; DVC's cache keeps them): {', '.join(gone)}")
    start = _records_size()
    with warm.starter(dvc_environment(PYTHONUNBUFFERED="1")) as env, \
            subprocess.Popen([sys.executable, "-m", "dvc", "repro", *argv], env=env,
                             stdout=subprocess.PIPE, text=True, bufsize=1) as dvc:
        for line in dvc.stdout:
            if "dvc push" not in line:
                sys.stdout.write(line)
                sys.stdout.flush()
    if dvc.returncode != 0:
        return dvc.returncode
    if not argv:
        shutil.rmtree(CHECKPOINTS, ignore_errors=True)
    print("\n".join(summary(stage_times(read_records(RECORDS_FILE, start)))))
    if not argv:
        print("\n".join(outcome.lines(profile_name(PARAMS_FILE))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
