"""Trained grids of the Persian Rug paper: expansion, training, scoring, tables.

A grid of one n_s is the cartesian product seeds × ratio × p (in that nesting order); point k
is initialised with seed ``base_seed + k`` and n_d = max(1, int(n_s · ratio)) (the authors' rule;
the realised ratio n_d / n_s is what the tables and figures use). Its training data is the
stream of data seed ``base_seed + seed_index``, common to every (p, ratio) point of that seed
index (common random numbers: each point turns the same uniforms v into its own
x = (v/p)·[v < p], tms.engine.sampler); it depends on params alone, never on how the grid is split.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from tms.core import io, machine
from tms.core.schema import Compute, ParamsError
from tms.engine import executor
from tms.engine.checkpoint import Checkpoints
from tms.engine.grid import (Instance, Schedule, StackSpec, TrainState, chunk_bytes, grid_flops,
                             plan_chunks)
from tms.engine.precision import gpu_path
from tms.engine.train import Result, heldout_loss, stack_of, train_chunks, window_drop
from tms.persian_rug import ends, rows, unkept, weights
from tms.persian_rug.params import n_d_of

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
                "train.diverge_factor times its loss scale, the larger of the first minibatch's "
                "and the zero output's, tms.engine.train.loss_scale): excluded from fits, "
                "claims and figures",
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
    """One grid point: index in the grid, p, target ratio, n_d, seed index, its own step cap
    (None: the schedule's) and the training state it trains on from (None: its initialisation;
    tms.engine.grid.Instance)."""

    instance: int
    p: float
    ratio_target: float
    n_d: int
    seed_index: int
    max_steps: int | None = None
    start: TrainState | None = field(default=None, compare=False)


def expand(n_s: int, p: Sequence[float], ratio: Sequence[float], seeds: int) -> list[Point]:
    """The grid seeds × ratio × p of one n_s, as points in instance order."""
    pts = []
    for s in range(seeds):
        for r in ratio:
            for q in p:
                pts.append(Point(len(pts), float(q), float(r), n_d_of(n_s, r), s))
    return pts


@dataclass(frozen=True)
class GridSpec:
    """How a Persian Rug grid of one n_s is trained and scored, whatever its points: n_s; the
    base seed (point k initialised with base_seed + k, its data stream base_seed + seed_index);
    the learning rate and :class:`tms.engine.grid.Schedule`; the held-out sample every model is
    scored on (``eval_seed``, ``n_eval`` vectors); the torch device; ``compute`` (the memory
    budget of a stack, the executor and the precision, tms.core.schema.Compute); the progress
    bar's label."""

    n_s: int
    base_seed: int
    lr: float
    sched: Schedule
    eval_seed: int
    n_eval: int
    device: str = "cpu"
    compute: Compute = Compute()
    label: str = ""


#: The statistics of one model whose weights are not kept, measured where it trained:
#: ``measure_unkept(W_in, W_out, b, p, device)`` → a dict of numbers (tms.persian_rug.unkept.measure).
MeasureUnkept = Callable[[np.ndarray, np.ndarray, np.ndarray, float, str], dict]


@dataclass(frozen=True)
class Measured:
    """What leaves the process that trained one model (:func:`measure`): its row of the trained
    table (from ``steps`` on), its weights (W_in, W_out, b) when they are kept, else None, and
    otherwise, when asked for, its statistics (a :data:`MeasureUnkept`'s dict), else None; and
    its training state where it ended when its stack kept it (tms.engine.train.Result.state)."""

    row: dict
    statistics: dict | None
    weights: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    state: TrainState | None = None


