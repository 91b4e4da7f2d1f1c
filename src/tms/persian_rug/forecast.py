"""The predicted cost of a profile's trained Persian Rug models (the pr_train stages, pr_fig3
and the convergence checks that retrain some of their models) before running them: time, memory
and disk, one row per stage.

- GPU memory: the largest stack in training (tms.engine.grid.chunk_bytes on the GPU path, within
  persian_rug.compute.memory_budget_mb); host memory: twice the largest chunk's weights (as
  trained, and as measured); disk: the kept weights, times the copies DVC's cache type makes
  (tms.core.machine.disk_copies: one with this project's linked cache), plus the checkpoints
  (tms.persian_rug.training.ckpt_bytes) when they are on.
  The stages check the same numbers against the machine before they train.
- Time: every chunk runs ``steps`` steps, each its useful work (10·batch·n_s·Σn_d FLOPs,
  tms.engine.grid.grid_flops) at a rate (useful FLOP/s) **measured on this machine**
  (:func:`measured_rate`: the stage's own engine trains its largest stack, on a CPU a piece of
  it, for a few steps on the profile's device), or, for a machine one does not have, at
  :data:`RATES` of one NVIDIA H100 plus its launch time per width (:data:`LAUNCH_PER_WIDTH`).
  ``steps``: the median stopping step measured for the profile's stopping-rule window and
  learning rate (:func:`median_stop`; models stop at different steps, so a chunk's work falls
  as they leave: the median is the typical cost), and the step cap (the bound).

The H100 figures: torch 2.11 + CUDA 13, batched matmuls over models of equal n_d, the design
of the GPU path (docs/benchmarks.md, "On one H100"); `make bench` on a GPU measures this
engine itself (bench/gpu.py).

    python -m tms.pipeline.forecast [PROFILE] [--h100]   # default: params.yaml, measured here
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import torch

from tms.core import machine, rates
from tms.core.machine import GiB
from tms.engine.grid import (
    Instance,
    Schedule,
    StackSpec,
    chunk_bytes,
    grid_flops,
    plan_chunks,
    stack_order,
)
from tms.engine.precision import gpu_path
from tms.engine.train import train_chunk
from tms.persian_rug import ends, training, weights
from tms.persian_rug.converge import long_steps
from tms.persian_rug.params import PersianRug

#: Useful FLOP/s of batched training on one H100 beside its launches (:data:`LAUNCH_PER_WIDTH`),
#: by precision and n_s: the authors' grid at n_s 1024 (1.72 TFLOP a step) took 68 ms a step in
#: fp32 and 42 ms in TF32, 61.5 and 35.5 ms past the launches of its 20 widths; one 60-model
#: chunk of it at n_s 8192 (36, 75 and 79 TFLOP/s in all, the launches a few per cent).
RATES = {"fp32": {1024: 28e12, 8192: 36e12}, "tf32": {1024: 48.5e12, 8192: 75e12},
         "bf16": {8192: 79e12}}
#: The launch time of a step per hidden width n_d in the stack (s; the GPU path runs one batched
#: product per width), added to its work at :data:`RATES`: 6.5 ms for the 400 models of the
#: authors' grid at n_s 128 and 512 (20 widths), 1.8–2.2 ms for the 30 of the cpu-paper grid at
#: n_s 128–512 (6 widths; docs/measurements/fixed-steps-h100-times.json), one H100. Where the
#: two are alike the sum over-predicts by up to a quarter (the cpu-paper grid at n_s 512 and
#: 1024: 2.4 and 3.7 ms against 1.9 and 3.4 measured).
LAUNCH_PER_WIDTH = 6.5e-3 / 20
#: The median step at which the stopping rule fired, per (window, learning-rate scale lr·√n_s)
#: and n_s, at the authors' settings otherwise (eps 1e-7, batch 1024, checks every 30 steps).
#: Window 200 and the authors' 3e-3/√n_s: one H200, 30 models of 5 p × 6 ratios per n_s
#: (docs/measurements/ladder-h200.csv, seed 0, 8,000-step cap), and 15 models of the paper's
#: grid at n_s 8192. Window 2000: the cpu-paper grid on two CPU cores, 32,000-step cap, at n_s
#: 256 (24 of 30 models stopped by the rule); at n_s 512 only half stopped by the cap, so its
#: median is not known (docs/benchmarks.md, "A longer window"). Window 200 at 0.01/√n_s (3.3× the
#: authors'): the default profile's grids, 72 models of 6 p × 6 ratios × 2 seeds per n_s,
#: 5,000-step cap (results/default); and its fig. 3 model (lr 3e-4 at n_s 512: one model's stop,
#: taken for any n_s up to 512 at that scale). A grid of other p and ratios stops elsewhere: the
#: default's grid at the authors' rate is not measured. Scales match within 0.1%.
MEDIAN_STOP = {(200, 0.003): {128: 4320, 256: 4935, 512: 4530, 1024: 2445, 2048: 2715,
                              4096: 3345, 8192: 4680},
               (2000, 0.003): {256: 26700},
               (200, 0.01): {64: 2025, 128: 2640},
               (200, 0.00679): {512: 4950}}            # 3e-4·√512
#: :func:`measured_rate` times at most this much work a step (FLOPs) on a CPU: a piece of a large
#: stack, whose rate per FLOP is the whole stack's there. On a GPU a piece runs far below the
#: stack's rate (its steps are launch-bound), so the stack is timed whole: the authors' grid at
#: n_s 1024 (400 models, 1.72 TFLOP a step) measured 6.1 TFLOP/s on a 20 GFLOP piece, and trained
#: at 43 (one H200, TF32, docs/benchmarks.md).
MEASURE_FLOPS = 2e10

COLUMNS = {
    "stage": "the DVC stage",
    "n_s": "features",
    "models": "models trained (p × ratio × seeds × models)",
    "sum_n_d": "Σn_d, the hidden rows of the grid",
    "tflop_per_step": "useful work of one step of the whole grid (TFLOP)",
    "chunks": "stacks trained one after another (the memory budget)",
    "gflop_s": "useful GFLOP/s a step (measured here, or the H100's)",
    "minutes_median": "predicted time at the median stopping step (min)",
    "minutes_cap": "predicted time if every model ran to the step cap (min)",
    "gpu_gib": "memory of the largest stack in training, on its device (GiB)",
    "host_gib": "host memory of the largest chunk's weights, twice (four times where the "
                "states are kept) (GiB)",
    "kept_gib": "weights kept on disk, with the states the convergence check resumes from "
                "(tms.persian_rug.ends) (GiB)",
    "disk_gib": "disk: kept weights (twice where DVC's cache copies), and the checkpoints (GiB)",
}


def _nearest(table: dict[int, float], n_s: int) -> float:
    return table[min(table, key=lambda k: abs(k - n_s))]


def median_stop(sched: Schedule, n_s: int, lr: float) -> int:
    """The typical step at which the stopping rule stops a model of ``sched`` at ``n_s`` trained
    at ``lr``: :data:`MEDIAN_STOP` of its window and learning-rate scale lr·√n_s at the nearest
    measured n_s, at most its step cap; the cap for a window and scale never measured, or an n_s
    above the largest measured with them (a larger n_s, whose learning rate is smaller, may stop
    later: its typical cost is unknown, the forecast gives the bound)."""
    scale = lr * math.sqrt(n_s)
    table = next((t for (window, s), t in MEDIAN_STOP.items()
                  if window == sched.window and math.isclose(s, scale, rel_tol=1e-3)), None)
    if table is None or n_s > max(table):
        return sched.max_steps
    return int(min(_nearest(table, n_s), sched.max_steps))


def _fig3_training(pr: PersianRug) -> tuple[Schedule, float]:
    """The schedule and learning rate the fig. 3 models train with (stage pr_fig3): fig3's
    max_steps and lr where set, else the train section's."""
    f3 = pr.fig3
    return (Schedule.of(pr.train, f3.max_steps),
            f3.lr if f3.lr is not None else pr.train.lr_for(f3.n_s))


