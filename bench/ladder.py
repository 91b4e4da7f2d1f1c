"""Measurement: the Persian Rug n_s ladder, trained models against the theory and the rug.

On 5 p × 6 ratios of the authors' linspace grid (p 0.044–0.338, ratio 0.044–0.254), at each
n_s of the ladder, trained with the authors' schedule (learning rate 3e-3/√n_s, batch 1024, Adam
eps 1e-7, the stopping rule with window 200 checked every 30 steps, ``--max-steps`` at most):
each model's held-out loss (16,384 fixed vectors, tms.engine.train.heldout_loss) beside the
optimal symmetric theory (tms.persian_rug.theory.optimal_symmetric), the fitted Persian rug
(tms.persian_rug.rug.rug_losses) and the best linear map, one row per model, written as JSON and
summarised per n_s (median and range of trained/theory and trained/rug). It asks how the gap
between trained models and the theory moves with n_s (docs/benchmarks.md, "On one H200").
With ``--symmetry`` each row also holds the statistics of the paper's figs. 4–7 of the trained
weights and, prefixed ``untrained_``, of the same model's untrained weights
(tms.persian_rug.stats.weight_statistics and random_weights, as the pipeline's stats and
baseline stages compute them); ``--no-rug`` leaves the fitted rug out (its loss NaN).
``--summarise FILE`` reads such rows back (several rungs and seeds) and prints, as the claims
judge them (the cells whose models the rule stopped, not worse than linear, averaged over
seeds), each statistic's per-cell log-log slope along the ladder against the untrained
weights', the relative spread of the interference variances per n_s and trained/untrained Λ per
n_s (docs/benchmarks.md, "The symmetry statistics to n_s 8192").

    .venv/bin/python bench/ladder.py --device cuda --n-s 128 256 512 1024 --json out.json
    .venv/bin/python bench/ladder.py --device cuda --n-s 8192 --precision tf32 --symmetry
    .venv/bin/python bench/ladder.py --summarise docs/measurements/ladder-symmetry-h200.csv
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

import throughput
from tms.core import io
from tms.engine.grid import StackSpec
from tms.engine.train import heldout_loss, stack_of, train_grid
from tms.persian_rug import rug, stats, symmetry_claims, theory
from tms.persian_rug.ladder import ladder_slope, median_interval, side
from tms.persian_rug.params import n_d_of

P = [0.044, 0.086, 0.17, 0.254, 0.338]
RATIOS = [0.044, 0.086, 0.128, 0.17, 0.212, 0.254]
EVAL_SEED, N_EVAL = 20240601, 16384


@dataclass(frozen=True)
class Setup:
    """What every rung of the ladder shares: the grid ``p`` × ``ratios``, the seed, the step cap,
    the device and the precision, and whether the rows hold the symmetry statistics
    (``symmetry``) and the fitted rug's loss (``with_rug``)."""

    p: list[float]
    ratios: list[float]
    seed: int
    max_steps: int
    device: str
    precision: str
    symmetry: bool = False
    with_rug: bool = True


