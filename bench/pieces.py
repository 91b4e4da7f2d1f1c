"""Benchmark behind tms.engine.models.MAX_PIECES and tms.engine.optim.ADAM_BLOCK.

Pieces: the engine's time per step with every group computed whole (1 piece) or cut into up
to 2 or 4 pieces of its batch, on a lone model of the fig. 3 shape (n_s 512, n_d 130, p 0.044:
one group, so whole it keeps one worker busy) and on the 8 × 8 grid of bench/throughput.py at
n_s 256 (eight wide groups). Adam: one BatchedAdam step of stacks of 2^16 to 2^20 parameters
on one thread and shared by two worker threads. Medians of repeats.

    .venv/bin/python bench/pieces.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from unittest import mock

import torch

from throughput import grid, run_engine
from tms.engine import models, optim
from tms.engine.threads import WorkerPool, torch_threads

CASES = {"lone model, n_s 512, n_d 130": (512, [(0.044, 130)], 60),
         "8 x 8 grid, n_s 256": (256, grid(256), 8)}


def step_ms(n_s: int, points: list[tuple[float, int]], steps: int) -> float:
    """Wall milliseconds per training step of the stack of ``points`` (p, n_d)."""
    t = time.perf_counter()
    run_engine(n_s, steps, "cpu", points)
    return 1e3 * (time.perf_counter() - t) / steps


def adam_ms(numel: int, workers: int, steps: int = 50) -> float:
    """Wall milliseconds of one BatchedAdam step on ``numel`` parameters (rows of 128),
    shared by ``workers`` threads, each with one intra-op thread."""
    flat = torch.randn(numel // 128, 128)
    grad = torch.randn_like(flat)
    opt = optim.BatchedAdam([flat], torch.full((flat.shape[0],), 1e-3), 1e-7)
    with torch_threads(1), WorkerPool(workers) as pool, \
            mock.patch.object(optim, "ADAM_BLOCK", 1):
        opt.step([flat], [grad], pool)
        t = time.perf_counter()
        for _ in range(steps):
            opt.step([flat], [grad], pool)
    return 1e3 * (time.perf_counter() - t) / steps


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    rows = []
    for name, (n_s, points, steps) in CASES.items():
        ms = {}
        for most in (1, 2, 4):
            with mock.patch.object(models, "MAX_PIECES", most):
                ms[most] = statistics.median(step_ms(n_s, points, steps)
                                             for _ in range(args.repeats))
        rows.append({"case": name, "ms_per_step": ms})
        print(f"{name:>30}: ms per step with at most 1 / 2 / 4 pieces "
              f"{ms[1]:7.2f} / {ms[2]:7.2f} / {ms[4]:7.2f} "
              f"(× {ms[1] / ms[2]:.2f} / {ms[1] / ms[4]:.2f})", flush=True)
    print(f"chosen: MAX_PIECES = {models.MAX_PIECES}, PIECE_FLOPS = {models.PIECE_FLOPS:.0e}")
    adam = []
    for numel in (1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20):
        ms = {n: statistics.median(adam_ms(numel, n) for _ in range(args.repeats))
              for n in (1, 2)}
        adam.append({"parameters": numel, "ms_per_step": ms})
        print(f"Adam, {numel:>8} parameters: ms per step on 1 / 2 threads "
              f"{ms[1]:6.3f} / {ms[2]:6.3f}", flush=True)
    print(f"chosen: ADAM_BLOCK = {optim.ADAM_BLOCK}")
    return {"max_pieces": models.MAX_PIECES, "rows": rows,
            "adam_block": optim.ADAM_BLOCK, "adam": adam}


if __name__ == "__main__":
    main()
