"""Batched optimisers: one update for a whole stack of models, one learning rate per instance.

Every tensor carries a leading instance axis I; lr is an (I,) tensor. The updates are those of
``torch.optim.Adam``, ``torch.optim.AdamW`` and plain gradient descent, written so that each
element's update is the same wherever it sits in the stack (a chunk of a stack trains bit for
bit as in the whole stack).
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


class BatchedAdam:
    """Adam (Kingma & Ba) with one learning rate per instance, in place on stacked params.

    Same update as ``torch.optim.Adam`` (no weight decay, no amsgrad):
    p ← p − lr_k/(1 − β1^t) · m / (sqrt(v/(1 − β2^t)) + eps). lr: (I,) tensor.
    """

    def __init__(self, params: list[torch.Tensor], lr: torch.Tensor, eps: float,
                 betas: tuple[float, float] = (0.9, 0.999)):
        self.lr, self.eps, self.betas, self.t = lr, eps, betas, 0
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]

    def step(self, params: list[torch.Tensor], grads: list[torch.Tensor],
             workers: WorkerPool = SERIAL) -> None:
        """One update. Only exactly rounded elementwise operations (no fused multiply-add),
        so every element's update is the same wherever it sits in the tensor: a chunk of a
        stack trains bit for bit as in the whole stack, and the threads of ``workers`` (each
        with one intra-op torch thread) may share the rows of every tensor, in blocks of at
        least ADAM_BLOCK elements."""
        self.t += 1
        for k, (p, g) in enumerate(zip(params, grads)):
            lr = self.lr.reshape(-1, *([1] * (p.dim() - 1)))
            tensors = (p, g, self.m[k], self.v[k], lr)
            blocks = max(1, min(workers.n, p.shape[0], p.numel() // ADAM_BLOCK))
            workers.map(lambda rows: self._update(*(t[rows] for t in tensors)),
                        near_equal(p.shape[0], blocks))

    def _update(self, p: torch.Tensor, g: torch.Tensor, m: torch.Tensor, v: torch.Tensor,
                lr: torch.Tensor) -> None:
        """The Adam update of one block of rows, in place, with one scratch tensor."""
        b1, b2 = self.betas
        bc1, bc2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        buf = torch.mul(g, 1 - b1)
        m.mul_(b1).add_(buf)
        torch.mul(g, g, out=buf)
        v.mul_(b2).add_(buf.mul_(1 - b2))
        torch.sqrt(v, out=buf)
        buf.div_(math.sqrt(bc2)).add_(self.eps)
        torch.div(m, buf, out=buf)
        p.sub_(buf.mul_(lr / bc1))

    def select(self, keep: torch.Tensor) -> None:
        """Keep only the state of the instances indexed by ``keep``."""
        self.lr = self.lr[keep]
        self.m = [m[keep] for m in self.m]
        self.v = [v[keep] for v in self.v]


class BatchedSGD:
    """Plain gradient descent with one learning rate per instance: p ← p − lr_k·g (lr: (I,))."""

    def __init__(self, lr: torch.Tensor):
        self.lr = lr

    def step(self, params: list[torch.Tensor], grads: list[torch.Tensor]) -> None:
        for p, g in zip(params, grads):
            p.sub_(g * self.lr.reshape(-1, *([1] * (p.dim() - 1))))


class BatchedAdamW(BatchedAdam):
    """AdamW (decoupled weight decay) with one learning rate per instance, like
    ``torch.optim.AdamW``: p ← p·(1 − lr_k·weight_decay), then the Adam step of
    :class:`tms.engine.optim.BatchedAdam`. lr: (I,); weight_decay ≥ 0 (torch's default 0.01)."""

    def __init__(self, params: list[torch.Tensor], lr: torch.Tensor, eps: float,
                 weight_decay: float):
        super().__init__(params, lr, eps)
        self.weight_decay = weight_decay

    def step(self, params: list[torch.Tensor], grads: list[torch.Tensor]) -> None:
        for p in params:
            p.mul_((1.0 - self.lr * self.weight_decay).reshape(-1, *([1] * (p.dim() - 1))))
        super().step(params, grads)


def make_optimizer(name: str, params: list[torch.Tensor], lr: torch.Tensor,
                   weight_decay: float = 0.0) -> BatchedSGD | BatchedAdam:
    """The batched optimiser ``name`` (one of :data:`OPTIMIZERS`) for stacked params.

    lr: (I,) per-instance learning rates; weight_decay: AdamW only (Adam and SGD have none).
    Adam and AdamW use betas (0.9, 0.999) and eps :data:`ADAM_EPS`. Raises ValueError on an
    unknown name.
    """
    if name == "sgd":
        return BatchedSGD(lr)
    if name == "adam":
        return BatchedAdam(params, lr, ADAM_EPS)
    if name == "adamw":
        return BatchedAdamW(params, lr, ADAM_EPS, weight_decay)
    raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {name!r}")
