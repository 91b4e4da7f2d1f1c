"""Measurement: the Persian Rug n_s ladder, trained models against the theory and the rug.

On 5 p × 6 ratios of the authors' linspace grid (p 0.044–0.338, ratio 0.044–0.254), at each
n_s of the ladder, trained with the authors' schedule (learning rate 3e-3/√n_s, batch 1024, Adam
eps 1e-7, the stopping rule with window 200 checked every 30 steps, ``--max-steps`` at most):
each model's held-out loss (16,384 fixed vectors, tms.engine.train.heldout_loss) beside the
optimal symmetric theory (tms.persian_rug.theory.optimal_symmetric), the fitted Persian rug
(tms.persian_rug.rug.rug_losses) and the best linear map, one row per model, written as JSON and
summarised per n_s (median and range of trained/theory and trained/rug). It asks how the gap
between trained models and the theory moves with n_s (docs/benchmarks.md, "On one H200").

    .venv/bin/python bench/ladder.py --device cuda --n-s 128 256 512 1024 --json out.json
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import throughput
from tms.core import io
from tms.engine.grid import StackSpec
from tms.engine.train import heldout_loss, stack_of, train_grid
from tms.persian_rug import rug, theory
from tms.persian_rug.params import n_d_of

P = [0.044, 0.086, 0.17, 0.254, 0.338]
RATIOS = [0.044, 0.086, 0.128, 0.17, 0.212, 0.254]
EVAL_SEED, N_EVAL = 20240601, 16384


def rung(n_s: int, p: list[float], ratios: list[float], seed: int, max_steps: int, device: str,
         precision: str) -> list[dict]:
    """Train and score the grid ``p`` × ``ratios`` at one n_s: one row per model."""
    pts = [(q, n_d_of(n_s, r), r) for r in ratios for q in p]
    insts = throughput.instances(n_s, [(q, d) for q, d, _ in pts], seed)
    start = time.perf_counter()
    res = train_grid(StackSpec(n_s, throughput.authors(max_steps), device=device,
                               precision=precision), insts)
    seconds = time.perf_counter() - start
    p_t = torch.tensor([q for q, _, _ in pts], device=device)
    loss = heldout_loss(stack_of(res, n_s, True, device), p_t, EVAL_SEED, N_EVAL)
    fitted = rug.rug_losses(n_s, sorted({d for _, d, _ in pts}), p, 0, 7, EVAL_SEED,
                            max(64, 4_000_000 // n_s), N_EVAL, device=device)
    rug_loss = {(int(d), float(q)): float(v) for d, q, v in zip(fitted.n_d, fitted.p, fitted.loss)}
    return [{"n_s": n_s, "p": q, "ratio_target": r, "n_d": d, "seed": seed,
             "precision": precision, "loss": float(lo),
             "theory": theory.optimal_symmetric(q, d / n_s)["loss"], "rug": rug_loss[(d, q)],
             "linear": float(theory.optimal_linear_loss(q, d / n_s)), "steps": x.steps,
             "stopped": x.stopped, "diverged": x.diverged, "train_s": seconds}
            for (q, d, r), lo, x in zip(pts, loss, res)]


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--n-s", type=int, nargs="+", default=[128, 256, 512, 1024])
    ap.add_argument("--p", type=float, nargs="+", default=P)
    ap.add_argument("--ratio", type=float, nargs="+", default=RATIOS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-steps", type=int, default=8000)
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    rows: list[dict] = []
    for n_s in args.n_s:
        new = rung(n_s, args.p, args.ratio, args.seed, args.max_steps, args.device,
                   args.precision)
        rows += new
        tt = np.array([r["loss"] / r["theory"] for r in new])
        tr = np.array([r["loss"] / r["rug"] for r in new])
        print(f"n_s {n_s}: {new[0]['train_s']:.0f} s, median stop "
              f"{np.median([r['steps'] for r in new]):.0f}, "
              f"{sum(not r['stopped'] for r in new)} of {len(new)} at the cap; trained/theory "
              f"median {np.median(tt):.3f} [{tt.min():.3f}, {tt.max():.3f}], trained/rug median "
              f"{np.median(tr):.3f} [{tr.min():.3f}, {tr.max():.3f}]", flush=True)
        if args.json:
            io.write_json(rows, args.json)
    return rows


if __name__ == "__main__":
    main()
