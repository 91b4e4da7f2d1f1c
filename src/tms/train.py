"""The batched trainer: a whole grid of one n_s trained in lockstep.

Instances (each with its own p, n_d, seed and learning rate) are grouped into buckets of
similar n_d (:func:`buckets`); each bucket is one stack of models trained together by
batched matmuls, with fresh data every step from each instance's own seeded generator.
The stopping rule (:func:`window_says_stop`) is checked per instance every
``check_every`` steps; a stopped instance is dropped from the stack. So is a diverged one
(:func:`diverged`: a non-finite minibatch loss, or one above ``diverge_factor`` times its first),
flagged ``Result.diverged``; the other instances of its stack train on unaffected. Every final model is
scored on the fixed held-out sample (:func:`heldout_loss`), never on its last minibatch.

Two options serve the notes on toy autoencoding: ``bias=False`` trains bias-free stacks
(b ≡ 0, not optimised), and ``scale`` (one factor s_i per feature, shared by every instance)
multiplies every sampled x, training and held-out alike, so model and target see s ⊙ x.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from tms import checkpoint, data
from tms.models import AutoencoderStack, BatchedAdam, forward, init_stack, loss_and_grads


@dataclass(frozen=True)
class Instance:
    """One model of a grid: feature probability p, hidden width n_d, seed, learning rate."""

    p: float
    n_d: int
    seed: int
    lr: float


@dataclass(frozen=True)
class Schedule:
    """Batch size, Adam eps, stopping-rule window and check interval, step cap, and the
    divergence bound: a minibatch loss above ``diverge_factor`` times the instance's first
    one (inf: only non-finite losses count as divergence)."""

    batch_size: int
    adam_eps: float
    window: int
    check_every: int
    max_steps: int
    diverge_factor: float = math.inf


@dataclass
class Result:
    """A trained instance: weights (W_in (n_d, n_s), W_out (n_s, n_d), b (n_s)) as float32
    numpy arrays, the number of steps taken, whether the stopping rule fired (False: the
    step cap ended it), the training loss of every step (per-feature MSE, minibatch), and
    whether training diverged (:func:`diverged`; then the weights are those at that check)."""

    W_in: np.ndarray
    W_out: np.ndarray
    b: np.ndarray
    steps: int
    stopped: bool
    train_losses: np.ndarray
    diverged: bool = False


def window_says_stop(losses: np.ndarray, window: int) -> bool:
    """The stopping rule: stop once more than 2·window losses exist and the mean of the last
    window is not below the mean of the window before it, i.e.
    log10(mean previous) − log10(mean last) ≤ 0 (REFERENCE.md; paper: window 100)."""
    if len(losses) <= 2 * window:
        return False
    prev = float(np.mean(losses[-2 * window:-window]))
    last = float(np.mean(losses[-window:]))
    return math.log10(prev) - math.log10(last) <= 0


def diverged(block: np.ndarray, first: np.ndarray, factor: float) -> np.ndarray:
    """Which instances diverged: block (steps, I) holds the minibatch losses since the last
    check, first (I,) each instance's first loss. True where some loss is NaN or ±inf or
    exceeds ``factor`` · first. Returns a boolean array (I,)."""
    return ~np.isfinite(block).all(axis=0) | (block.max(axis=0, initial=-np.inf) > factor * first)


def buckets(n_d: Sequence[int], max_waste: float = 0.25) -> list[list[int]]:
    """Group instance indices into stacks of similar n_d.

    Instances are sorted by n_d and cut greedily so that each bucket's padded work
    (count · max n_d) exceeds its useful work (Σ n_d) by at most ``max_waste``.
    Returns lists of indices into ``n_d``; every index appears exactly once.
    """
    order = sorted(range(len(n_d)), key=lambda k: (n_d[k], k))
    out: list[list[int]] = []
    for k in order:
        if out:
            trial = out[-1] + [k]
            padded = len(trial) * max(n_d[i] for i in trial)
            if padded <= (1 + max_waste) * sum(n_d[i] for i in trial):
                out[-1] = trial
                continue
        out.append([k])
    return out


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


def _scaled(x: torch.Tensor, scale: torch.Tensor | None) -> torch.Tensor:
    """x (I, B, n_s) times the per-feature factors ``scale`` (n_s,), in place; x if None."""
    return x if scale is None else x.mul_(scale)


def heldout_loss(model: AutoencoderStack, p: torch.Tensor, seed: int, n_vectors: int,
                 max_elements: int = 1 << 26,
                 scale: Sequence[float] | torch.Tensor | None = None) -> np.ndarray:
    """Per-feature MSE (I,) of each instance on the fixed held-out sample.

    The sample is ``n_vectors`` vectors drawn with ``seed`` (tms.data.heldout_uniform), the same
    uniforms for every instance, each turned into x with its own p (and multiplied by
    ``scale``, shape (n_s,), when given). Averaged over vectors and features; accumulated in
    float64. ``max_elements`` bounds the size of one chunk of inputs (instances × vectors × n_s).
    Raises ValueError for a scale that is not n_s positive finite factors.
    """
    total = torch.zeros(len(p), dtype=torch.float64, device=p.device)
    n_s = model.W_in.shape[2]
    scale = _as_scale(scale, n_s, p.device)
    chunk = int(min(8192, max(256, max_elements // (len(p) * n_s))))
    with torch.no_grad():
        for v in data.heldout_uniform(seed, n_vectors, n_s, chunk, device=p.device):
            x = _scaled(data.sparse_from_uniform(v, p), scale)
            _, y = forward(model, x)
            total += (y - x).pow(2).sum(dim=(1, 2), dtype=torch.float64)
    return (total / (n_vectors * n_s)).cpu().numpy()


def _train_bucket(n_s: int, insts: Sequence[Instance], sched: Schedule, relu: bool,
                  device: str, desc: str, bias: bool, scale: torch.Tensor | None,
                  ckpt: checkpoint.Checkpoints | None = None, name: str = ""
                  ) -> list[Result]:
    state = ckpt.load(name) if ckpt else None
    if state is not None and state["done"]:
        return state["results"]
    gens = data.generators([i.seed for i in insts], device)
    model = init_stack(n_s, [i.n_d for i in insts], gens, relu, bias)
    p = torch.tensor([i.p for i in insts], device=device)
    opt = BatchedAdam(model.params, torch.tensor([i.lr for i in insts], device=device),
                      sched.adam_eps)
    live = list(range(len(insts)))           # original index of each stack row
    losses = np.empty((len(insts), sched.max_steps), dtype=np.float32)   # minibatch losses
    results: dict[int, Result] = {}
    pending: list[torch.Tensor] = []
    buf = torch.empty(len(insts), sched.batch_size, n_s, device=device)

    def finish(rows: list[int], step: int, stopped: bool, diverged: bool = False) -> None:
        for r in rows:
            k = live[r]
            d = model.n_d[r]
            results[k] = Result(model.W_in[r, :d].cpu().numpy().copy(),
                                model.W_out[r, :, :d].cpu().numpy().copy(),
                                model.b[r].cpu().numpy().copy(), step, stopped,
                                losses[k, :step].copy(), diverged)

    bar = tqdm(total=sched.max_steps, desc=desc, unit="step", mininterval=2.0, leave=False,
               disable=None)               # no bar when stderr is not a terminal
    step = saved = 0
    if state is not None:
        step, live, model, p, results = checkpoint.unpack(state, model, opt, losses, gens)
        saved = step
        bar.write(f"{desc}: resuming from the checkpoint at step {step}")
        bar.update(step)
    while live and step < sched.max_steps:
        x = _scaled(data.sparse_from_uniform(data.uniform([gens[k] for k in live],
                                                          sched.batch_size, n_s,
                                                          out=buf[:len(live)]), p), scale)
        loss, grads = loss_and_grads(model, x)
        opt.step(model.params, grads)
        pending.append(loss)
        step += 1
        bar.update(1)
        if step % sched.check_every == 0 or step == sched.max_steps:
            block = torch.stack(pending).cpu().numpy()      # (steps since last check, live)
            pending.clear()
            losses[live, step - len(block):step] = block.T   # live instances share the step
            bad = np.flatnonzero(diverged(block, losses[live, 0], sched.diverge_factor)).tolist()
            finish(bad, step, False, diverged=True)
            stop = [r for r, k in enumerate(live)
                    if r not in bad and window_says_stop(losses[k, :step], sched.window)]
            if step == sched.max_steps:
                finish([r for r in range(len(live)) if r not in stop + bad], step, False)
            finish(stop, step, True)
            stop += bad
            if stop:
                keep = torch.tensor([r for r in range(len(live)) if r not in stop],
                                    dtype=torch.long, device=device)
                model = model.select(keep)
                opt.select(keep)
                p = p[keep]
                live = [live[r] for r in keep.tolist()]
            bar.set_postfix(active=len(live))
            if ckpt and live and ckpt.due(saved, step):
                ckpt.save(name, checkpoint.pack(step, live, model, opt, p, losses, results, gens))
                saved = step
    bar.close()
    out = [results[k] for k in range(len(insts))]
    if ckpt:
        ckpt.save(name, {"done": True, "results": out})
    return out


def train_grid(n_s: int, instances: Sequence[Instance], sched: Schedule, relu: bool = True,
               device: str = "cpu", max_waste: float = 0.25, label: str = "",
               bias: bool = True, scale: Sequence[float] | None = None,
               ckpt: checkpoint.Checkpoints | None = None) -> list[Result]:
    """Train every instance of a grid of one n_s; results in the order of ``instances``.

    Same code on CPU and CUDA (``device`` comes from params). ``bias=False``: bias-free
    models (Result.b is zero). ``scale``: n_s positive factors multiplying every sampled
    feature vector (the data is s ⊙ x). ``ckpt``: where each stack saves its state every
    ``ckpt.every`` steps and resumes from it (tms.checkpoint); the results are the same
    bytes as without. Raises ValueError on an empty grid, an n_d outside [1, n_s], or a
    scale that is not n_s positive finite numbers.
    """
    if not instances:
        raise ValueError("the grid is empty: nothing to train")
    scale = _as_scale(scale, n_s, device)
    out: list[Result | None] = [None] * len(instances)
    groups = buckets([i.n_d for i in instances], max_waste)
    for g, idx in enumerate(groups):
        insts = [instances[k] for k in idx]
        desc = (f"{label}n_s={n_s} {'relu' if relu else 'linear'} stack {g + 1}/{len(groups)}"
                f" ({len(idx)} models, n_d≤{max(i.n_d for i in insts)})")
        name = "stack-" + checkpoint.digest(n_s, insts, sched, relu, bias, device,
                                            None if scale is None else scale.tolist())
        for k, res in zip(idx, _train_bucket(n_s, insts, sched, relu, device, desc, bias,
                                             scale, ckpt, name)):
            out[k] = res
    return out  # type: ignore[return-value]


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