def step_flops(n_s: int, insts: list[Instance], sched: Schedule) -> float:
    """The useful work of one training step of ``insts`` (FLOPs): tms.engine.grid.grid_flops
    of a single step."""
    return grid_flops(n_s, insts, dataclasses.replace(sched, max_steps=1))


def measured_piece(n_s: int, insts: list[Instance], sched: Schedule, chunk: list[int],
                   device: str) -> tuple[list[Instance], float]:
    """The models of the stack ``chunk`` of ``insts`` that :func:`measured_rate` times, in stack
    order, and their useful work a step (:func:`step_flops`): on a CPU its first
    models up to :data:`MEASURE_FLOPS` (at least one), on any other device the whole stack."""
    order = [chunk[k] for k in stack_order([insts[k] for k in chunk])]
    limit = MEASURE_FLOPS if torch.device(device).type == "cpu" else math.inf
    piece, flops = [], 0.0
    for k in order:
        step = step_flops(n_s, [insts[k]], sched)
        if piece and flops + step > limit:
            break
        piece.append(insts[k])
        flops += step
    return piece, flops


def measured_rate(n_s: int, insts: list[Instance], sched: Schedule, chunk: list[int],
                  device: str, precision: str) -> float:
    """Useful FLOP/s of training the stack ``chunk`` of ``insts`` (n_s features, ``sched``) on
    ``device`` in ``precision``, measured (tms.core.rates.seconds_per_step) on
    :func:`measured_piece` of it: the engine's own tms.engine.train.train_chunk, nothing
    stopping within the steps timed."""
    piece, flops = measured_piece(n_s, insts, sched, chunk, device)
    spec = StackSpec(n_s, sched, device=device, precision=precision,
                     bucketed=gpu_path(device, precision), label="measuring ")

    def run(steps: int) -> None:
        train_chunk(dataclasses.replace(spec, sched=dataclasses.replace(
            sched, max_steps=steps, check_every=steps + 1)), piece)
    return flops / max(rates.seconds_per_step(run), 1e-9)


