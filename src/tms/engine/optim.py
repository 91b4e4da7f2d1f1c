"""Optimisers for stacks of models: one update for the whole stack.

Every tensor carries a leading instance axis I. :class:`BatchedAdam` (the Persian Rug grids)
has one learning rate per instance, lr an (I,) tensor, and the update of ``torch.optim.Adam``
written so that each element's update is the same wherever it sits in the stack (a chunk of a
stack trains bit for bit as in the whole stack). :func:`make_optimizer` (the tied stacks, whose
instances share a learning rate) is torch.optim's own Adam or AdamW over the stacked tensors, in
torch's fused kernels, or :class:`PlainSgd`.
"""

from __future__ import annotations

import math

import torch

from tms.engine.threads import SERIAL, WorkerPool, near_equal

#: Optimiser names accepted by :func:`make_optimizer` (params: ``optimizer``).
OPTIMIZERS = ("adam", "adamw", "sgd")
#: Adam's eps, torch's default (the authors use torch's AdamW with its defaults).
ADAM_EPS = 1e-8
#: Adam shares a tensor among the workers in blocks of at least this many elements: handing
#: work to a thread costs about as much as updating that many. Measured by bench/pieces.py
#: (2 cores, ms per step on one thread against two): 0.73–0.85 against 1.15–1.40 at 2^18
#: elements, about even at 2^19, 3.8–4.1 against 2.5–2.8 at 2^20. Small stacks (a lone fig. 3
#: model, the n_s 32 and 64 grids) stay on one thread.
ADAM_BLOCK = 150_000
#: Steps of bias corrections a resumed stack's BatchedAdam makes at once (one copy to the device).
CORRECTION_STEPS = 512


