"""A grid of one n_s as the trainer sees it: its models (instances), their schedule and the
spec every stack of it shares, how its instances are ordered and grouped into a stack, and how
a grid is cut into stacks that fit a memory budget (with their memory and work, for the checks
made before training). tms.engine.train trains them.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from tms.engine import models


@dataclass(frozen=True, repr=False, eq=False)
class TrainState:
    """One model's training state where it left its stack (tms.engine.train.Result.state), from
    which it can train on as it would have gone on in its stack: its rows of the stack ``flat``
    (2·n_d + 1, n_s) float32 (W_in, W_outᵀ, b: tms.engine.models.RaggedStack's layout), Adam's
    two moments ``m`` and ``v`` in the same layout, the ``steps`` it took, its ``first_loss``
    (its first minibatch loss, for its loss scale: tms.engine.train.loss_scale) and ``stream``,
    its data stream's generator state after those steps (torch.Generator.get_state, as bytes;
    a generator of the device it trained on). Its repr names the steps and a hash of the rest,
    so that a checkpoint key tells two states apart."""

    flat: np.ndarray
    m: np.ndarray
    v: np.ndarray
    steps: int
    first_loss: float
    stream: bytes

    def __repr__(self) -> str:
        h = hashlib.sha256(self.stream + repr(self.first_loss).encode())
        for a in (self.flat, self.m, self.v):
            h.update(np.ascontiguousarray(a).tobytes())
        return f"TrainState(steps={self.steps}, sha256={h.hexdigest()[:16]})"


@dataclass(frozen=True)
class Instance:
    """One model of a grid: feature probability p, hidden width n_d, seed (initialisation),
    learning rate, and data_seed: the training-data stream. Instances with the same data_seed
    draw the same uniforms v every step (common random numbers; each turns them into its own
    x = (v/p)·[v < p]), from a generator seeded by tms.engine.sampler.stream_generator(data_seed);
    None: the instance's own stream, its init generator continued after the init draws.
    max_steps: its own step cap, at most the schedule's (None: the schedule's); it leaves its
    stack there, not stopped by the rule. ``start``: a :class:`TrainState` it trains on from
    (its weights, Adam's moments and step count, and its own data stream, continued), instead
    of its initialisation; its steps count from the state's (its max_steps too), and the
    stopping rule reads the losses of this stack only (the trainer refuses a start with no step
    left, tms.engine.train.train_chunks). Raises ValueError on a max_steps below 1, or on a
    start of other rows than 2·n_d + 1."""

    p: float
    n_d: int
    seed: int
    lr: float
    data_seed: int | None = None
    max_steps: int | None = None
    start: TrainState | None = field(default=None, compare=False)

    def __post_init__(self):
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError(f"an instance's max_steps must be >= 1, got {self.max_steps}")
        if self.start is not None:
            if len(self.start.flat) != 2 * self.n_d + 1:
                raise ValueError(f"a start of {len(self.start.flat)} rows for n_d = "
                                 f"{self.n_d} (2·n_d + 1 = {2 * self.n_d + 1})")

    @property
    def begun(self) -> int:
        """The steps taken before this stack: its start's, else 0."""
        return 0 if self.start is None else self.start.steps


@dataclass(frozen=True)
class Schedule:
    """Batch size, Adam eps, stopping-rule window and check interval, step cap, and the
    divergence bound: a minibatch loss above ``diverge_factor`` times the instance's loss scale,
    the largest of its first minibatch loss and the zero output's losses
    (tms.engine.train.loss_scale; inf: only non-finite losses count as divergence)."""

    batch_size: int
    adam_eps: float
    window: int
    check_every: int
    max_steps: int
    diverge_factor: float = math.inf

    @classmethod
    def of(cls, section, max_steps: int | None = None) -> "Schedule":
        """The schedule of a params section with batch_size, adam_eps, window, check_every,
        diverge_factor and (unless ``max_steps`` is given) max_steps:
        tms.persian_rug.params.Train or tms.notes.params.NotesTrain."""
        return cls(section.batch_size, section.adam_eps, section.window, section.check_every,
                   section.max_steps if max_steps is None else max_steps,
                   section.diverge_factor)


@dataclass(frozen=True)
class StackSpec:
    """What every model of a grid of one n_s shares and how its stacks are trained: n_s
    features, the :class:`Schedule`, ReLU output or linear (``relu``), with a bias or bias-free
    (``bias=False``: b ≡ 0, not optimised), ``scale``: n_s positive factors s multiplying every
    sampled feature vector (the data is s ⊙ x; None: none), the torch ``device`` (from params),
    ``precision`` (fp32, tf32 or bf16: tms.engine.precision), ``bucketed``: the GPU path or not
    (None: on CUDA, or for bf16; tms.engine.train.train_chunk), the progress bar's
    ``label``, and ``keep_state``: every result carries its model's :class:`TrainState` (on the
    host: three times its weights more)."""

    n_s: int
    sched: Schedule
    relu: bool = True
    bias: bool = True
    scale: tuple[float, ...] | None = None
    device: str = "cpu"
    precision: str = "fp32"
    bucketed: bool | None = None
    label: str = ""
    keep_state: bool = False

    def __post_init__(self):
        if self.scale is not None:      # hashable and exact: a tuple of Python floats
            object.__setattr__(self, "scale", tuple(map(float, self.scale)))


def stream(insts: Sequence[Instance], k: int) -> tuple[str, int]:
    """The training-data stream of instance k: ("shared", data_seed), or ("own", k) for an
    instance without a data_seed (it draws from its own generator, after its init), or
    ("resumed", k) for one with a start (its state's generator, alone)."""
    if insts[k].start is not None:
        return ("resumed", k)
    s = insts[k].data_seed
    return ("own", k) if s is None else ("shared", s)


def stack_order(insts: Sequence[Instance], bucketed: bool = False) -> list[int]:
    """Stack rows (indices into insts) with the instances of equal inputs (same stream, same
    p) next to each other; ``bucketed``: instances of equal n_d next to each other first."""
    def key(k: int) -> tuple:
        same_inputs = (stream(insts, k), insts[k].p, k)
        return (insts[k].n_d, *same_inputs) if bucketed else same_inputs
    return sorted(range(len(insts)), key=key)


def input_groups(insts: Sequence[Instance], rows: Sequence[int]
            ) -> tuple[list[tuple[int, int]], list[tuple[str, int]], list[float]]:
    """The (start, stop) ranges of consecutive rows with identical inputs at every step (same
    stream and p), and the stream and the p of each range."""
    groups: list[tuple[int, int]] = []
    keys: list[tuple[str, int]] = []
    ps: list[float] = []
    for r, k in enumerate(rows):
        key = stream(insts, k)
        if groups and keys[-1] == key and ps[-1] == insts[k].p:
            groups[-1] = (groups[-1][0], r + 1)
        else:
            groups.append((r, r + 1))
            keys.append(key)
            ps.append(insts[k].p)
    return groups, keys, ps


def stack_bytes(n_s: int, n_d: Sequence[int], widest_group: int, streams: int, batch: int,
                max_steps: int, bucketed: bool = False) -> int:
    """An upper estimate of the memory (bytes, float32) of training one ragged stack.

    The parameters (2·Σn_d + I)·n_s floats live in 11 + MAX_PIECES − 1 copies at most
    (weights, gradients, Adam's two moments, the optimiser's temporaries, the copies made
    when stopped instances leave the stack, and the partial sums of the batch pieces of
    tms.engine.models.loss_and_grads); a worker has scratch for a group's hidden activations and
    their gradients, 2·widest_group·batch, three (batch, n_s) buffers and, for the sparse
    products, x as a CSR matrix (under one more) and ∂W_inᵀ of a group, widest_group·n_s
    (counted once: each further CPU worker thread adds as much); each data stream one
    (batch, n_s) buffer of uniforms; the loss history is I·max_steps floats. ``bucketed`` (the
    GPU path): the scratch is that of the largest bucket of equal n_d (m models of width d),
    at most 6·m·batch·n_s (its uniforms, inputs, outputs, masks and a temporary) and
    3·m·batch·d (its hidden activations, their gradients and a bf16 copy).
    """
    params = (2 * sum(n_d) + len(n_d)) * n_s
    if bucketed:
        scratch = max(m * batch * (6 * n_s + 3 * d) for d, m in Counter(n_d).items())
    else:
        scratch = 2 * widest_group * batch + 4 * batch * n_s + widest_group * n_s
    copies = 10 + models.MAX_PIECES
    return 4 * (copies * params + scratch + streams * batch * n_s + len(n_d) * max_steps)


def grid_flops(n_s: int, instances: Sequence[Instance], sched: Schedule) -> float:
    """The useful work of training ``instances`` to the step cap: the five products of a step
    (forward W_in x and W_out h; backward ∂W_out, ∂h and ∂W_in), 10·batch·n_s·n_d FLOPs per
    model and step (bench/throughput.py counts the same)."""
    return 10.0 * sched.batch_size * n_s * sum(i.n_d for i in instances) * sched.max_steps


def plan_chunks(n_s: int, instances: Sequence[Instance], sched: Schedule,
                memory_budget_mb: float, bucketed: bool = False) -> list[list[int]]:
    """Split a grid into stacks that each fit ``memory_budget_mb`` MiB (by :func:`stack_bytes`
    with one worker: the plan depends on params alone; each further CPU worker thread adds
    its scratch; ``bucketed``: the scratch of the GPU path).

    Chunks are cut between groups of equal inputs (same data stream and p), in stack order,
    so on the CPU path every instance trains bit for bit as in the whole grid; a group too
    large for the budget alone is cut between its instances (equal up to rounding then). On
    the GPU path a chunk changes how many models share a batched matmul, which the GPU's
    libraries may sum in another order: equal up to rounding. Returns lists of
    indices into ``instances``, every index exactly once. Raises ValueError if a single
    model does not fit the budget.
    """
    budget = memory_budget_mb * 2 ** 20
    order = stack_order(instances)
    groups, _, _ = input_groups(instances, order)
    pieces: list[list[int]] = []
    for a, b in groups:
        rows = order[a:b]
        if chunk_bytes(n_s, instances, rows, sched, bucketed) <= budget:
            pieces.append(rows)
            continue
        for k in rows:
            if chunk_bytes(n_s, instances, [k], sched, bucketed) > budget:
                need = chunk_bytes(n_s, instances, [k], sched, bucketed) / 2 ** 20
                raise ValueError(f"{memory_budget_mb} MiB is too small for one model of "
                                 f"n_s = {n_s}, n_d = {instances[k].n_d} (needs about "
                                 f"{need:.3g} MiB)")
            pieces.append([k])
    chunks: list[list[int]] = []
    for piece in pieces:
        if chunks and chunk_bytes(n_s, instances, chunks[-1] + piece, sched, bucketed) <= budget:
            chunks[-1] = chunks[-1] + piece
        else:
            chunks.append(piece)
    return chunks


def chunk_bytes(n_s: int, instances: Sequence[Instance], chunk: Sequence[int],
                sched: Schedule, bucketed: bool = False) -> int:
    """:func:`stack_bytes` (bytes) of the stack of ``instances[chunk]`` (``bucketed``: on the
    GPU path)."""
    insts = [instances[k] for k in chunk]
    order = stack_order(insts)
    groups, keys, _ = input_groups(insts, order)
    widest = max(sum(insts[r].n_d for r in order[a:b]) for a, b in groups)
    return stack_bytes(n_s, [i.n_d for i in insts], widest, len(set(keys)), sched.batch_size,
                       sched.max_steps, bucketed)