def grid_cost(pr: PersianRug, n_s: int, copies: int = 1, device: str | None = None,
              fig3: bool = False) -> dict:
    """The row of :data:`COLUMNS` for the trained grid of ``n_s`` of ``pr`` (the persian_rug
    section), or with ``fig3`` for its fig. 3 models (n_s is then fig3.n_s), with ``copies``
    copies of each output on disk (1: DVC links its cache; 2: it copies). ``device``: measure
    the rate there (:func:`measured_rate`, seconds); None: the H100's :data:`RATES`. Raises
    ValueError if n_s is not one of its grid's."""
    if fig3:
        f3 = pr.fig3
        n_s, models, keeps = f3.n_s, ["relu"], (lambda p, r: True)
        sched, lr = _fig3_training(pr)
        points = [training.Point(k, f3.p, f3.n_d / n_s, f3.n_d, k) for k in range(f3.seeds)]
        stage = "pr_fig3"
    else:
        grid = pr.grid.at(n_s)
        models, keeps, sched = grid.models, grid.keeps, Schedule.of(pr.train)
        lr, points = pr.train.lr_for(n_s), training.expand(n_s, grid.p, grid.ratio, grid.seeds)
        stage = f"pr_train@{n_s}"
    insts = training.instances(points, pr.train.seed, lr)
    precision = pr.compute.precision
    bucketed = gpu_path(device or "cuda", precision)
    chunks = plan_chunks(n_s, insts, sched, pr.compute.memory_budget_mb, bucketed=bucketed)
    kept = [pt for pt in points if keeps(pt.p, pt.ratio_target)] * len(models)
    largest = max(chunks, key=lambda c: sum(insts[k].n_d for k in c))
    rate = (_nearest(RATES[precision], n_s) if device is None else
            measured_rate(n_s, insts, sched, largest, device, precision))
    launch = LAUNCH_PER_WIDTH if device is None else 0.0

    def minutes(steps: int) -> float:
        return len(models) * sum(
            (launch * len({insts[k].n_d for k in c})
             + step_flops(n_s, [insts[k] for k in c], sched) / rate) * steps
            for c in chunks) / 60

    scratch = (training.ckpt_bytes(n_s, insts, chunks, kept, sched)
               if pr.train.checkpoint_every else 0)
    states = ends.nbytes(n_s, [pt.n_d for pt in kept], len({pt.p for pt in kept}))
    return {
        "stage": stage, "n_s": n_s, "models": len(points) * len(models),
        "sum_n_d": sum(pt.n_d for pt in points) * len(models),
        "tflop_per_step": step_flops(n_s, insts, sched) * len(models) / 1e12,
        "chunks": len(chunks) * len(models), "gflop_s": rate / 1e9,
        "minutes_median": minutes(median_stop(sched, n_s, lr)),
        "minutes_cap": minutes(sched.max_steps),
        "gpu_gib": max(chunk_bytes(n_s, insts, c, sched, bucketed=bucketed)
                       for c in chunks) / GiB,
        "host_gib": (4 if kept else 2) * max(weights.nbytes(n_s, [insts[k].n_d for k in c])
                                             for c in chunks) / GiB,
        "kept_gib": (weights.nbytes(n_s, [pt.n_d for pt in kept]) + states) / GiB,
        "disk_gib": (copies * (weights.nbytes(n_s, [pt.n_d for pt in kept]) + states)
                     + scratch) / GiB,
    }


