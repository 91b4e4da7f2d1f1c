"""The predicted cost of a profile's trained Persian Rug grids (the pr_train stages) on one GPU,
before running them: time, GPU memory, host memory and disk, one row per n_s.

- GPU memory: the largest stack in training (tms.engine.grid.chunk_bytes on the GPU path, within
  persian_rug.compute.memory_budget_mb); host memory: twice the largest chunk's weights (as
  trained, and as measured); disk: the kept weights, times the copies DVC's cache type makes
  (tms.core.machine.disk_copies: one with this project's linked cache), plus the checkpoints
  (tms.persian_rug.training.ckpt_bytes) when they are on.
  The stages check the same numbers against the machine before they train.
- Time: every chunk runs ``steps`` steps, each taking the longer of :data:`STEP_FLOOR` and its
  useful work (10·batch·n_s·Σn_d FLOPs, tms.engine.grid.grid_flops) at :data:`RATES` of the
  nearest measured n_s. ``steps``: the median stopping step measured at the authors' settings
  (:data:`MEDIAN_STOP`, nearest measured n_s; models stop at different steps, so a chunk's
  work falls as they leave: the median is the typical cost), and the step cap (the bound).

The measured figures are those of one NVIDIA H100 (80 GB), torch 2.11 + CUDA 13, for batched
matmuls over models of equal n_d, the design of the GPU path (docs/benchmarks.md, "On one
H100"); `make bench` on a GPU measures this engine itself (bench/gpu.py).

    python -m tms.pipeline.forecast [PROFILE]     # default: params.yaml; or paper, gpu
"""

from __future__ import annotations

import pandas as pd

from tms.engine.grid import Instance, Schedule, chunk_bytes, grid_flops, plan_chunks
from tms.persian_rug import training, weights
from tms.persian_rug.params import PersianRug

#: Useful FLOP/s of batched training on one H100, by precision and n_s (the authors' grid at
#: n_s 1024: 68 ms a step in fp32, 42 ms in TF32; one 60-model chunk of it at n_s 8192).
RATES = {"fp32": {1024: 25e12, 8192: 36e12}, "tf32": {1024: 41e12, 8192: 75e12},
         "bf16": {8192: 79e12}}
#: The shortest step of a stack, however small (s): n_s 128 and 512, 400 models, one H100.
STEP_FLOOR = 6.5e-3
#: The median step at which the stopping rule fired at the authors' settings (lr 3e-3/√n_s,
#: eps 1e-7, batch 1024, window 200, checks every 30 steps): 100 models at n_s 1024, 15 at 8192.
MEDIAN_STOP = {1024: 2490, 8192: 4680}
GiB = 2 ** 30

COLUMNS = {
    "n_s": "features",
    "models": "models trained (p × ratio × seeds × models)",
    "sum_n_d": "Σn_d, the hidden rows of the grid",
    "tflop_per_step": "useful work of one step of the whole grid (TFLOP)",
    "chunks": "stacks trained one after another (the memory budget)",
    "minutes_median": "predicted time at the median stopping step (min)",
    "minutes_cap": "predicted time if every model ran to the step cap (min)",
    "gpu_gib": "GPU memory of the largest stack (GiB)",
    "host_gib": "host memory of the largest chunk's weights, twice (GiB)",
    "kept_gib": "weights kept on disk (GiB)",
    "disk_gib": "disk: kept weights (twice where DVC's cache copies), and the checkpoints (GiB)",
}


def _nearest(table: dict[int, float], n_s: int) -> float:
    return table[min(table, key=lambda k: abs(k - n_s))]


def grid_cost(pr: PersianRug, n_s: int, copies: int = 1) -> dict:
    """The row of :data:`COLUMNS` for the trained grid of ``n_s`` of ``pr`` (the
    persian_rug section), with ``copies`` copies of each output on disk (1: DVC links its cache;
    2: it copies). Raises ValueError if n_s is not one of its grid's."""
    grid = pr.grid.at(n_s)
    sched = Schedule.of(pr.train)
    points = training.expand(n_s, grid.p, grid.ratio, grid.seeds)     # trained once per model
    insts = [Instance(pt.p, pt.n_d, pt.instance, 1.0, pt.seed_index) for pt in points]
    chunks = plan_chunks(n_s, insts, sched, pr.compute.memory_budget_mb, bucketed=True)
    kept = [pt for pt in points if grid.keeps(pt.p, pt.ratio_target)] * len(grid.models)
    rate = _nearest(RATES[pr.compute.precision], n_s)

    def minutes(steps: int) -> float:
        return len(grid.models) * sum(
            max(STEP_FLOOR * steps,
                grid_flops(n_s, [insts[k] for k in c], Schedule(sched.batch_size, 0, 1, 1, steps))
                / rate) for c in chunks) / 60

    scratch = (training.ckpt_bytes(n_s, insts, chunks, kept, sched)
               if pr.train.checkpoint_every else 0)
    return {
        "n_s": n_s, "models": len(points) * len(grid.models),
        "sum_n_d": sum(pt.n_d for pt in points) * len(grid.models),
        "tflop_per_step": grid_flops(n_s, insts, Schedule(sched.batch_size, 0, 1, 1, 1))
        * len(grid.models) / 1e12,
        "chunks": len(chunks) * len(grid.models),
        "minutes_median": minutes(min(_nearest(MEDIAN_STOP, n_s), sched.max_steps)),
        "minutes_cap": minutes(sched.max_steps),
        "gpu_gib": max(chunk_bytes(n_s, insts, c, sched, bucketed=True) for c in chunks) / GiB,
        "host_gib": 2 * max(weights.nbytes(n_s, [insts[k].n_d for k in c]) for c in chunks) / GiB,
        "kept_gib": weights.nbytes(n_s, [pt.n_d for pt in kept]) / GiB,
        "disk_gib": (copies * weights.nbytes(n_s, [pt.n_d for pt in kept]) + scratch) / GiB,
    }


def forecast(pr: PersianRug, copies: int = 1) -> pd.DataFrame:
    """:func:`grid_cost` of every n_s of the grid, one row each (:data:`COLUMNS`)."""
    return pd.DataFrame([grid_cost(pr, n_s, copies) for n_s in pr.grid.n_s],
                        columns=list(COLUMNS))
