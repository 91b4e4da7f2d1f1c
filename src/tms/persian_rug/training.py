"""Trained grids of the Persian Rug paper: expansion, training, scoring, tables.

A grid of one n_s is the cartesian product seeds × ratio × p (in that nesting order); point k
is initialised with seed ``base_seed + k`` and n_d = max(1, int(n_s · ratio)) (the authors' rule;
the realised ratio n_d / n_s is what the tables and figures use). Its training data is the
stream of data seed ``base_seed + seed_index``, common to every (p, ratio) point of that seed
index (common random numbers: each point turns the same uniforms v into its own
x = (v/p)·[v < p], tms.engine.sampler); it depends on params alone, never on how the grid is split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from tms.engine import executor
from tms.engine.checkpoint import Checkpoints
from tms.engine.precision import gpu_path
from tms.engine.train import (Instance, Result, Schedule, chunk_bytes, grid_flops, heldout_loss,
                              plan_chunks, stack_of, train_grid, window_drop)
from tms.persian_rug import stats
from tms.pipeline import machine
from tms.pipeline.params import Compute, ParamsError

#: Columns of the trained-model tables (data/persian_rug/train/n{n_s}.parquet), one row per model.
TRAIN_COLUMNS = {
    "instance": "index of the model in its grid (its seed is train.seed + instance)",
    "model": "'relu' (ReLU output) or 'linear' (identity-activation twin)",
    "n_s": "number of features",
    "n_d": "hidden width, max(1, int(n_s · ratio_target))",
    "ratio": "realised compression ratio n_d / n_s",
    "ratio_target": "grid value of the ratio before rounding n_d",
    "p": "feature probability",
    "seed_index": "which of the `seeds` independent models at this grid point (0-based)",
    "seed": "the torch seed of this model's initialisation",
    "data_seed": "its training-data stream (train.seed + seed_index, shared by the grid points "
                 "of one seed_index; tms.engine.sampler.stream_generator)",
    "lr": "Adam learning rate",
    "steps": "optimiser steps taken",
    "stopped": "True if the stopping rule ended training, False if the step cap did",
    "end_drop": "decades the minibatch loss fell over the last stopping window (the rule's "
                "statistic, tms.engine.train.window_drop; ≤ 0 stops): > 0 at the cap, still "
                "falling",
    "diverged": "True if training diverged (a NaN/inf minibatch loss, or one above "
                "train.diverge_factor times the first): excluded from fits, claims and figures",
    "loss": "per-feature MSE on the fixed held-out sample (mean over vectors and features)",
    "loss_train": "mean minibatch per-feature MSE over the last stopping window (for reference)",
    "diag_mean": "mean over features of diag(W), W = W_out W_in",
    "diag_std": "standard deviation over features of diag(W)",
    "bias_mean": "mean over features of b",
    "bias_std": "standard deviation over features of b",
    "dead_fraction": "share of features whose diag(W) is below half the median (given up)",
    "diag_live_mean": "mean of diag(W) over the live features",
    "diag_live_std": "standard deviation of diag(W) over the live features",
}


@dataclass(frozen=True)
class Point:
    """One grid point: index in the grid, p, target ratio, n_d, seed index."""

    instance: int
    p: float
    ratio_target: float
    n_d: int
    seed_index: int


def n_d_of(n_s: int, ratio: float) -> int:
    """Hidden width for a ratio: max(1, int(n_s · ratio)) (docs/paper-gaps.md)."""
    return max(1, int(n_s * ratio))


def expand(n_s: int, p: Sequence[float], ratio: Sequence[float], seeds: int) -> list[Point]:
    """The grid seeds × ratio × p of one n_s, as points in instance order."""
    pts = []
    for s in range(seeds):
        for r in ratio:
            for q in p:
                pts.append(Point(len(pts), float(q), float(r), n_d_of(n_s, r), s))
    return pts


def train_and_score(n_s: int, points: Sequence[Point], base_seed: int, lr: float,
                    sched: Schedule, relu: bool, eval_seed: int, n_eval: int,
                    device: str = "cpu", label: str = "", compute: Compute = Compute(),
                    ckpt: Checkpoints | None = None) -> tuple[pd.DataFrame, list[Result]]:
    """Train every point (batched, chunked, placed and computed in the precision that
    ``compute`` says, checkpointed to ``ckpt`` when given: tms.engine.train), score each on the
    held-out sample.

    Returns the table (columns :data:`TRAIN_COLUMNS`) and the trained results in point order.
    Raises ParamsError, before any training, if one model does not fit
    compute.memory_budget_mb, or if the largest stack or the trained weights do not fit this
    machine's memory, or the weights its disk (tms.pipeline.machine).
    """
    insts = [Instance(pt.p, pt.n_d, base_seed + pt.instance, lr, base_seed + pt.seed_index)
             for pt in points]
    budget = f"persian_rug.compute.memory_budget_mb = {compute.memory_budget_mb}"
    bucketed = gpu_path(device, compute.precision)
    try:
        chunks = plan_chunks(n_s, insts, sched, compute.memory_budget_mb, bucketed)
    except ValueError as err:
        raise ParamsError(f"{budget}: {err}") from None
    machine.check_fits(max(chunk_bytes(n_s, insts, c, sched, bucketed) for c in chunks), device,
                       f"training n_s = {n_s} (its largest stack, with {budget} MiB)",
                       "lower the budget, so the grid trains in more, smaller chunks")
    weights = 4 * sum((2 * i.n_d + 1) * n_s for i in insts)
    machine.check_fits(2 * weights, "cpu", f"holding and writing the weights of {len(insts)} "
                       f"models of n_s = {n_s}", "train a smaller grid")
    machine.check_disk(weights, f"writing the weights of {len(insts)} models of n_s = {n_s}",
                       "free disk space, let DVC link outputs to its cache instead of copying "
                       "them (`dvc config cache.type hardlink,symlink`), or train a smaller grid")
    machine.warn_if_long(grid_flops(n_s, insts, sched), device,
                         f"training {len(insts)} models of n_s = {n_s}")
    results = train_grid(n_s, insts, sched, relu=relu, device=device, label=label,
                         memory_budget_mb=compute.memory_budget_mb,
                         executor=executor.from_params(compute, device), ckpt=ckpt,
                         precision=compute.precision, bucketed=bucketed)
    losses = np.empty(len(points))
    for chunk in chunks:                 # scored chunk by chunk too, within the budget
        losses[chunk] = heldout_loss(stack_of([results[k] for k in chunk], n_s, relu, device),
                                     torch.tensor([points[k].p for k in chunk], device=device),
                                     eval_seed, n_eval)
    rows = []
    for pt, inst, res, loss in zip(points, insts, results, losses):
        rows.append({
            "instance": pt.instance, "model": "relu" if relu else "linear", "n_s": n_s,
            "n_d": pt.n_d, "ratio": pt.n_d / n_s, "ratio_target": pt.ratio_target, "p": pt.p,
            "seed_index": pt.seed_index, "seed": inst.seed, "data_seed": inst.data_seed,
            "lr": lr, "steps": res.steps, "stopped": res.stopped,
            "end_drop": window_drop(res.train_losses, sched.window), "diverged": res.diverged,
            "loss": float(loss),
            "loss_train": float(np.mean(res.train_losses[-sched.window:])),
            **stats.summary(res.W_in, res.W_out, res.b),
        })
    return pd.DataFrame(rows, columns=list(TRAIN_COLUMNS)), results


def pack_weights(results: Sequence[Result]) -> dict[str, np.ndarray]:
    """Ragged weights as flat arrays: W_in and W_out concatenated (row-major), b stacked."""
    return {"W_in": np.concatenate([r.W_in.ravel() for r in results]),
            "W_out": np.concatenate([r.W_out.ravel() for r in results]),
            "b": np.stack([r.b for r in results])}


def unpack_weights(arrays: dict[str, np.ndarray], n_d: Sequence[int]
                   ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Inverse of :func:`pack_weights`: [(W_in (n_d, n_s), W_out (n_s, n_d), b (n_s))]."""
    n_s = arrays["b"].shape[1]
    out, at = [], 0
    for k, d in enumerate(n_d):
        size = d * n_s
        out.append((arrays["W_in"][at:at + size].reshape(d, n_s),
                    arrays["W_out"][at:at + size].reshape(n_s, d), arrays["b"][k]))
        at += size
    return out
