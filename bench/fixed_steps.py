"""Measurement: the symmetry statistics of figs. 4–7 when every model trains a fixed number of
steps, the stopping rule off (or on, with a longer window).

The claims judge models where the stopping rule stopped them; the convergence check retrains one
model per (n_s, p) longer and finds Λ (fig. 7) and Var diag(W) still moving
(docs/benchmarks.md, "Fig. 7 past the stopping rule"). This trains a whole grid of a params file
(``--params``, e.g. a profile's snapshot results/cpu-paper/params.yaml: its grid, seeds, learning
rate, batch and held-out sample) once per n_s of ``--n-s`` for ``--steps`` steps each, every
model to the same step (a window of all the steps: the rule never fires), and writes per model
its trained row (tms.persian_rug.training.TRAIN_COLUMNS) and its statistics
(tms.persian_rug.stats.STAT_COLUMNS) with columns ``fixed_steps`` and ``window``. The
untrained baseline is the params' own (stats/n{n_s}_random.parquet: the same seeds give the same
weights). ``--window W`` turns the stopping rule on with that window (``--steps`` the cap): does
a longer window than the authors' 200 stop the models past the plateau? (docs/benchmarks.md,
"A longer window").

``train``: each n_s is written as soon as it is done (``--out``: train.parquet, stats.parquet,
times.json, the grids done so far together), so a run stopped by ``--deadline`` (seconds; an n_s
whose forecast from the last one's rate would pass it is skipped) keeps what it finished.
``summary``: one table of the models where the rule stopped them (a snapshot's data) and after
each fixed-step run, per model (``--csv``), and printed per n_s: trained/theory (the central
claim's cells), trained/untrained Λ, and the ladder slopes of figs. 4–7 beside untrained
weights', and again with each n_s of two runs or more at its longest (docs/benchmarks.md,
"Past the stopping rule, every model"; docs/measurements/fixed-steps-h100.csv). ``--earlier``
adds the fixed-step rows of an earlier summary's ``--csv``, so a run can join runs whose folders
are gone.

    TMS_DEVICE=cuda .venv/bin/python bench/fixed_steps.py train \\
        --params results/cpu-paper/params.yaml --n-s 128 256 512 1024 2048 --steps 16000 \\
        --out /tmp/fixed16
    .venv/bin/python bench/fixed_steps.py summary --snapshot results/cpu-paper/data/persian_rug \\
        --runs /tmp/fixed64 --earlier docs/measurements/fixed-steps-h100.csv \\
        --csv docs/measurements/fixed-steps-h100.csv
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

from tms.core import io
from tms.core.device import resolve_device
from tms.engine.grid import Schedule
from tms.persian_rug import params, stats, training, unkept
from tms.persian_rug.compare import trained_vs_theory
from tms.persian_rug.ladder import ladder_slope

#: The statistics of figs. 4–7 the summary follows along the ladder.
SYMMETRY = ("diag_var", "bias_var", "dvar_nu", "lyapunov")
#: Per model and horizon, the columns of the summary's table.
COLUMNS = ["n_s", "p", "ratio_target", "n_d", "instance", "horizon", "steps", "stopped", "loss",
           "loss_theory", "trained_theory", "in_regime", *SYMMETRY,
           *(f"untrained_{c}" for c in SYMMETRY)]


def fixed(pr, n_s: int, steps: int, device: str, budget_mb: float | None,
          window: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The trained table and statistics of the ReLU models of ``pr``'s grid at n_s (its p,
    ratios and seeds; n_s need not be one of grid.n_s: the grid's own p and ratio are used), each
    trained exactly ``steps`` steps, or, with ``window``, until the stopping rule with that
    window stops it (``steps`` the cap; column ``window``). Raises ParamsError as
    tms.persian_rug.training.plan_grid."""
    grid = pr.grid.at(n_s) if n_s in pr.grid.n_s else pr.grid.at(pr.grid.n_s[-1])
    window = window or steps
    sched = dataclasses.replace(Schedule.of(pr.train), window=window, max_steps=steps)
    compute = pr.compute if budget_mb is None else pr.compute.model_copy(
        update={"memory_budget_mb": budget_mb})
    spec = training.GridSpec(n_s, pr.train.seed, pr.train.lr_for(n_s), sched, pr.eval.seed,
                             pr.eval.n_vectors, device, compute, label=f"n_s {n_s} ×{steps} ")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "weights"
        table = training.train_models(
            spec, training.expand(n_s, grid.p, grid.ratio, grid.seeds), ["relu"], folder,
            keep=lambda pt: False, measure_unkept=unkept.measure)
        statistics = stats.grid_statistics(table, {}, unkept.read(folder))
    return (table.assign(fixed_steps=steps, window=window),
            statistics.assign(fixed_steps=steps, window=window))


