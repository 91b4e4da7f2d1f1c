"""Benchmark: the engine's useful throughput against the machine's fp32 matmul peak and against
a plain per-model training loop (bench/baseline.py), on the Persian rug grid at several n_s.

Useful work is counted explicitly, unpadded: per instance and step, the forward W_in x and
W_out h and the three backward products ∂W_out = dzᵀh, ∂h = dz W_out and ∂W_in = ∂hᵀx, five
products of 2·B·n_s·n_d FLOPs each: 10·B·n_s·n_d per instance-step (the customary 6 ·
parameters · vectors count, 12·B·n_s·n_d, also counts ∂x, which nobody needs; it would read
1.2× higher). The baseline does the same five products, so the ratio is a pure time ratio.
Padding, sampling, loss and Adam are not counted as useful work.

Every repeat measures, back to back in this process: the matmul peak (large square fp32
matmul, best of several, torch's thread count), the engine (tms.engine.train.train_grid, stopping
rule off, a fixed step count) and the per-model loop on the same grid and step count, with
torch's thread count and with one thread (its best is the fair baseline: on a loaded
machine a loop of small multi-threaded operations waits at every barrier). Medians over
repeats are printed. Peak memory is measured per run in a fresh subprocess on CPU (its peak resident set
less that of a subprocess that only imported), by torch.cuda.max_memory_allocated on CUDA.

    .venv/bin/python bench/throughput.py [--n-s 128 256 512] [--repeats 3] [--device cpu]
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

import baseline
from tms.core import io
from tms.engine.grid import Instance, Schedule, StackSpec
from tms.engine.threads import torch_threads
from tms.engine.train import train_grid
from tms.persian_rug.params import n_d_of

P_VALUES = [float(p) for p in np.geomspace(0.01, 0.6, 8)]
RATIOS = [float(r) for r in np.linspace(0.05, 0.8, 8)]
BATCH = 1024
STEPS = {128: 20, 256: 8, 512: 4, 1024: 2}


def grid(n_s: int) -> list[tuple[float, int]]:
    """The 8 × 8 grid (ratio × p) as (p, n_d) pairs."""
    return [(p, n_d_of(n_s, r)) for r in RATIOS for p in P_VALUES]


def instances(n_s: int, points: list[tuple[float, int]], seed: int = 0) -> list[Instance]:
    """``points`` (p, n_d) as instances with the authors' learning rate 3e-3/√n_s, init seeds
    seed, seed + 1, … and one seed index: every point on data stream ``seed``, as
    tms.persian_rug.training.train_and_score does."""
    return [Instance(p, d, seed + k, 3e-3 / n_s ** 0.5, seed) for k, (p, d) in enumerate(points)]


def fixed(steps: int) -> Schedule:
    """``steps`` steps, the stopping rule off (it needs more than 2·window losses)."""
    return Schedule(BATCH, 1e-7, window=steps, check_every=steps, max_steps=steps)


def authors(max_steps: int) -> Schedule:
    """The authors' schedule (batch 1024, Adam eps 1e-7, the stopping rule with window 200 checked
    every 30 steps), at most ``max_steps`` steps."""
    return Schedule(BATCH, 1e-7, window=200, check_every=30, max_steps=max_steps)


def useful_flops(n_s: int, steps: int) -> float:
    """10·B·n_s·n_d per instance and step, summed over the grid (real n_d, no padding)."""
    return 10.0 * BATCH * n_s * sum(d for _, d in grid(n_s)) * steps


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def matmul_peak(device: str, reps: int = 5) -> float:
    """FLOP/s of the best of ``reps`` large square fp32 matmuls."""
    n = 8192 if device.startswith("cuda") else 2048
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    c = torch.empty(n, n, device=device)
    torch.mm(a, b, out=c)
    best = float("inf")
    for _ in range(reps):
        sync(device)
        t = time.perf_counter()
        torch.mm(a, b, out=c)
        sync(device)
        best = min(best, time.perf_counter() - t)
    return 2.0 * n ** 3 / best


def run_engine(n_s: int, steps: int, device: str,
               points: list[tuple[float, int]] | None = None) -> None:
    """Train ``points`` (p, n_d) (default: the grid) for ``steps`` steps with the engine."""
    train_grid(StackSpec(n_s, fixed(steps), device=device),
               instances(n_s, grid(n_s) if points is None else points))


def run_loop(n_s: int, steps: int, device: str) -> None:
    baseline.train_sequential(n_s, grid(n_s), 3e-3 / n_s ** 0.5, BATCH, steps, device)


RUNNERS = {"engine": run_engine, "loop": run_loop}


def timed(kind: str, n_s: int, steps: int, device: str) -> float:
    sync(device)
    t = time.perf_counter()
    RUNNERS[kind](n_s, steps, device)
    sync(device)
    return time.perf_counter() - t


def peak_memory_mb(kind: str, n_s: int, steps: int, device: str) -> float:
    """Peak memory of one run in MiB: CUDA allocator peak, or on CPU the resident-set peak
    of a fresh subprocess that ran it less that of one that only imported (torch itself)."""
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats(device)
        RUNNERS[kind](n_s, steps, device)
        return torch.cuda.max_memory_allocated(device) / 2 ** 20
    out = subprocess.run([sys.executable, __file__, "--memory-of", kind, str(n_s), str(steps),
                          "--device", device, "--threads", str(torch.get_num_threads())],
                         check=True, capture_output=True, text=True)
    return float(out.stdout.split()[-1]) - _idle_mb(device)


@functools.lru_cache
def _idle_mb(device: str) -> float:
    """Peak resident set (MiB) of a subprocess that only imported (torch itself)."""
    idle = subprocess.run([sys.executable, __file__, "--memory-of", "none", "0", "0",
                           "--device", device], check=True, capture_output=True, text=True)
    return float(idle.stdout.split()[-1])


def memory_child(kind: str, n_s: int, steps: int, device: str) -> None:
    """Run once and print the process's peak resident set in MiB: VmHWM of /proc (reset by
    exec, unlike getrusage's ru_maxrss, which a child inherits from a larger parent), else
    ru_maxrss."""
    if kind != "none":
        RUNNERS[kind](n_s, steps, device)
    status = Path("/proc/self/status")
    if status.exists():
        hwm = [line for line in status.read_text().splitlines() if line.startswith("VmHWM:")]
        print(int(hwm[0].split()[1]) / 1024)                             # kB
    else:
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)  # KiB on Linux


def measure(n_s_list: list[int], repeats: int, device: str) -> dict:
    """Run the benchmark; returns the results as a JSON-ready dict (also printed)."""
    load = os.getloadavg()
    print(f"device {device}, torch threads {torch.get_num_threads()}, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"grid: 8 p × 8 ratio, batch {BATCH}; useful FLOPs = 10·B·n_s·n_d per instance-step (5 products)")
    rows = []
    for n_s in n_s_list:
        steps = STEPS.get(n_s, 4)
        flops = useful_flops(n_s, steps)
        reps = []
        for _ in range(repeats):
            peak = matmul_peak(device)
            t_engine = timed("engine", n_s, steps, device)
            t_loop = timed("loop", n_s, steps, device)
            with torch_threads(1):                # the loop may do better on one thread
                t_loop1 = timed("loop", n_s, steps, device)
            best = min(t_loop, t_loop1)
            reps.append({"peak_gflops": peak / 1e9, "engine_s": t_engine, "loop_s": t_loop,
                         "loop_1thread_s": t_loop1,
                         "engine_pct_of_peak": 100 * flops / t_engine / peak,
                         "loop_pct_of_peak": 100 * flops / best / peak,
                         "engine_over_loop": t_loop / t_engine,
                         "engine_over_best_loop": best / t_engine,
                         "load_1min_after": os.getloadavg()[0]})
        row = {"n_s": n_s, "steps": steps, "instances": len(grid(n_s)),
               "useful_gflop": flops / 1e9, "repeats": reps}
        for key in reps[0]:
            row[key] = statistics.median(r[key] for r in reps)
        row["engine_peak_mb"] = peak_memory_mb("engine", n_s, 2, device)   # all buffers
        row["loop_peak_mb"] = peak_memory_mb("loop", n_s, 2, device)       # exist by step 2
        rows.append(row)
        print(f"n_s {n_s:>5}: peak {row['peak_gflops']:6.1f} GFLOP/s | engine "
              f"{row['engine_s']:7.2f} s {row['engine_pct_of_peak']:5.1f}% of peak, "
              f"{row['engine_peak_mb']:7.1f} MiB | loop {row['loop_s']:7.2f} s, one thread "
              f"{row['loop_1thread_s']:7.2f} s, best {row['loop_pct_of_peak']:5.1f}% of peak, "
              f"{row['loop_peak_mb']:7.1f} MiB | engine {row['engine_over_loop']:.2f}× the loop, "
              f"{row['engine_over_best_loop']:.2f}× its best (medians of {repeats})", flush=True)
    return {"device": device, "torch_threads": torch.get_num_threads(),
            "load_average_at_start": load, "batch": BATCH, "p": P_VALUES, "ratio": RATIOS,
            "rows": rows}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n-s", type=int, nargs="+", default=[128, 256, 512])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default=os.environ.get("TMS_DEVICE", "cpu"))
    ap.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's)")
    ap.add_argument("--memory-of", nargs=3, metavar=("KIND", "N_S", "STEPS"))
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.memory_of:
        kind, n_s, steps = args.memory_of
        memory_child(kind, int(n_s), int(steps), args.device)
        return {}
    res = measure(args.n_s, args.repeats, args.device)
    if args.json:
        io.write_json(res, args.json)
    return res


if __name__ == "__main__":
    main()
