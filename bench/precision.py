"""Benchmark: what ``compute.precision`` does to the trained models, on any device.

On the 8 × 8 grid of bench/throughput.py at n_s 256, trained with the authors' schedule
(learning rate 3e-3/√n_s, batch 1024, Adam eps 1e-7, the stopping rule with window 200 checked
every 30 steps, at most 5,000 steps), the held-out loss of every model (65,536 fixed vectors,
tms.engine.train.heldout_loss) under each precision the device has (fp32 and bf16; on CUDA also
tf32), all on the GPU path (tms.engine.train, bucketed), against fp32 there: the median and the
largest relative difference |L − L_fp32| / L_fp32 over the 64 models (and at which p and n_d),
how many models differ by less than 10⁻³, and the median stopping step. Two references say how
large a difference is:

- ``rounding``: fp32 on the engine's other path (not bucketed, on the same device: the same
  arithmetic summed in another order): how far a rounding-level change carries after thousands
  of steps;
- ``seed``: fp32 with other initialisation and data seeds: the spread between two runs of the
  same experiment.

    .venv/bin/python bench/precision.py [--device cpu] [--json out.json]

About 30 minutes on a 2-core CPU with bfloat16 units (an Intel Xeon with AMX).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

import throughput
from tms.core import io
from tms.engine import precision as precisions
from tms.engine.grid import StackSpec
from tms.engine.train import heldout_loss, stack_of, train_grid

N_S = 256
SCHEDULE = throughput.authors(max_steps=5000)
EVAL_SEED, N_EVAL = 20240601, 65536


def runs(device: str) -> dict[str, dict]:
    """The runs compared: name → train_grid arguments (precision, path, seed)."""
    named = {name: {"precision": name, "bucketed": True, "seed": 0}
             for name in precisions.PRECISIONS
             if name != "tf32" or torch.device(device).type == "cuda"}
    named["rounding"] = {"precision": "fp32", "bucketed": False, "seed": 0}
    named["seed"] = {"precision": "fp32", "bucketed": True, "seed": 1000}
    return named


def compare(device: str) -> list[dict]:
    """Train every run of :func:`runs` and compare each one's held-out losses with fp32's:
    one row per run, in that order (fp32's own row is all zeros)."""
    points = throughput.grid(N_S)
    p = torch.tensor([q for q, _ in points], device=device)
    losses, steps = {}, {}
    for name, run in runs(device).items():
        start = time.perf_counter()
        spec = StackSpec(N_S, SCHEDULE, device=device, precision=run["precision"],
                         bucketed=run["bucketed"])
        res = train_grid(spec, throughput.instances(N_S, points, run["seed"]))
        losses[name] = heldout_loss(stack_of(res, N_S, True, device), p, EVAL_SEED, N_EVAL)
        steps[name] = statistics.median(r.steps for r in res)
        print(f"trained {name} ({run}) in {time.perf_counter() - start:.0f} s", flush=True)
    rows = []
    for name in losses:
        rel = np.abs(losses[name] / losses["fp32"] - 1)
        at_p, at_n_d = points[int(np.argmax(rel))]
        rows.append({"run": name, "n_s": N_S, "models": len(rel),
                     "median_rel_diff": float(np.median(rel)), "max_rel_diff": float(rel.max()),
                     "largest_at": {"p": at_p, "n_d": at_n_d},
                     "below_1e-3": int(np.sum(rel < 1e-3)), "median_steps": steps[name],
                     "losses": losses[name].tolist()})
        print(f"held-out loss, {name:>8} against fp32 at n_s {N_S} ({len(rel)} models): median "
              f"|ΔL|/L {rows[-1]['median_rel_diff']:.2e}, largest {rows[-1]['max_rel_diff']:.2e}"
              f" (p {at_p:.3g}, n_d {at_n_d}), {rows[-1]['below_1e-3']} below 1e-3;"
              f" median stopping step {steps[name]:.0f}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    rows = compare(args.device)
    if args.json:
        io.write_json(rows, args.json)
    return rows


if __name__ == "__main__":
    main()