def measure(spec: GridSpec, relu: bool, measure_unkept: MeasureUnkept | None,
            kept: frozenset[int], insts: Sequence[Instance], results: list[Result]) -> list[Measured]:
    """Score and measure one trained chunk of the grid ``spec`` where it trained (a
    tms.engine.train.Reduce, bound with functools.partial): the held-out loss of every model on
    spec's held-out sample (one padded stack, so a chunk is scored as it trained) and
    :func:`tms.persian_rug.rows.summary`; the weights of the instances whose seed is in ``kept``
    go along, the others are dropped here, measured first by ``measure_unkept`` (on
    ``spec.device``) when it is given."""
    n_s, sched, device = results[0].W_in.shape[1], spec.sched, spec.device
    losses = heldout_loss(stack_of(results, n_s, relu, device),
                          torch.tensor([i.p for i in insts], device=device), spec.eval_seed,
                          spec.n_eval)
    out = []
    for inst, res, loss in zip(insts, results, losses):
        row = {"steps": res.steps, "stopped": res.stopped,
               "end_drop": window_drop(res.train_losses, sched.window), "diverged": res.diverged,
               "loss": float(loss),
               "loss_train": float(np.mean(res.train_losses[-sched.window:])),
               **rows.summary(res.W_in, res.W_out, res.b)}
        weights_ = (res.W_in, res.W_out, res.b)
        if inst.seed in kept:
            out.append(Measured(row, None, weights_, res.state))
        else:
            statistics = measure_unkept(*weights_, inst.p, device) if measure_unkept else None
            out.append(Measured(row, statistics, None))
    return out


#: Receives the kept weights of a grid as its chunks finish: ``sink(point, W_in, W_out, b)``
#: (tms.persian_rug.weights.Writer.put, bound to a model).
Sink = Callable[[Point, np.ndarray, np.ndarray, np.ndarray], None]


@dataclass(frozen=True)
class Plan:
    """A grid of one n_s, checked against the machine (:func:`plan_grid`): its instances, the
    chunks they train in, the seeds whose weights are kept, and whether the GPU path trains it."""

    insts: list[Instance]
    chunks: list[list[int]]
    kept: frozenset[int]
    bucketed: bool


def instances(points: Sequence[Point], base_seed: int, lr: float) -> list[Instance]:
    """The engine's instances (tms.engine.grid.Instance) of ``points``, trained at ``lr``: point
    k initialised with ``base_seed + k``, its data stream ``base_seed + seed_index``."""
    return [Instance(pt.p, pt.n_d, base_seed + pt.instance, lr, base_seed + pt.seed_index,
                     pt.max_steps, pt.start) for pt in points]


