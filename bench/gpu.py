"""Benchmark on CUDA: the GPU path of the engine (tms.engine.train, bucketed) at the authors' scale.

Printed, and returned for bench/results.json, all in one process on one GPU:

1. the fp32 and TF32 matmul peaks (large square matmuls, best of several);
2. on the 8 × 8 grid of bench/throughput.py at n_s 128–2048: the engine and the per-model loop
   (bench/baseline.py) in marginal ms per step (the time of a run of ``2·S`` steps less that of
   ``S`` steps, over S: start-up, initialisation and copies cancel), the engine's share of the
   fp32 peak and its speed-up over the loop;
3. the paper grids (p and ratio both linspace(0.002001, 0.8, 20), one seed, the authors' learning
   rate 3e-3/√n_s): n_s 1024 whole, and n_s 8192 its first chunk within ``--budget-gb``, in
   ms/step, useful TFLOP/s (10·B·n_s·Σn_d per step, bench/throughput.py) and % of the fp32 and
   TF32 peaks, per precision (fp32, tf32, bf16), with the peak GPU memory;
4. bench/precision.py: per precision, the held-out loss of every model of the 8 × 8 grid at
   n_s 256 trained with the authors' schedule against fp32, beside a rounding-level change
   and another seed.

    .venv/bin/python bench/gpu.py [--device cuda] [--json out.json]

Without CUDA it says so and returns nothing.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import baseline
import precision as precision_bench
import throughput
from tms.core import io
from tms.engine import precision as precisions
from tms.engine.grid import StackSpec, plan_chunks
from tms.engine.train import train_grid
from tms.persian_rug.params import n_d_of

PAPER_AXIS = [float(v) for v in np.linspace(0.002001, 0.8, 20)]
BENCH_N_S = [128, 256, 512, 1024, 2048]
#: The paper grids measured: the first whole, the second its first chunk within the budget.
PAPER_N_S = (1024, 8192)
BATCH = throughput.BATCH


def peaks(device: str) -> dict[str, float]:
    """fp32 and TF32 matmul peaks in FLOP/s."""
    out = {}
    for name in ("fp32", "tf32"):
        with precisions.matmul_precision(name, device):
            out[name] = throughput.matmul_peak(device)
    return out


def paper_grid(n_s: int) -> list[tuple[float, int]]:
    """The authors' linspace grid (20 ratios × 20 p) at n_s as (p, n_d) pairs."""
    return [(p, n_d_of(n_s, r)) for r in PAPER_AXIS for p in PAPER_AXIS]


def marginal_ms(run, steps: int, device: str) -> float:
    """Marginal ms per step of ``run(steps)``: (t(2·steps) − t(steps)) / steps, after one
    untimed ``run(steps)``: a first run also pays one-off costs (the allocator's first blocks,
    the libraries' kernel choice), which would otherwise inflate t(steps) alone and flatter the
    difference (2× at n_s 8192 on CPU)."""
    run(steps)
    times = []
    for s in (steps, 2 * steps):
        throughput.sync(device)
        t = time.perf_counter()
        run(s)
        throughput.sync(device)
        times.append(time.perf_counter() - t)
    return 1e3 * (times[1] - times[0]) / steps


def engine_ms(n_s: int, points, device: str, steps: int, precision: str = "fp32") -> float:
    insts = throughput.instances(n_s, points)
    return marginal_ms(lambda s: train_grid(StackSpec(n_s, throughput.fixed(s), device=device,
                                                      precision=precision), insts),
                       steps, device)


def bench_grid(device: str, peak: dict) -> list[dict]:
    """Section 2: engine against the per-model loop on the 8 × 8 grid."""
    rows = []
    for n_s in BENCH_N_S:
        points = throughput.grid(n_s)
        flops = 10.0 * BATCH * n_s * sum(d for _, d in points)
        engine = engine_ms(n_s, points, device, 40)
        loop = marginal_ms(lambda s: baseline.train_sequential(
            n_s, points, 3e-3 / n_s ** 0.5, BATCH, s, device), 20, device)
        row = {"n_s": n_s, "engine_ms": engine, "loop_ms": loop, "engine_over_loop": loop / engine,
               "engine_pct_fp32": 100 * flops / (engine / 1e3) / peak["fp32"]}
        rows.append(row)
        print(f"bench grid n_s {n_s:>5}: engine {engine:8.2f} ms/step "
              f"({row['engine_pct_fp32']:5.1f}% of fp32 peak), loop {loop:8.2f} ms/step, "
              f"engine {row['engine_over_loop']:5.1f}× the loop", flush=True)
    return rows


def bench_paper(device: str, peak: dict, budget_gb: float) -> list[dict]:
    """Section 3: the paper grids at n_s 1024 (whole) and 8192 (first chunk), per precision."""
    rows = []
    for n_s in PAPER_N_S:
        points = paper_grid(n_s)
        insts = throughput.instances(n_s, points)
        chunk = plan_chunks(n_s, insts, throughput.fixed(10), budget_gb * 1024, bucketed=True)[0]
        points = [points[k] for k in chunk]
        flops = 10.0 * BATCH * n_s * sum(d for _, d in points)
        for name in precisions.PRECISIONS:
            torch.cuda.reset_peak_memory_stats(device)
            ms = engine_ms(n_s, points, device, 10, name)
            tflops = flops / (ms / 1e3) / 1e12
            row = {"n_s": n_s, "models": len(points), "of": len(insts), "precision": name,
                   "ms_per_step": ms, "tflops": tflops,
                   "pct_fp32_peak": 100 * tflops * 1e12 / peak["fp32"],
                   "pct_tf32_peak": 100 * tflops * 1e12 / peak["tf32"],
                   "peak_gpu_gb": torch.cuda.max_memory_allocated(device) / 2 ** 30}
            rows.append(row)
            print(f"paper grid n_s {n_s:>5} ({len(points)} of {len(insts)} models) {name}: "
                  f"{ms:8.1f} ms/step, {tflops:6.1f} TFLOP/s = {row['pct_fp32_peak']:5.1f}% "
                  f"of fp32 peak, {row['pct_tf32_peak']:5.1f}% of TF32 peak, peak memory "
                  f"{row['peak_gpu_gb']:.1f} GiB", flush=True)
    return rows


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--budget-gb", type=float, default=60.0,
                    help="GPU memory for one chunk of the n_s 8192 paper grid (default 60)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench/gpu.py: no CUDA device here; nothing measured")
        return {}
    device = args.device
    peak = peaks(device)
    print(f"{torch.cuda.get_device_name(device)}: matmul peak fp32 {peak['fp32'] / 1e12:.1f} "
          f"TFLOP/s, TF32 {peak['tf32'] / 1e12:.1f} TFLOP/s", flush=True)
    res = {"device": torch.cuda.get_device_name(device), "torch": torch.__version__,
           "peak_tflops": {k: v / 1e12 for k, v in peak.items()},
           "bench_grid": bench_grid(device, peak),
           "paper_grids": bench_paper(device, peak, args.budget_gb),
           "precision": precision_bench.compare(device)}
    if args.json:
        io.write_json(res, args.json)
    return res


if __name__ == "__main__":
    main()