def _models(train: pd.DataFrame, statistics: pd.DataFrame, baseline: pd.DataFrame,
            horizon: str) -> pd.DataFrame:
    """:data:`COLUMNS` of the ReLU models of one trained table, its statistics and untrained
    baseline (same instances), at ``horizon`` ('rule', or the fixed step count)."""
    keys = ["n_s", "instance"]
    relu = train[train.model == "relu"]
    cells = trained_vs_theory(relu)[["n_s", "ratio_target", "p", "loss_theory", "in_regime"]]
    out = (relu[keys + ["p", "ratio_target", "n_d", "steps", "stopped", "loss"]]
           .merge(statistics[statistics.model == "relu"][keys + list(SYMMETRY)], on=keys)
           .merge(baseline[baseline.model == "relu"][keys + list(SYMMETRY)].rename(
               columns={c: f"untrained_{c}" for c in SYMMETRY}), on=keys)
           .merge(cells, on=["n_s", "ratio_target", "p"]))
    return out.assign(horizon=horizon, trained_theory=out.loss / out.loss_theory)[COLUMNS]


def summary(snapshot: Path, runs: list[Path]) -> pd.DataFrame:
    """The models of a snapshot's trained grids (``snapshot``: its data/persian_rug, trained
    tables, statistics and untrained baselines) where the rule stopped them, and of each fixed-step
    run of :func:`fixed` (``runs``: ``train`` outputs) over the same seeds: :data:`COLUMNS`, one
    row per model and horizon. An n_s without a baseline in the snapshot gets one computed
    (tms.persian_rug.stats.baseline_statistics: untrained weights from the same seeds)."""
    read = lambda kind, n: pd.read_parquet(snapshot / kind / f"n{n}.parquet")  # noqa: E731
    n_stop = sorted(int(f.stem[1:]) for f in (snapshot / "train").glob("n*.parquet"))
    fixed_runs = [(pd.read_parquet(r / "train.parquet"), pd.read_parquet(r / "stats.parquet"))
                  for r in runs]
    every = sorted(set(n_stop).union(*(set(t.n_s) for t, _ in fixed_runs)))
    baseline = pd.concat([pd.read_parquet(snapshot / "stats" / f"n{n}_random.parquet")
                          if n in n_stop else stats.baseline_statistics(
                              next(t[t.n_s == n] for t, _ in fixed_runs if n in set(t.n_s)))
                          for n in every], ignore_index=True)
    rows = [_models(pd.concat([read("train", n) for n in n_stop], ignore_index=True),
                    pd.concat([read("stats", n) for n in n_stop], ignore_index=True),
                    baseline, "rule")]
    rows += [_models(t, s, baseline, _horizon(t)) for t, s in fixed_runs]
    return pd.concat(rows, ignore_index=True)


def _horizon(table: pd.DataFrame) -> str:
    """A run's horizon: its fixed step count, or 'cap C, window W' where a stopping rule of
    window W stopped its models (at most C steps; a rule that needs more than 2·W losses never
    fires at 2·W ≥ C: a fixed-step run)."""
    steps, window = int(table.fixed_steps.iloc[0]), int(table.get("window", table.fixed_steps
                                                                   ).iloc[0])
    return str(steps) if 2 * window >= steps else f"cap {steps}, window {window}"


def _order(horizon: str) -> float:
    """Sort key of a horizon: the rule's stop first, then by step count (a rule-stopped run
    after the fixed run of its cap)."""
    if horizon == "rule":
        return -1
    steps = int(horizon.removeprefix("cap ").split(",")[0])
    return steps if horizon.isdigit() else steps + 0.5


