"""Benchmark behind tms.engine.models.sparse_pays: one training step
(tms.engine.models.loss_and_grads) of one group of equal inputs, its W_in x and ∂hᵀ x dense or
through x as a sparse (CSR) matrix, on one thread. The groups are those of the 8 × 8 grid of
bench/throughput.py (8 ratios: total width Σ n_d) at several n_s, for the small p of that grid.
Medians of repeats; a ratio above 1 means the sparse products pay; the last column is the
engine's choice.

    .venv/bin/python bench/sparse_input.py [--n-s 128 256 512 1024] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from unittest import mock

import torch

from throughput import BATCH, P_VALUES, grid
from tms.engine import models, sampler
from tms.engine.models import init_ragged, loss_and_grads
from tms.engine.threads import torch_threads


def group_n_d(n_s: int) -> list[int]:
    """The hidden widths of one group of the grid: one model per ratio."""
    return [d for q, d in grid(n_s) if q == P_VALUES[0]]


def step_ms(n_s: int, p: float, sparse: bool, repeats: int) -> float:
    """Median milliseconds of one loss-and-gradients step of the group of p (8 models)."""
    n_d = group_n_d(n_s)
    model = init_ragged(n_s, n_d, sampler.generators(range(len(n_d))))
    grad, loss = torch.empty_like(model.flat), torch.empty(len(n_d))
    x = sampler.sparse_from_uniform(torch.rand(BATCH, n_s,
                                               generator=torch.Generator().manual_seed(0)), p)

    def step():
        loss_and_grads(model, [(0, len(n_d))], lambda g, rows, out: out.copy_(x[rows]),
                       BATCH, grad, loss, density=[p])

    with mock.patch.object(models, "sparse_pays", lambda width, q: sparse):
        step()
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            step()
            times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n-s", type=int, nargs="+", default=[128, 256, 512, 1024])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    rows = []
    with torch_threads(1):
        for n_s in args.n_s:
            width = sum(group_n_d(n_s))
            for p in [q for q in P_VALUES if q < 0.1]:
                dense, sparse = (step_ms(n_s, p, s, args.repeats) for s in (False, True))
                pays = models.sparse_pays(width, p)
                rows.append({"n_s": n_s, "width": width, "p": p, "dense_ms": dense,
                             "sparse_ms": sparse, "engine_sparse": pays})
                print(f"n_s {n_s:>5}, width {width:>5}, p {p:.3f}: step {dense:8.2f} ms dense, "
                      f"{sparse:8.2f} ms sparse (× {dense / sparse:.2f}); the engine: "
                      f"{'sparse' if pays else 'dense'}", flush=True)
    return {"rows": rows}


if __name__ == "__main__":
    main()