def converge_cost(pr: PersianRug, n_s: int, device: str | None = None,
                  fig3: bool = False) -> dict:
    """The row of :data:`COLUMNS` for the convergence check of the grid of ``n_s``
    (pr_converge@n_s), or with ``fig3`` of the fig. 3 models (pr_converge_fig3): one model per p
    retrained persian_rug.converge.factor times its steps, at least converge.min_steps
    (tms.persian_rug.converge.long_steps), on from its stop where the grid keeps every model's
    weights and the check goes on from the kept states (tms.persian_rug.ends, the steps beyond
    it: fig. 3's, and a grid's on the GPU path, tms.persian_rug.converge.resume_pays), else (and
    with factor 1) from the start, in one stack that each leaves at its own cap. Which
    models those are is known only after training (at each p, the one the stopping rule stopped
    last); the forecast takes the median n_d of the grid's ratios and the long steps of the
    median stopping step, which underestimates (the models rerun are the last to stop: at
    cpu-paper's n_s 1024, at twice the steps without a floor, the stage took 2.1× this), and,
    for the cap, the widest n_d and the long steps of the step cap, the bound; with
    persian_rug.converge.capped the models rerun at the cap are all the widest (ties go to the
    widest), one width's launches. Nothing is kept on disk. Rates and errors as
    :func:`grid_cost`."""
    factor, min_steps = pr.converge.factor, pr.converge.min_steps
    if fig3:
        f3 = pr.fig3
        n_s, ps, widths, stage = f3.n_s, [f3.p], [f3.n_d], "pr_converge_fig3"
        sched, lr = _fig3_training(pr)
        resumed = True                                      # fig. 3's weights are kept
    else:
        grid = pr.grid.at(n_s)
        ps, widths = grid.p, sorted(training.n_d_of(n_s, r) for r in grid.ratio)
        # on from the kept states on the GPU path alone (tms.persian_rug.converge.resume_pays)
        resumed = (all(grid.keeps(p, r) for p in grid.p for r in grid.ratio)
                   and (device is None or str(device).startswith("cuda")))
        sched, lr, stage = Schedule.of(pr.train), pr.train.lr_for(n_s), f"pr_converge@{n_s}"
    typical, widest = widths[len(widths) // 2], widths[-1]
    long = dataclasses.replace(sched, max_steps=long_steps(sched.max_steps, factor, min_steps))
    seed = pr.train.seed
    stack = [Instance(p, widest, seed + k, lr, seed) for k, p in enumerate(ps)]
    bucketed = gpu_path(device or "cuda", pr.compute.precision)

    def of_width(n_d: int) -> list[Instance]:
        return [dataclasses.replace(i, n_d=n_d) for i in stack]

    rate = (_nearest(RATES[pr.compute.precision], n_s) if device is None else measured_rate(
        n_s, of_width(typical), long, list(range(len(ps))), device, pr.compute.precision))
    launch = LAUNCH_PER_WIDTH if device is None else 0.0

    def minutes(steps: float, n_d: int, n_widths: int) -> float:
        step = launch * n_widths + step_flops(n_s, of_width(n_d), sched) / rate
        long = long_steps(steps, factor, min_steps)
        return (long - steps if resumed and long > steps else long) * step / 60

    n_widths = min(len(ps), len(set(widths)))          # a width per model, at most the grid's
    return {
        "stage": stage, "n_s": n_s, "models": len(ps), "sum_n_d": typical * len(ps),
        "tflop_per_step": step_flops(n_s, of_width(typical), sched) / 1e12,
        "chunks": 1, "gflop_s": rate / 1e9,
        "minutes_median": minutes(median_stop(sched, n_s, lr), typical, n_widths),
        "minutes_cap": minutes(sched.max_steps, widest, 1 if pr.converge.capped else n_widths),
        "gpu_gib": chunk_bytes(n_s, stack, list(range(len(ps))), long, bucketed=bucketed) / GiB,
        "host_gib": 2 * weights.nbytes(n_s, [widest] * len(ps)) / GiB, "kept_gib": 0.0,
        "disk_gib": (3 * weights.nbytes(n_s, [widest] * len(ps)) + 4 * len(ps) * long.max_steps)
        / GiB if pr.train.checkpoint_every else 0.0,
    }


def forecast(pr: PersianRug, copies: int | None = None, device: str | None = None
             ) -> pd.DataFrame:
    """:func:`grid_cost` of every n_s of the grid and of the fig. 3 models, then
    :func:`converge_cost` of each, one row each (:data:`COLUMNS`); ``copies``: of each output on
    disk (None: this repository's, tms.core.machine.disk_copies); ``device``: rates measured
    there, None: the H100's."""
    copies = machine.disk_copies() if copies is None else copies
    rows = [grid_cost(pr, n_s, copies, device) for n_s in pr.grid.n_s]
    rows.append(grid_cost(pr, pr.fig3.n_s, copies, device, fig3=True))
    rows += [converge_cost(pr, n_s, device) for n_s in pr.grid.n_s]
    rows.append(converge_cost(pr, pr.fig3.n_s, device, fig3=True))
    return pd.DataFrame(rows, columns=list(COLUMNS))
