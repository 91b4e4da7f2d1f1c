"""The batched trainer: a whole grid of one n_s trained in lockstep.

Instances (each with its own p, n_d, seed, data stream and learning rate) form one ragged
stack (tms.engine.models.RaggedStack: no padding of n_d), trained together in lockstep with fresh
data every step. Instances that share a data stream and p see the same inputs, so their
W_in x is one matmul over their concatenated W_in; the Persian Rug grids give every grid
point of one seed index the same stream (common random numbers across p and ratio).
The stopping rule (:func:`window_says_stop`) is checked per instance every
``check_every`` steps; a stopped instance is dropped from the stack. So is a diverged one
(:func:`diverged`: a non-finite minibatch loss, or one above ``diverge_factor`` times its
:func:`loss_scale`),
flagged ``Result.diverged``; the other instances of the stack train on unaffected. With
``ckpt`` the stack's whole state is saved every ``ckpt.every`` steps and a rerun resumes from
it (tms.engine.checkpoint). Every final model is
scored on the fixed held-out sample (:func:`heldout_loss`), never on its last minibatch.

Two options serve the notes on toy autoencoding: ``bias=False`` trains bias-free stacks
(b ≡ 0, not optimised), and ``scale`` (one factor s_i per feature, shared by every instance)
multiplies every sampled x, training and held-out alike, so model and target see s ⊙ x.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from tms.core.progress import Progress
from tms.engine import checkpoint, models, sampler, steps
from tms.engine import precision as precisions
from tms.engine.grid import (Instance, Schedule, StackSpec, TrainState, plan_chunks,
                             stack_order, stream)
from tms.engine.models import AutoencoderStack, forward, init_ragged
from tms.engine.optim import BatchedAdam
from tms.engine.threads import SERIAL, WorkerPool, torch_threads


@dataclass
class Result:
    """A trained instance: weights (W_in (n_d, n_s), W_out (n_s, n_d), b (n_s)) as float32
    numpy arrays, the number of steps taken (with its start's: tms.engine.grid.Instance.start),
    whether the stopping rule fired (False: the step cap ended it), the training loss of every
    step in its stack (per-feature MSE, minibatch), whether training diverged (:func:`diverged`;
    then the weights are those at that check), and with StackSpec.keep_state its training state
    there (tms.engine.grid.TrainState), else None."""

    W_in: np.ndarray
    W_out: np.ndarray
    b: np.ndarray
    steps: int
    stopped: bool
    train_losses: np.ndarray
    diverged: bool = False
    state: TrainState | None = None


def window_drop(losses: np.ndarray, window: int) -> float:
    """log10(mean of the window before the last) − log10(mean of the last window) of a loss
    curve, shape (steps,): the decades the loss fell over its last window (> 0: still falling).
    NaN with 2·window losses or fewer; a window of mean 0 (minibatches with no active feature)
    gives 0 beside another of mean 0, +inf after a positive one, −inf before one."""
    if len(losses) <= 2 * window:
        return math.nan
    prev = float(np.mean(losses[-2 * window:-window]))
    last = float(np.mean(losses[-window:]))
    if prev <= 0 or last <= 0:          # a window of empty minibatches (tiny p): loss 0
        return 0.0 if prev == last else (math.inf if last < prev else -math.inf)
    return math.log10(prev) - math.log10(last)


def window_says_stop(losses: np.ndarray, window: int) -> bool:
    """The stopping rule: stop once more than 2·window losses exist and the mean of the last
    window is not below the mean of the window before it, i.e. :func:`window_drop` ≤ 0
    (docs/paper-gaps.md; paper: window 100)."""
    return window_drop(losses, window) <= 0


def diverged(block: np.ndarray, reference: np.ndarray, factor: float) -> np.ndarray:
    """Which instances diverged: block (steps, I) holds the minibatch losses since the last
    check, reference (I,) each instance's loss scale (:func:`loss_scale`). True where some loss
    is NaN or ±inf or exceeds ``factor`` · reference. Returns a boolean array (I,)."""
    return (~np.isfinite(block).all(axis=0)
            | (block.max(axis=0, initial=-np.inf) > factor * reference))


def loss_scale(first: np.ndarray, p: np.ndarray, scale: Sequence[float] | None,
               values: int) -> np.ndarray:
    """The loss an instance's divergence is measured against (:func:`diverged`), shape (I,):
    the largest of its first minibatch loss ``first`` (I,), the loss of the zero output,
    E x² = (p/3)·mean(s²) per feature (x = (v/p)·[v < p], times the factors s of ``scale``),
    and the zero output's loss on a minibatch of ``values`` feature values (batch × n_s) with
    one of them active, at most max(s²)/values. A first minibatch with no active feature has
    loss 0, and where p · values ≪ 1 most minibatches hold none or one active feature, whose
    loss is far above E x²: the last two keep the bound above both, so such a model is not
    flagged for the loss of a minibatch that happens to hold a feature."""
    s2 = np.ones(1) if scale is None else np.square(np.asarray(scale, dtype=np.float64))
    zero = np.maximum(np.asarray(p, dtype=np.float64) / 3 * s2.mean(), s2.max() / values)
    return np.maximum(first, zero.astype(first.dtype))


def _as_scale(scale: Sequence[float] | torch.Tensor | None, n_s: int, device
              ) -> torch.Tensor | None:
    """Per-feature factors as a float32 tensor (n_s,) on ``device`` (None stays None).
    Raises ValueError unless they are n_s positive finite numbers."""
    if scale is None:
        return None
    scale = torch.as_tensor(scale, dtype=torch.float32, device=device)
    if scale.shape != (n_s,) or not bool(torch.all(torch.isfinite(scale) & (scale > 0))):
        raise ValueError(f"scale must be {n_s} positive finite factors, got {scale.tolist()}")
    return scale


def heldout_loss(model: AutoencoderStack, p: torch.Tensor, seed: int, n_vectors: int,
                 max_elements: int = 1 << 26,
                 scale: Sequence[float] | torch.Tensor | None = None) -> np.ndarray:
    """Per-feature MSE (I,) of each instance on the fixed held-out sample.

    The sample is ``n_vectors`` vectors drawn with ``seed`` (tms.engine.sampler.heldout_uniform),
    the same uniforms for every instance, each turned into x with its own p (and multiplied by
    ``scale``, shape (n_s,), when given). Averaged over vectors and features; accumulated in
    float64. ``max_elements`` bounds the size of one chunk of inputs (instances × vectors × n_s).
    Raises ValueError for a scale that is not n_s positive finite factors.
    """
    total = torch.zeros(len(p), dtype=torch.float64, device=p.device)
    n_s = model.W_in.shape[2]
    scale = _as_scale(scale, n_s, p.device)
    chunk = int(min(8192, max(256, max_elements // (len(p) * n_s))))
    with torch.no_grad():
        for v in sampler.heldout_uniform(seed, n_vectors, n_s, chunk, device=p.device):
            x = steps.scaled(sampler.sparse_from_uniform(v, p), scale)
            _, y = forward(model, x)
            total += (y - x).pow(2).sum(dim=(1, 2), dtype=torch.float64)
    return (total / (n_vectors * n_s)).cpu().numpy()


def _to_host(flat: torch.Tensor) -> tuple[torch.Tensor, Callable[[], None]]:
    """``flat`` in host memory, and what to call before reading it: from a GPU, one
    asynchronous copy into pinned memory and the wait for it (training goes on meanwhile); a
    CPU tensor as it is, with nothing to wait for."""
    if flat.device.type == "cpu":
        return flat, lambda: None
    host = torch.empty(flat.shape, dtype=flat.dtype, pin_memory=True)
    host.copy_(flat, non_blocking=True)
    done = torch.cuda.Event()
    done.record(torch.cuda.current_stream(flat.device))
    return host, done.synchronize


def _place_starts(model: models.RaggedStack, opt: BatchedAdam, insts: Sequence[Instance],
                  order: Sequence[int]) -> None:
    """The rows of the instances with a start (tms.engine.grid.Instance.start) set to it: their
    weights, Adam's moments, and their steps before as the optimiser's ``begun``. Raises
    ValueError on a start whose rows are not n_s wide."""
    begun = torch.zeros(len(model.flat), dtype=torch.long)
    for r, k in enumerate(order):
        start = insts[k].start
        if start is None:
            continue
        rows = model.rows([r])
        if start.flat.shape != (len(rows), model.flat.shape[1]):
            raise ValueError(f"instance {k}: a start of shape {start.flat.shape} for "
                             f"{len(rows)} rows of n_s = {model.flat.shape[1]}")
        for dst, src in ((model.flat, start.flat), (opt.m[0], start.m), (opt.v[0], start.v)):
            dst[rows] = torch.as_tensor(src, device=dst.device)
        begun[rows.cpu()] = start.steps
    opt.begun = begun


class _Training:
    """One stack in training (:func:`_train_bucket`): the stack, its optimiser and the inputs of
    its steps, the original index of each of its rows (``live``), every minibatch loss, the
    results of the finished models and their copies on their way to the host."""

    def __init__(self, spec: StackSpec, insts: Sequence[Instance], workers: WorkerPool,
                 matmul_dtype: torch.dtype | None):
        n_s, sched, device, bucketed = spec.n_s, spec.sched, spec.device, spec.bucketed
        self.insts, self.sched, self.workers = insts, sched, workers
        scale = _as_scale(spec.scale, n_s, device)
        self.desc = (f"{spec.label}n_s={n_s} {'relu' if spec.relu else 'linear'} ({len(insts)} "
                     f"models, n_d≤{max(i.n_d for i in insts)})")
        order = stack_order(insts, bucketed)
        gens = sampler.generators([i.seed for i in insts], device)
        self.model = init_ragged(n_s, [insts[k].n_d for k in order], [gens[k] for k in order],
                                 spec.relu, spec.bias)
        streams = steps.stream_generators(insts, order, gens, device)
        self.steps = (steps.BucketSteps(insts, streams, n_s, sched.batch_size, scale, device,
                                   matmul_dtype) if bucketed else
                      steps.RaggedSteps(insts, streams, n_s, sched.batch_size, scale, workers,
                                        device))
        lr = [insts[k].lr for k in order]
        # the zero output's part of each instance's loss scale, by original index as ``live``: the
        # same at every check, which takes the larger of it and the instance's first loss
        self.zero = loss_scale(np.zeros(len(insts), dtype=np.float32), [i.p for i in insts],
                               spec.scale, sched.batch_size * n_s)
        self.opt = BatchedAdam([self.model.flat], torch.tensor(
            [lr[k] for k in range(len(order)) for _ in range(self.model.n_d[k])] * 2 + lr,
            device=device), sched.adam_eps)
        self.keep_state = spec.keep_state
        self.begun = [i.begun for i in insts]     # steps before this stack, by original index
        if any(self.begun):
            _place_starts(self.model, self.opt, insts, order)
        # each instance's first minibatch loss, of its loss scale: a resumed one's is its start's
        self.first = np.array([math.nan if i.start is None else i.start.first_loss
                               for i in insts], dtype=np.float32)
        # an instance's own cap (tms.engine.grid.Instance.max_steps) ends it there; the stopping
        # rule and the divergence bound are checked at the rule's checks only, so an instance's
        # training never depends on the caps of the others in its stack
        self.caps = [_cap(i, sched) - i.begun for i in insts]   # in this stack's steps
        self.cap_steps = set(self.caps)
        self.live = list(order)                   # original index of each stack row
        self.losses = np.empty((len(insts), sched.max_steps), dtype=np.float32)   # minibatch losses
        self.results: dict[int, Result] = {}
        self.pending: list[torch.Tensor] = []     # this check's minibatch losses, on the device
        self.loss = torch.empty(len(insts), device=device)
        self.copies: list[tuple] = []             # finished models on their way to the host
        self.bar = Progress(self.desc, sched.max_steps, bound=True)   # or a line every 30 s
        self.step = self.saved = self.checked = 0  # checked: the step of the rule's last check
        self.generators = {**{f"init {k}": g for k, g in enumerate(gens)},
                           **{f"{kind} {k}": g for (kind, k), g in streams.items()
                              if kind != "own"}}

    def resume(self, state: dict) -> None:
        """Go on from the checkpoint ``state`` (tms.engine.checkpoint.pack)."""
        self.step, self.live, self.model, self.opt, self.results = checkpoint.unpack(
            state, self.losses, self.generators)
        self.saved = self.checked = self.step
        self.bar.resume(self.step)                    # says so, in a line of its own

    def train(self, ckpt: checkpoint.Checkpoints | None, name: str) -> list[Result]:
        """The step loop, to the end of every instance; the results in the instances' order."""
        sched = self.sched
        self.grad = torch.empty_like(self.model.flat)
        self.steps.regroup(self.live, self.model)
        while self.live and self.step < sched.max_steps:
            self.steps(self.model, self.grad, self.loss[:len(self.live)])
            self.opt.step([self.model.flat], [self.grad], self.workers)
            self.pending.append(self.loss[:len(self.live)].clone())
            self.step += 1
            self.bar.update(1)
            due = self.step % sched.check_every == 0 or self.step == sched.max_steps  # a check
            if due or self.step in self.cap_steps:
                self._check(due)
                if due and ckpt and self.live and ckpt.due(self.saved, self.step):
                    self._save(ckpt, name)
        self.bar.close()
        self.collect()
        return [self.results[k] for k in range(len(self.insts))]

    def _check(self, due: bool) -> None:
        """A check of the rule (``due``) or a cap: the diverged, stopped and capped models out."""
        step, live, caps, losses = self.step, self.live, self.caps, self.losses
        self.collect()                            # the copies of the last check, long arrived
        block = torch.stack(self.pending).cpu().numpy()      # (steps since last flush, live)
        self.pending.clear()
        losses[live, step - len(block):step] = block.T      # live instances share the step
        ending = [r for r, k in enumerate(live) if due or caps[k] == step]
        since = losses[live, self.checked:step].T            # since the rule's last check
        over = diverged(since, np.maximum(self.first_loss(live), self.zero[live]),
                        self.sched.diverge_factor)
        bad = [r for r in ending if over[r]]
        self._finish(bad, False, diverged=True)
        stop = [r for r, k in enumerate(live) if due and r not in bad
                and window_says_stop(losses[k, :step], self.sched.window)]
        capped = [r for r in ending if caps[live[r]] <= step and r not in stop + bad]
        self._finish(capped, False)
        self._finish(stop, True)
        stop += bad + capped
        if stop:
            self._drop(stop)
        self.bar.update(0, active=len(self.live), loss=float(block[-1].mean()))
        self.checked = step if due else self.checked

    def first_loss(self, ks: list[int]) -> np.ndarray:
        """The first minibatch loss of the instances ``ks`` (original indices), of their loss
        scale: a resumed one's start's, else its first step's in this stack."""
        return np.where(np.isnan(self.first[ks]), self.losses[ks, 0], self.first[ks])

    def _finish(self, rows: list[int], stopped: bool, diverged: bool = False) -> None:
        """The models of the stack's rows ``rows`` sent to the host, finished at this step (with
        keep_state, their Adam moments after their weights, and their streams' states)."""
        if not rows:
            return
        ks, at = [self.live[r] for r in rows], self.model.rows(rows)
        flat = self.model.flat[at]
        streams = None
        if self.keep_state:
            flat = torch.cat([flat, self.opt.m[0][at], self.opt.v[0][at]])
            streams = [self.steps.streams[stream(self.insts, k)].get_state().cpu().numpy()
                       .tobytes() for k in ks]
        self.copies.append((*_to_host(flat), [self.model.n_d[r] for r in rows], ks, self.step,
                            stopped, diverged, streams))

    def _drop(self, stop: list[int]) -> None:
        """The stack's rows ``stop`` taken out of the stack, its optimiser and its inputs."""
        keep = [r for r in range(len(self.live)) if r not in stop]
        self.opt.select(self.model.rows(keep))
        self.model = self.model.select(keep)
        self.grad = torch.empty_like(self.model.flat)
        self.live = [self.live[r] for r in keep]
        self.steps.regroup(self.live, self.model)

    def collect(self) -> None:
        """The results of the finished models, once their copies have arrived."""
        for flat, wait, n_d, ks, step, stopped, diverged, streams in self.copies:
            wait()
            size = 2 * sum(n_d) + len(n_d)             # a sub-stack's rows; moments after them
            host = models.RaggedStack(flat[:size], n_d)
            for i, k in enumerate(ks):
                state = None
                if streams is not None:
                    at = host.rows([i]).cpu()
                    state = TrainState(*(flat[at + j * size].numpy().copy() for j in range(3)),
                                       self.begun[k] + step, float(self.first_loss([k])[0]),
                                       streams[i])
                self.results[k] = Result(host.W_in(i).numpy().copy(),
                                         host.W_out_T(i).T.numpy().copy(),
                                         host.b(i).numpy().copy(), self.begun[k] + step, stopped,
                                         self.losses[k, :step].copy(), diverged, state)
        self.copies.clear()

    def _save(self, ckpt: checkpoint.Checkpoints, name: str) -> None:
        """The whole state of the stack saved to ``ckpt`` as ``name``."""
        self.collect()
        ckpt.save(name, checkpoint.pack(self.step, self.live, self.model, self.opt, self.losses,
                                        self.results, self.generators))
        self.saved = self.step


def _cap(inst: Instance, sched: Schedule) -> int:
    """The step an instance leaves its stack at, at the latest: its own cap, at most the
    schedule's (tms.engine.grid.Instance.max_steps)."""
    return sched.max_steps if inst.max_steps is None else min(inst.max_steps, sched.max_steps)


def _train_bucket(spec: StackSpec, insts: Sequence[Instance], workers: WorkerPool = SERIAL,
                  ckpt: checkpoint.Checkpoints | None = None, name: str = "",
                  matmul_dtype: torch.dtype | None = None, state: dict | None = None
                  ) -> list[Result]:
    """Train one stack of ``spec`` (its ``bucketed`` resolved) in this thread: the step loop of
    :func:`train_chunk`, resumed from the checkpoint ``state`` when given."""
    training = _Training(spec, insts, workers, matmul_dtype)
    if state is not None:
        training.resume(state)
    return training.train(ckpt, name)


def train_chunk(spec: StackSpec, instances: Sequence[Instance],
                ckpt: checkpoint.Checkpoints | None = None, reduce: Reduce | None = None) -> list:
    """Train ``instances`` as one ragged stack of ``spec``, in this process (no chunking);
    results in their order, each passed through ``reduce`` when given. Arguments as
    :func:`train_grid`.

    Two paths, equal up to rounding. The CPU path: torch's thread count becomes that many worker
    threads, kept for the whole stack, each running whole pieces of work (a group of instances
    on a piece of the batch, tms.engine.models.loss_and_grads) on one intra-op thread (no barrier
    per small operation), so the numbers never depend on the thread count. The GPU path
    (``spec.bucketed``; None: on CUDA, or for bf16): the stack ordered by n_d and each bucket of
    equal n_d computed by batched matmuls (tms.engine.models.bucketed_loss_and_grads), so the
    operations of a step do not grow with the models in a bucket; no host synchronisation
    between the stopping rule's checks; finished models copied to the host asynchronously
    through pinned memory while training goes on (collected at the next check). ``reduce``
    runs after training, outside both paths' thread and precision settings; with ``ckpt``, what
    it returns is what the stack's final checkpoint holds."""
    device, precision = spec.device, spec.precision
    _as_scale(spec.scale, spec.n_s, device)
    if spec.bucketed is None:
        spec = dataclasses.replace(spec, bucketed=precisions.gpu_path(device, precision))
    n_workers = (1 if spec.bucketed or torch.device(device).type == "cuda"
                 else torch.get_num_threads())
    name = "stack-" + checkpoint.digest(spec.n_s, instances, spec.sched, spec.relu, spec.bias,
                                        device, None if spec.scale is None else list(spec.scale),
                                        precision, spec.bucketed, spec.keep_state)
    state = ckpt.load(name, device) if ckpt else None
    if state is not None and state["done"]:
        return state["results"]
    with precisions.matmul_precision(precision, device) as matmul_dtype:
        if matmul_dtype is not None and not spec.bucketed:
            raise ValueError(f"precision {precision!r} needs the bucketed (GPU) path")
        with torch_threads(None if spec.bucketed else 1), WorkerPool(n_workers) as workers:
            results = _train_bucket(spec, instances, workers, ckpt, name, matmul_dtype, state)
    out = results if reduce is None else reduce(instances, results)
    if len(out) != len(instances):
        raise ValueError(f"reduce returned {len(out)} items for {len(instances)} instances")
    if ckpt:
        ckpt.save(name, {"done": True, "results": out})
    return out


#: What a chunk's results may be turned into where they were trained (:func:`train_chunk`):
#: ``reduce(instances, results)`` returns one item per instance, in their order.
Reduce = Callable[[Sequence[Instance], list[Result]], list]


def local_map(fn: Callable[[list[Instance]], list], chunks: list[list[Instance]]
              ) -> Iterator[list]:
    """The in-process executor: the chunks one after another, each trained when the caller
    asks for its results (so only one chunk's results exist at a time)."""
    return map(fn, chunks)


def train_chunks(spec: StackSpec, instances: Sequence[Instance],
                 memory_budget_mb: float | None = None, executor: Callable = local_map,
                 ckpt: checkpoint.Checkpoints | None = None, reduce: Reduce | None = None
                 ) -> Iterator[tuple[list[int], list]]:
    """Train every instance of a grid of one n_s, chunk by chunk: yields (indices into
    ``instances``, their results or ``reduce``'s items, in that order) as each chunk finishes,
    in the order of tms.engine.grid.plan_chunks. Arguments and errors as :func:`train_grid`,
    raised before any training."""
    if not instances:
        raise ValueError("the grid is empty: nothing to train")
    for k, inst in enumerate(instances):
        if inst.begun >= _cap(inst, spec.sched):
            raise ValueError(f"instance {k}: a start at step {inst.begun} leaves no step under "
                             f"max_steps = {_cap(inst, spec.sched)}")
    _as_scale(spec.scale, spec.n_s, "cpu")
    precisions.check(spec.precision, spec.device)
    if spec.bucketed is None:
        spec = dataclasses.replace(spec, bucketed=precisions.gpu_path(spec.device,
                                                                      spec.precision))
    chunks = ([list(range(len(instances)))] if memory_budget_mb is None
              else plan_chunks(spec.n_s, instances, spec.sched, memory_budget_mb, spec.bucketed))
    fn = functools.partial(train_chunk, spec, ckpt=ckpt, reduce=reduce)
    return zip(chunks, executor(fn, [[instances[k] for k in c] for c in chunks]))


def train_grid(spec: StackSpec, instances: Sequence[Instance],
               memory_budget_mb: float | None = None, executor: Callable = local_map,
               ckpt: checkpoint.Checkpoints | None = None, reduce: Reduce | None = None) -> list:
    """Train every instance of a grid of one n_s, as ``spec`` says (tms.engine.grid.StackSpec:
    n_s, the schedule, ReLU or linear, bias, scale, device, precision, path); results in the
    order of ``instances`` (each passed through ``reduce`` when given: :data:`Reduce`, run where
    its chunk trained).

    The instances form ragged stacks (no padding of n_d): one, or with ``memory_budget_mb``
    as many as tms.engine.grid.plan_chunks needs, trained by ``executor(fn, chunks)`` (which
    returns an iterator of fn(chunk) for every chunk, in order: :func:`local_map`, or
    tms.engine.executor.ray_map for Ray tasks); on the CPU path the results do not depend on the
    chunking (on the GPU path, up to rounding: tms.engine.grid.plan_chunks).
    :func:`train_chunks` hands them over chunk by chunk instead. ``ckpt``: where each stack
    saves its state every ``ckpt.every`` steps and resumes from it (tms.engine.checkpoint); the
    results are the same bytes as without. Raises ValueError on an empty grid, an n_d outside
    [1, n_s], a start with no step left under its cap, a scale that is not n_s positive finite
    numbers, a budget too small for one model, or tf32 off CUDA.
    """
    out: list = [None] * len(instances)
    for chunk, results in train_chunks(spec, instances, memory_budget_mb, executor, ckpt, reduce):
        for k, res in zip(chunk, results):
            out[k] = res
    return out


def stack_of(results: Sequence[Result], n_s: int, relu: bool, device: str = "cpu",
             bias: bool = True) -> AutoencoderStack:
    """Rebuild a padded stack from trained results (for held-out scoring or statistics);
    ``bias=False`` for results of a bias-free run."""
    n_d = [r.W_in.shape[0] for r in results]
    n_h = max(n_d)
    W_in = torch.zeros(len(results), n_h, n_s, device=device)
    W_out = torch.zeros(len(results), n_s, n_h, device=device)
    for k, r in enumerate(results):
        W_in[k, :n_d[k]] = torch.from_numpy(r.W_in)
        W_out[k, :, :n_d[k]] = torch.from_numpy(r.W_out)
    b = torch.from_numpy(np.stack([r.b for r in results])).to(device)
    return AutoencoderStack(W_in, W_out, b, n_d, relu, bias)