def rung(n_s: int, setup: Setup) -> list[dict]:
    """Train and score the grid of ``setup`` at one n_s: one row per model (with the symmetry
    statistics of trained and untrained weights when ``setup.symmetry``)."""
    p, seed, device, precision = setup.p, setup.seed, setup.device, setup.precision
    pts = [(q, n_d_of(n_s, r), r) for r in setup.ratios for q in p]
    insts = throughput.instances(n_s, [(q, d) for q, d, _ in pts], seed)
    start = time.perf_counter()
    res = train_grid(StackSpec(n_s, throughput.authors(setup.max_steps), device=device,
                               precision=precision), insts)
    seconds = time.perf_counter() - start
    p_t = torch.tensor([q for q, _, _ in pts], device=device)
    loss = heldout_loss(stack_of(res, n_s, True, device), p_t, EVAL_SEED, N_EVAL)
    rug_loss = {}
    if setup.with_rug:
        samples = rug.RugSamples(fit_seed=7, n_fit=max(64, 4_000_000 // n_s), eval_seed=EVAL_SEED,
                                 n_eval=N_EVAL)
        fitted = rug.rug_losses(n_s, sorted({d for _, d, _ in pts}), p, 0, samples, device=device)
        rug_loss = {(int(d), float(q)): float(v)
                    for d, q, v in zip(fitted.n_d, fitted.p, fitted.loss)}
    sym = [symmetry_row(x, inst, q, device) if setup.symmetry else {}
           for (q, _, _), x, inst in zip(pts, res, insts)]
    return [{"n_s": n_s, "p": q, "ratio_target": r, "n_d": d, "seed": seed,
             "precision": precision, "loss": float(lo),
             "theory": theory.optimal_symmetric(q, d / n_s)["loss"],
             "rug": rug_loss.get((d, q), float("nan")),
             "linear": float(theory.optimal_linear_loss(q, d / n_s)), "steps": x.steps,
             "stopped": x.stopped, "diverged": x.diverged, "train_s": seconds, **extra}
            for (q, d, r), lo, x, extra in zip(pts, loss, res, sym)]


def symmetry_row(x, inst, p: float, device: str) -> dict:
    """Figs. 4–7's statistics of one trained model ``x`` (tms.engine.train.Result) and, prefixed
    ``untrained_``, of its untrained weights drawn from its init seed."""
    n_d, n_s = x.W_in.shape
    trained = stats.weight_statistics(x.W_in, x.W_out, x.b, p, device=device)
    untrained = stats.weight_statistics(*stats.random_weights(n_s, n_d, inst.seed), p,
                                        device=device)
    return {**trained, **{f"untrained_{k}": v for k, v in untrained.items()}}


def converged_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The cells of ``table`` (rows of :func:`rung` with ``symmetry``, any rungs and seeds) as
    the claims take them: the models the rule stopped, not diverged and not worse than linear,
    averaged over seeds per cell (index n_s, ratio_target, p)."""
    ok = table[table.stopped & ~table.diverged & (table.loss <= table.linear)]
    return ok.groupby(["n_s", "ratio_target", "p"]).mean(numeric_only=True)


def symmetry_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Figs. 4–7 along the ladder of ``cells`` (:func:`converged_cells`): per statistic the
    median per-cell log-log slope with its bootstrap 95% interval
    (tms.persian_rug.ladder.ladder_slope), the untrained weights' slope, and the verdict the
    claims' rule gives (falls: interval below 0; faster: below the untrained slope; None:
    across it). One row per statistic."""
    out = []
    for col in ("diag_var", "bias_var", "dvar_nu", "lyapunov"):
        slope, lo, hi, k = ladder_slope(cells[col])
        untrained, ulo, uhi, _ = ladder_slope(cells[f"untrained_{col}"])
        out.append({"statistic": col, "slope": slope, "low": lo, "high": hi, "cells": k,
                    "untrained": untrained, "untrained_low": ulo, "untrained_high": uhi,
                    "falls": side(lo, hi, 0.0), "faster": side(lo, hi, untrained)})
    return pd.DataFrame(out)


def lyapunov_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Fig. 7's "all models approach uniformity" per n_s of ``cells`` (:func:`converged_cells`),
    as tms.persian_rug.symmetry_claims judges it at the largest n_s: each cell's trained Λ /
    untrained Λ, its median with the bootstrap 95% interval
    (tms.persian_rug.ladder.median_interval), and the share of the cells at most
    1 + symmetry_claims.MAX_SPREAD. One row per n_s."""
    bound = 1 + symmetry_claims.MAX_SPREAD
    ratio = cells.lyapunov / cells.untrained_lyapunov
    return pd.DataFrame(
        [dict(zip(("median", "low", "high"), median_interval(r.to_numpy())), n_s=n_s,
              cells=len(r), share_within=float((r <= bound).mean()))
         for n_s, r in ratio.groupby("n_s")]).set_index("n_s")


def spread_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6's 'identical variances' per n_s of ``cells`` (:func:`converged_cells`), as
    tms.persian_rug.symmetry_claims judges it: each cell's relative spread √ΔVar(ν) / mean
    Var(ν) (trained, and untrained), its median and largest, and the share of the cells at most
    symmetry_claims.MAX_SPREAD ('identical' read as within 10%). One row per n_s."""
    most = symmetry_claims.MAX_SPREAD
    t = cells.assign(spread=np.sqrt(cells.dvar_nu) / cells.mean_var_nu,
                     untrained=np.sqrt(cells.untrained_dvar_nu) / cells.untrained_mean_var_nu)
    g = t.groupby("n_s")
    return pd.DataFrame({
        "cells": g.size(), "median": g.spread.median(), "largest": g.spread.max(),
        "share_within": g.spread.apply(lambda s: (s <= most).mean()),
        "untrained_median": g.untrained.median(),
        "untrained_share_within": g.untrained.apply(lambda s: (s <= most).mean())})


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--n-s", type=int, nargs="+", default=[128, 256, 512, 1024])
    ap.add_argument("--p", type=float, nargs="+", default=P)
    ap.add_argument("--ratio", type=float, nargs="+", default=RATIOS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-steps", type=int, default=8000)
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--symmetry", action="store_true",
                    help="also the statistics of figs. 4-7, trained and untrained")
    ap.add_argument("--no-rug", action="store_true", help="leave the fitted rug out")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--summarise", metavar="FILE",
                    help="summarise saved rows (.json as --json writes, or .csv); train nothing")
    args = ap.parse_args(argv)
    if args.summarise:
        saved = (pd.read_json(args.summarise) if args.summarise.endswith(".json")
                 else pd.read_csv(args.summarise))
        cells = converged_cells(saved)
        with pd.option_context("display.width", 160, "display.precision", 3):
            print(symmetry_summary(cells).to_string(index=False))
            print(spread_summary(cells).to_string())
            print(lyapunov_summary(cells).to_string())
        return saved.to_dict("records")
    rows: list[dict] = []
    setup = Setup(args.p, args.ratio, args.seed, args.max_steps, args.device, args.precision,
                  args.symmetry, not args.no_rug)
    for n_s in args.n_s:
        new = rung(n_s, setup)
        rows += new
        tt = np.array([r["loss"] / r["theory"] for r in new])
        tr = np.array([r["loss"] / r["rug"] for r in new])
        print(f"n_s {n_s}: {new[0]['train_s']:.0f} s, median stop "
              f"{np.median([r['steps'] for r in new]):.0f}, "
              f"{sum(not r['stopped'] for r in new)} of {len(new)} at the cap; trained/theory "
              f"median {np.median(tt):.3f} [{tt.min():.3f}, {tt.max():.3f}]"
              + ("" if args.no_rug else f", trained/rug median {np.median(tr):.3f} "
                 f"[{tr.min():.3f}, {tr.max():.3f}]"), flush=True)
        if args.symmetry:
            spread = np.array([np.sqrt(r["dvar_nu"]) / r["mean_var_nu"] for r in new])
            print(f"  √ΔVar(ν)/mean Var(ν) median {np.median(spread):.3f} "
                  f"[{spread.min():.3f}, {spread.max():.3f}]; Λ median "
                  f"{np.median([r['lyapunov'] for r in new]):.4f} (untrained "
                  f"{np.median([r['untrained_lyapunov'] for r in new]):.4f})", flush=True)
        if args.json:
            io.write_json(rows, args.json)
    return rows


if __name__ == "__main__":
    main()
