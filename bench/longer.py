"""Measurement: does Λ (fig. 7) of trained models move when they train longer?

Retrains chosen ReLU models of one trained grid of the current params (data/ must hold the
grid, its statistics and its untrained baseline: run after ``make repro``) from their own seeds
and data stream, ``--factor`` times the steps they stopped at, the stopping rule off, as the
convergence check does (tms.persian_rug.converge.rerun, one model at a time, so models the step
cap stopped are retrained too), and prints per model its held-out loss and its trained/untrained
Λ at the stop and after: does the excess of Λ over untrained weights vanish with training, or
stay? (docs/benchmarks.md, "Fig. 7 past the stopping rule"; its rows in
docs/measurements/fig7-sparse-longer-cpu.csv). Each ``--factor`` retrains from the start: 2 and
4 cost 6 times the steps, not 4.

    .venv/bin/python bench/longer.py --n-s 1024 --p 0.086 --ratio 0.17 0.212 0.254 --factor 2 4
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from tms.core.device import resolve_device
from tms.engine.grid import Schedule
from tms.persian_rug import artefacts, converge, params, training
from tms.persian_rug.evidence import MODEL_KEYS


def longer(n_s: int, p: float, ratios: list[float], factor: float) -> pd.DataFrame:
    """The rows of the measurement: per model (seed index 0, not diverged) of n_s, p and each
    ratio, its steps, loss and Λ at the stop and ``factor`` times its steps later, with its
    untrained Λ. Raises SystemExit if no trained model matches, ValueError (through
    tms.persian_rug.converge.rerun) if ``factor`` < 1."""
    pr = params.SECTION.load()
    spec = training.GridSpec(n_s, pr.train.seed, pr.train.lr_for(n_s), Schedule.of(pr.train),
                             pr.eval.seed, pr.eval.n_vectors, resolve_device(pr.device),
                             pr.compute)
    table = pd.read_parquet(artefacts.trained(n_s))
    near = np.isclose(table.ratio_target.to_numpy()[:, None], ratios, rtol=1e-6).any(1)
    chosen = table[(table.model == "relu") & np.isclose(table.p, p, rtol=1e-6) & near
                   & (table.seed_index == 0) & ~table.diverged]
    if not len(chosen):
        raise SystemExit(f"no trained model of n_s {n_s} at p {p} and ratio {ratios} (grid: "
                         f"p {sorted(table.p.unique())}, "
                         f"ratio {sorted(table.ratio_target.unique())})")
    # the check reruns models the rule stopped; here the capped ones are asked for too
    runs = pd.concat([converge.rerun(spec, chosen.iloc[[k]].assign(stopped=True), factor,
                                     "grid") for k in range(len(chosen))], ignore_index=True)
    keys = runs.assign(model="relu")[MODEL_KEYS]
    at = {name: keys.merge(pd.read_parquet(path), on=MODEL_KEYS, how="left").lyapunov.to_numpy()
          for name, path in (("lyapunov", artefacts.statistics(n_s)),
                             ("untrained_lyapunov", artefacts.baseline(n_s)))}
    out = runs[["n_s", "p", "ratio_target", "steps", "loss", "long_steps", "long_loss", "drop",
                "long_lyapunov"]].assign(factor=factor, **at)
    return out.assign(excess=out.lyapunov / out.untrained_lyapunov,
                      long_excess=out.long_lyapunov / out.untrained_lyapunov)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-s", type=int, required=True, help="one of persian_rug.grid.n_s")
    ap.add_argument("--p", type=float, required=True, help="one of persian_rug.grid.p")
    ap.add_argument("--ratio", type=float, nargs="+", required=True,
                    help="values of persian_rug.grid.ratio")
    ap.add_argument("--factor", type=float, nargs="+", default=[2.0],
                    help="how many times its steps each model trains again (≥ 1)")
    ap.add_argument("--csv", help="also write every row here")
    a = ap.parse_args()
    rows = pd.concat([longer(a.n_s, a.p, a.ratio, f) for f in a.factor], ignore_index=True)
    print(rows.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if a.csv:
        rows.to_csv(a.csv, index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