class BatchedAdam:
    """Adam (Kingma & Ba) with one learning rate per instance, in place on stacked params.

    Same update as ``torch.optim.Adam`` (no weight decay, no amsgrad):
    p ← p − lr_k/(1 − β1^t) · m / (sqrt(v/(1 − β2^t)) + eps). lr: (I,) tensor. ``begun``: the
    steps each row of the params took before (a long tensor of their first axis' length, on
    the CPU; None: none), so that a row resumed from a kept state (its moments set by the
    caller) counts t from there: the same bytes as if it had never stopped.
    """

    def __init__(self, params: list[torch.Tensor], lr: torch.Tensor, eps: float,
                 betas: tuple[float, float] = (0.9, 0.999), begun: torch.Tensor | None = None):
        self.lr, self.eps, self.betas, self.t, self.begun = lr, eps, betas, 0, begun
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]
        # The update's scratch, kept: a fresh tensor of a stack's size each step costs more in
        # page faults than the update (16 × 256 × 4096 on 2 cores: 45 ms a step against 30 ms).
        # Not state: neither pickled into a checkpoint nor copied by select.
        self.buf = [torch.empty_like(p) for p in params]

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "buf"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.buf = [torch.empty_like(m) for m in self.m]

    def step(self, params: list[torch.Tensor], grads: list[torch.Tensor],
             workers: WorkerPool = SERIAL) -> None:
        """One update. Only exactly rounded elementwise operations (no fused multiply-add),
        so every element's update is the same wherever it sits in the tensor: a chunk of a
        stack trains bit for bit as in the whole stack, and the threads of ``workers`` (each
        with one intra-op torch thread) may share the rows of every tensor, in blocks of at
        least ADAM_BLOCK elements."""
        self.t += 1
        for k, (p, g) in enumerate(zip(params, grads)):
            column = (-1, *([1] * (p.dim() - 1)))
            bc1, root_bc2 = self._corrections(p.device)
            tensors = (p, g, self.m[k], self.v[k], self.buf[k], self.lr.reshape(column))
            per_row = isinstance(bc1, torch.Tensor)          # rows resumed at their own t
            if per_row:
                tensors += (bc1.reshape(column), root_bc2.reshape(column))
            scalars = () if per_row else (bc1, root_bc2)
            blocks = max(1, min(workers.n, p.shape[0], p.numel() // ADAM_BLOCK))
            workers.map(lambda rows: self._update(*(t[rows] for t in tensors), *scalars),
                        near_equal(p.shape[0], blocks))

    def _corrections(self, device: torch.device) -> tuple:
        """Adam's bias corrections 1 − β1^t and sqrt(1 − β2^t) of this step: two floats, or
        with ``begun`` two float32 tensors of one value per row, each the float of its row's t
        (the same numbers torch makes of the floats). Those are made on the host for the next
        :data:`CORRECTION_STEPS` steps of every distinct start at once and sent to the device
        in one copy: a copy each step would wait for the GPU's queue each step."""
        b1, b2 = self.betas
        if self.begun is None:
            return 1 - b1 ** self.t, math.sqrt(1 - b2 ** self.t)
        table = getattr(self, "_table", None)
        if table is None or table[0] is not self.begun or self.t >= table[1] + CORRECTION_STEPS:
            starts, row = torch.unique(self.begun, return_inverse=True)
            steps = (starts + torch.arange(self.t, self.t + CORRECTION_STEPS)[:, None]).tolist()
            self._table = table = (
                self.begun, self.t, row.to(device),
                torch.tensor([[1 - b1 ** t for t in at] for at in steps]).to(device),
                torch.tensor([[math.sqrt(1 - b2 ** t) for t in at] for at in steps]).to(device))
        _, first, row, bc1, root_bc2 = table
        return bc1[self.t - first][row], root_bc2[self.t - first][row]

    def _update(self, p: torch.Tensor, g: torch.Tensor, m: torch.Tensor, v: torch.Tensor,
                buf: torch.Tensor, lr: torch.Tensor, bc1: float | torch.Tensor,
                root_bc2: float | torch.Tensor) -> None:
        """The Adam update of one block of rows, in place, with the scratch ``buf`` (p's shape)
        and the bias corrections ``bc1`` and ``root_bc2`` (floats, or tensors of the block's
        rows)."""
        b1, b2 = self.betas
        torch.mul(g, 1 - b1, out=buf)
        m.mul_(b1).add_(buf)
        torch.mul(g, g, out=buf)
        v.mul_(b2).add_(buf.mul_(1 - b2))
        torch.sqrt(v, out=buf)
        buf.div_(root_bc2).add_(self.eps)
        torch.div(m, buf, out=buf)
        p.sub_(buf.mul_(lr / bc1))

    def select(self, keep: torch.Tensor) -> None:
        """Keep only the state of the rows indexed by ``keep``."""
        self.lr = self.lr[keep]
        self.m = [m[keep] for m in self.m]
        self.v = [v[keep] for v in self.v]
        self.buf = [torch.empty_like(m) for m in self.m]
        if self.begun is not None:
            self.begun = self.begun[keep.cpu()]


class StackOptimizer:
    """A torch.optim optimiser over stacked params, stepped with the gradients given:
    ``step(params, grads)`` sets each param's ``.grad`` to its gradient, then steps."""

    def __init__(self, opt: torch.optim.Optimizer):
        self.opt = opt

    def step(self, params: list[torch.Tensor], grads: list[torch.Tensor]) -> None:
        for p, g in zip(params, grads):
            p.grad = g
        self.opt.step()


class PlainSgd:
    """Plain gradient descent, W ← W − lr·g in place (W: (I, n, m)), the stacks' SGD: the update
    of ``torch.optim.SGD`` without momentum or weight decay as the same operation
    (``W.add_(g, alpha=-lr)``), so the same bytes, without torch.optim's per-step bookkeeping
    (hooks, profiler records, parameter groups). On fig. 4's stack (8 × 16 weights, 30
    instances) that bookkeeping cost as much as the rest of the step or more: 0.06–0.07 ms a
    step against 0.10–0.19 ms with torch.optim.SGD on a 2-core AMD EPYC (bench/small_steps.py);
    fig. 5's stage, 100,000 steps, 12 s against 20 s. Adam and AdamW stay torch's
    (:func:`make_optimizer`), one fused kernel a step."""

    def __init__(self, lr: float):
        self.lr = lr

    def step(self, params: list[torch.Tensor], grads: list[torch.Tensor]) -> None:
        for p, g in zip(params, grads):
            p.add_(g, alpha=-self.lr)


def make_optimizer(name: str, params: list[torch.Tensor], lr: float,
                   weight_decay: float = 0.0) -> StackOptimizer | PlainSgd:
    """torch.optim's optimiser ``name`` (one of :data:`OPTIMIZERS`) over stacked params, with
    one learning rate ``lr`` for every instance: the update of each element is torch's, so each
    instance trains as it would alone with the same optimiser.

    Adam and AdamW (betas (0.9, 0.999), eps :data:`ADAM_EPS`; weight_decay AdamW's, torch's
    default 0.01 in the papers) run torch's fused kernel, one pass over the stack per step (on
    CPU 16 × 256 × 4096 weights: 7 ms a step against 45 ms for the same update op by op); SGD
    is plain gradient descent, p ← p − lr·g (:class:`PlainSgd`, torch's SGD to the bit). Raises
    ValueError on an unknown name.
    """
    if name == "sgd":
        return PlainSgd(lr)
    if name == "adam":
        return StackOptimizer(torch.optim.Adam(params, lr=lr, eps=ADAM_EPS, fused=True))
    if name == "adamw":
        return StackOptimizer(torch.optim.AdamW(params, lr=lr, eps=ADAM_EPS,
                                                weight_decay=weight_decay, fused=True))
    raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {name!r}")