def plan_grid(spec: GridSpec, points: Sequence[Point], ckpt: Checkpoints | None = None,
              keep: Callable[[Point], bool] | None = None, models: int = 1,
              keep_state: bool = False) -> Plan:
    """Plan the training of ``points`` (``models`` times: once per model of the grid), checked
    before any work. ``keep``: the points whose weights are kept (None: all); ``keep_state``:
    the stacks keep their models' training states too (tms.engine.grid.StackSpec).

    Raises ParamsError if one model does not fit compute.memory_budget_mb, or if the largest
    stack does not fit the device's memory, twice the largest chunk's weights the host's (four
    times with ``keep_state``: the states' weights and moments), or the kept states
    (tms.persian_rug.ends.nbytes) and the
    kept weights (with DVC's cache copies and the checkpoints) the disk (tms.core.machine), or
    if the Ray cluster of executor ray does not answer; warns when the grid can take more than an
    hour.
    """
    n_s, base_seed, sched, device, compute = (spec.n_s, spec.base_seed, spec.sched, spec.device,
                                              spec.compute)
    insts = instances(points, base_seed, spec.lr)
    kept = [pt for pt in points if keep is None or keep(pt)]
    budget = f"persian_rug.compute.memory_budget_mb = {compute.memory_budget_mb}"
    bucketed = gpu_path(device, compute.precision)
    try:
        chunks = plan_chunks(n_s, insts, sched, compute.memory_budget_mb, bucketed)
    except ValueError as err:
        raise ParamsError(f"{budget}: {err}") from None
    largest = max(chunk_bytes(n_s, insts, c, sched, bucketed) for c in chunks)
    machine.check_fits(largest, device,
                       f"training n_s = {n_s} (its largest stack, with {budget} MiB)",
                       "lower the budget, so the grid trains in more, smaller chunks")
    machine.check_fits((4 if keep_state else 2)
                       * max(weights.nbytes(n_s, [insts[k].n_d for k in c]) for c in chunks),
                       "cpu", f"measuring the trained chunks of n_s = {n_s} (its largest, "
                       f"with {budget} MiB)", "lower the budget")
    keep_state = keep_state and bool(kept)
    states = ends.nbytes(n_s, [pt.n_d for pt in kept], len({pt.p for pt in kept}))
    machine.check_disk(models * weights.nbytes(n_s, [pt.n_d for pt in kept])
                       + (states if keep_state else 0),
                       f"writing the kept weights of {models * len(kept)} of "
                       f"{models * len(points)} models of n_s = {n_s}"
                       + (" and the states a convergence check resumes" if keep_state else ""),
                       "free disk space, keep fewer weights (persian_rug.grid.keep_weights) "
                       "or train a smaller grid",
                       scratch=models * ckpt_bytes(n_s, insts, chunks, kept, sched)
                       if ckpt else 0)
    machine.warn_if_long(models * grid_flops(n_s, insts, sched), device,
                         f"training {models * len(insts)} models of n_s = {n_s}")
    if compute.executor == "ray":
        try:
            executor.connect(compute.ray_address)
        except ConnectionError as err:
            raise ParamsError(f"persian_rug.compute.ray_address (or RAY_ADDRESS): {err}; start "
                              "the cluster, fix the address, or set executor: local") from None
    return Plan(insts, chunks, frozenset(base_seed + pt.instance for pt in kept), bucketed)


def train_and_score(spec: GridSpec, points: Sequence[Point], relu: bool,
                    ckpt: Checkpoints | None = None,
                    measure_unkept: MeasureUnkept | None = None, sink: Sink | None = None,
                    plan: Plan | None = None, states: dict[int, TrainState] | None = None
                    ) -> tuple[pd.DataFrame, dict[tuple[str, int], dict]]:
    """Train every point as ``spec`` says (batched, chunked, placed and computed in the precision
    that ``spec.compute`` says, checkpointed to ``ckpt`` when given: tms.engine.train), ReLU or
    linear models (``relu``), and score and measure each chunk where it trained
    (:func:`measure`) as it finishes.

    Returns the table (columns :data:`TRAIN_COLUMNS`, in point order) and, with
    ``measure_unkept``, the statistics it measured of the points the plan does not keep,
    {(model, instance): dict} (else {}). The weights of the points the plan keeps go to ``sink`` chunk by chunk; no more
    than one chunk's weights are held at a time, and a chunk's final checkpoint holds only its
    kept weights. ``plan``: this grid's :func:`plan_grid` made beforehand; without it, one
    keeping every point is made here, with its checks and errors, before any training.
    ``states``: a dict that receives the training states where they ended of the models whose
    states a convergence check resumes from (tms.persian_rug.ends.kept) among those whose
    weights the plan keeps (a grid too large to keep keeps no states), {instance: state}.
    """
    n_s, device, compute = spec.n_s, spec.device, spec.compute
    model = "relu" if relu else "linear"
    plan = plan or plan_grid(spec, points, ckpt)
    reduce = functools.partial(measure, spec, relu, measure_unkept, plan.kept)
    table_rows: list[dict] = [{}] * len(points)
    measured: dict[tuple[str, int], dict] = {}
    stack = StackSpec(n_s, spec.sched, relu=relu, device=device, precision=compute.precision,
                      bucketed=plan.bucketed, label=spec.label,
                      keep_state=states is not None and bool(plan.kept))
    for chunk, items in train_chunks(
            stack, plan.insts, compute.memory_budget_mb,
            executor.named(compute.executor, device, compute.ray_address), ckpt, reduce):
        for k, item in zip(chunk, items):
            pt, inst = points[k], plan.insts[k]
            table_rows[k] = {"instance": pt.instance, "model": model, "n_s": n_s, "n_d": pt.n_d,
                             "ratio": pt.n_d / n_s, "ratio_target": pt.ratio_target, "p": pt.p,
                             "seed_index": pt.seed_index, "seed": inst.seed,
                             "data_seed": inst.data_seed, "lr": spec.lr, **item.row}
            if item.statistics is not None:
                measured[(model, pt.instance)] = item.statistics
            if item.weights is not None and sink is not None:
                sink(pt, *item.weights)
            if states is not None and item.state is not None:
                states[pt.instance] = item.state
        if states is not None:        # the chunk's others go: one chunk's states at a time
            chosen = ends.kept(pd.DataFrame([r for r in table_rows if r],
                                            columns=list(TRAIN_COLUMNS)))
            for k in set(states) - chosen:
                del states[k]
    return pd.DataFrame(table_rows, columns=list(TRAIN_COLUMNS)), dict(sorted(measured.items()))


