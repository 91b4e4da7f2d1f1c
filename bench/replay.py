"""Measurement: how long a snapshot's trained grid would take on this machine, replayed from its
own models' stopping steps (docs/performance.md, the forecast against the snapshots).

For each ``--n-s`` of the snapshot's Persian Rug grid (its ``params.yaml`` and
``data/persian_rug/train/n{n_s}.parquet``), every interval between two stopping steps costs the
useful work of the models still in the stack (10·batch·n_s·Σn_d FLOPs a step,
tms.engine.grid.grid_flops) at the rate measured here for that live stack
(tms.persian_rug.forecast.measured_rate, the stage's own engine, a few steps) at a few moments
of the run, and at the whole stack's rate. Prints both sums beside the snapshot's stage time and
the rates: a replay near the forecast but far from the snapshot's time says that run's machine
was slower (its load), not the forecast's model; a replay at live rates well above the whole
stack's says the stack's shrinking costs. The CPU path (fp32), on an otherwise idle machine, for
a grid of ReLU models trained on the CPU in one stack (as every committed CPU snapshot's).

    .venv/bin/python bench/replay.py results/cpu-paper --n-s 128 256
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pandas as pd

from tms.engine.grid import Schedule
from tms.persian_rug import training
from tms.persian_rug.forecast import measured_rate, step_flops
from tms.pipeline import params

#: The moments of the run (quantiles of its distinct stopping steps) whose live stacks are timed.
MOMENTS = (0.0, 0.25, 0.5, 0.75, 0.9, 0.97)


def stage_row(snapshot: Path, stage: str) -> tuple[float, str]:
    """The snapshot README's time of ``stage`` (s) and the device it ran on ("cpu" where the
    table has no device column). Raises LookupError if it has no time for it."""
    if m := re.search(rf"^\| {re.escape(stage)} \| ([0-9.]+) \|[^|\n]*\|(?: ([^|\n]+) \|)?$",
                      (snapshot / "README.md").read_text(), re.M):
        return float(m.group(1)), (m.group(2) or "cpu").strip()
    raise LookupError(f"{snapshot}/README.md has no time for {stage}")


def replay(snapshot: Path, n_s: int) -> dict:
    """Seconds of the grid ``n_s`` of ``snapshot`` replayed at its live stacks' rates and at the
    whole stack's, the snapshot's own time, and the rates measured (moment step → GFLOP/s).
    Raises SystemExit for a grid of other models than ReLU or a stage not run on the CPU,
    LookupError where the snapshot has no time for it, KeyError where a model of the params has
    no row in the snapshot's table."""
    stage = f"pr_train@{n_s}"
    seconds, device = stage_row(snapshot, stage)
    pr = params.SECTION.load(snapshot / "params.yaml").persian_rug
    grid = pr.grid.at(n_s)
    if list(grid.models) != ["relu"]:
        raise SystemExit(f"{stage} trains {grid.models}: the replay times ReLU grids only")
    if device != "cpu":
        raise SystemExit(f"{stage} of {snapshot} did not run on the CPU: nothing to replay here")
    insts = training.instances(training.expand(n_s, grid.p, grid.ratio, grid.seeds),
                               pr.train.seed, pr.train.lr_for(n_s))
    sched = Schedule.of(pr.train)
    table = pd.read_parquet(snapshot / f"data/persian_rug/train/n{n_s}.parquet")
    steps = {(round(r.p, 9), int(r.n_d), int(r.seed_index)): int(r.steps)
             for r in table[table.model == "relu"].itertuples()}
    stops = np.array([steps[(round(i.p, 9), i.n_d, i.data_seed - pr.train.seed)] for i in insts])
    edges = np.unique(np.r_[0, stops])
    live = lambda t: [k for k in range(len(insts)) if stops[k] > t]      # noqa: E731
    rates = {int(t): measured_rate(n_s, insts, sched, live(t), "cpu", pr.compute.precision)
             for t in np.quantile(edges[:-1], MOMENTS)}
    moments = np.array(list(rates))
    at_live = whole = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        work = step_flops(n_s, [insts[k] for k in live(a)], sched) * (b - a)
        at_live += work / rates[int(moments[np.argmin(np.abs(moments - a))])]
        whole += work / rates[int(moments[0])]
    return {"n_s": n_s, "replayed_live": at_live, "replayed_whole": whole,
            "snapshot": seconds,
            "gflop_s": {t: r / 1e9 for t, r in rates.items()}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("snapshot", type=Path, help="a results snapshot, e.g. results/cpu-paper")
    ap.add_argument("--n-s", type=int, nargs="+", required=True)
    args = ap.parse_args(argv)
    for n_s in args.n_s:
        r = replay(args.snapshot, n_s)
        print(f"pr_train@{n_s}: replayed {r['replayed_live']:.0f} s at the live stacks' rates, "
              f"{r['replayed_whole']:.0f} s at the whole stack's; the snapshot's run "
              f"{r['snapshot']:.1f} s; GFLOP/s by step "
              + ", ".join(f"{t}: {g:.0f}" for t, g in r["gflop_s"].items()), flush=True)


if __name__ == "__main__":
    main()
