"""Benchmark behind tms.models.MAX_PIECES: the engine's time per step with every group
computed whole (1 piece) or cut into up to 2 or 4 pieces of its batch, on a lone model of the
fig. 3 shape (n_s 512, n_d 130, p 0.044: one group, so whole it keeps one worker busy) and on
the 8 × 8 grid of bench/throughput.py at n_s 256 (eight wide groups). Medians of repeats.

    .venv/bin/python bench/pieces.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from unittest import mock

from throughput import grid, run_engine
from tms import models

CASES = {"lone model, n_s 512, n_d 130": (512, [(0.044, 130)], 60),
         "8 x 8 grid, n_s 256": (256, grid(256), 8)}


def step_ms(n_s: int, points: list[tuple[float, int]], steps: int) -> float:
    """Wall milliseconds per training step of the stack of ``points`` (p, n_d)."""
    t = time.perf_counter()
    run_engine(n_s, steps, "cpu", points)
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
    return {"max_pieces": models.MAX_PIECES, "rows": rows}


if __name__ == "__main__":
    main()