def train_models(spec: GridSpec, points: Sequence[Point], models: Sequence[str],
                 weights_dir: str | Path, ckpt: Checkpoints | None = None,
                 keep: Callable[[Point], bool] | None = None,
                 measure_unkept: MeasureUnkept | None = None,
                 ends_dir: str | Path | None = None) -> pd.DataFrame:
    """A trained grid of one n_s as its stage writes it (pr_train, pr_fig3): every point
    trained once per model of ``models`` ('relu', 'linear'; :func:`train_and_score`), planned
    and checked once for all of them before any training (:func:`plan_grid`), the weights of
    the points ``keep`` accepts (None: all) written to ``weights_dir`` chunk by chunk
    (tms.persian_rug.weights, atomically: the folder appears whole or not at all), with the
    statistics ``measure_unkept`` measured of the others (tms.persian_rug.unkept.write; none
    without it), and with ``ends_dir`` the training states of the ReLU models a convergence
    check resumes from written there, of those whose weights are kept (tms.persian_rug.ends,
    atomically; empty where none are). Returns the trained
    tables of every model concatenated. Raises ParamsError as :func:`plan_grid`."""
    plan = plan_grid(spec, points, ckpt, keep, len(models), ends_dir is not None)
    states: dict[int, TrainState] = {}
    index = [(model, pt.instance, pt.n_d) for model in models for pt in points
             if spec.base_seed + pt.instance in plan.kept]
    tables, measured = [], {}
    with io.atomic_path(weights_dir, directory=True) as tmp:
        with weights.Writer(tmp, spec.n_s, index) as kept:
            for model in models:
                table, measured_ = train_and_score(
                    spec, points, model == "relu", ckpt, measure_unkept,
                    lambda pt, *w, model=model: kept.put(model, pt.instance, *w), plan,
                    states if ends_dir is not None and model == "relu" else None)
                tables.append(table)
                measured.update(measured_)
        unkept.write(measured, tmp)
    if ends_dir is not None:
        with io.atomic_path(ends_dir, directory=True) as tmp:
            ends.write(states, tmp)
    return pd.concat(tables, ignore_index=True)


def ckpt_bytes(n_s: int, insts: Sequence[Instance], chunks: Sequence[Sequence[int]],
               kept: Sequence[Point], sched: Schedule) -> int:
    """Disk the checkpoints of a grid can take at once (bytes): the kept weights of its finished
    chunks, and the state of the stack in training (its weights and Adam's two moments, and its
    loss history), for the largest chunk."""
    state = max(3 * weights.nbytes(n_s, [insts[k].n_d for k in c]) + 4 * len(c) * sched.max_steps
                for c in chunks)
    return weights.nbytes(n_s, [pt.n_d for pt in kept]) + state