def show(table: pd.DataFrame) -> None:
    """Print per horizon and n_s the medians of trained/theory (in-regime cells) and
    trained/untrained Λ, and along the ladder the median per-cell log-log slope of each statistic
    of :data:`SYMMETRY` with its bootstrap 95% interval (tms.persian_rug.ladder.ladder_slope)
    beside untrained weights': over the n_s every horizon has, and over its own where they
    differ; then the same with each n_s that has two fixed-step runs or more at its longest (a
    horizon where the loss has had the chance to settle)."""
    common = set.intersection(*(set(t.n_s) for _, t in table.groupby("horizon")))
    trained = table[table.horizon.str.isdigit()]
    trained = trained[trained.groupby("n_s").horizon.transform("nunique") >= 2]
    longest = trained[trained.steps == trained.groupby("n_s").steps.transform("max")]
    views = [*table.groupby("horizon", sort=False)]
    if len(longest):
        views.append(("each n_s of two fixed-step runs or more at its longest", longest))
    for horizon, t in views:
        t = t.assign(excess=t.lyapunov / t.untrained_lyapunov)
        per = pd.DataFrame({
            "trained/theory": t[t.in_regime].groupby("n_s").trained_theory.median(),
            "Λ trained/untrained": t.groupby("n_s").excess.median(),
            "loss": t.groupby("n_s").loss.mean(),
            "steps, median": t.groupby("n_s").steps.median().astype(int),
            "stopped by the rule": t.groupby("n_s").stopped.mean()})
        print(f"horizon {horizon}:\n{per.to_string(float_format=lambda v: f'{v:.4g}')}")
        for ladder in (x for x in {frozenset(common), frozenset(t.n_s)} if len(x) >= 2):
            cells = t[t.n_s.isin(ladder)].set_index(["n_s", "ratio_target", "p"])
            print(f"  n_s {min(ladder)}–{max(ladder)}: " + "; ".join(
                "{} {:.2f} [{:.2f}, {:.2f}]".format(col, *ladder_slope(cells[col])[:3])
                for col in (*SYMMETRY, *(f"untrained_{c}" for c in SYMMETRY))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    tr = sub.add_parser("train", help="train a grid with the rule off, or with --window")
    tr.add_argument("--params", default="params.yaml", help="the params file whose grid to train")
    tr.add_argument("--n-s", type=int, nargs="+", required=True, help="the n_s, in order")
    tr.add_argument("--steps", type=int, required=True, help="steps every model trains")
    tr.add_argument("--window", type=int,
                    help="the stopping rule on, with this window (--steps the cap)")
    tr.add_argument("--budget-mb", type=float, help="over persian_rug.compute.memory_budget_mb")
    tr.add_argument("--deadline", type=float, default=float("inf"),
                    help="seconds from the start after which no n_s is started")
    tr.add_argument("--out", required=True, help="folder for train/stats parquet, times.json")
    su = sub.add_parser("summary", help="the rule's stop beside the fixed-step runs")
    su.add_argument("--snapshot", type=Path, required=True, help="a snapshot's data/persian_rug")
    su.add_argument("--runs", type=Path, nargs="+", required=True, help="train --out folders")
    su.add_argument("--earlier", type=Path,
                    help="an earlier summary's --csv: its fixed-step rows join the table")
    su.add_argument("--csv", help="also write the table here")
    a = ap.parse_args()
    if a.command == "summary":
        table = summary(a.snapshot, a.runs)
        if a.earlier:
            earlier = pd.read_csv(a.earlier, dtype={"horizon": str})
            earlier = earlier.assign(stopped=earlier.get("stopped", False))   # fixed-step rows
            table = pd.concat([table, earlier[~earlier.horizon.isin(table.horizon)]])
        order = table.horizon.map(_order)
        table = table.iloc[order.argsort(kind="stable")].reset_index(drop=True)
        show(table)
        if a.csv:
            table.to_csv(a.csv, index=False, float_format="%.6g")
        return
    start = time.perf_counter()
    pr = params.SECTION.load(a.params)
    device = resolve_device(pr.device)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    tables, stats, times = [], [], {}
    for k, n_s in enumerate(a.n_s):
        elapsed = time.perf_counter() - start
        if k and elapsed + times[a.n_s[k - 1]] * (n_s / a.n_s[k - 1]) ** 2 > a.deadline:
            print(f"n_s {n_s} skipped: forecast past the {a.deadline:.0f} s deadline", flush=True)
            continue
        t0 = time.perf_counter()
        table, statistics = fixed(pr, n_s, a.steps, device, a.budget_mb, a.window)
        times[n_s] = time.perf_counter() - t0
        tables.append(table)
        stats.append(statistics)
        io.write_parquet(pd.concat(tables, ignore_index=True), out / "train.parquet")
        io.write_parquet(pd.concat(stats, ignore_index=True), out / "stats.parquet")
        (out / "times.json").write_text(json.dumps({
            "device": torch.cuda.get_device_name(device) if device.startswith("cuda") else device,
            "torch": torch.__version__, "steps": a.steps, "window": a.window or a.steps,
            "seconds": times}, indent=1))
        print(f"n_s {n_s}: {len(table)} models, median {table.steps.median():.0f} of at most "
              f"{a.steps} steps, in {times[n_s]:.1f} s (mean loss {table.loss.mean():.4g})",
              flush=True)


if __name__ == "__main__":
    main()
