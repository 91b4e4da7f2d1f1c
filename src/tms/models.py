"""Instance-stacked models: many small autoencoders evaluated by one batched matmul.

The ReLU-output autoencoder of Elhage et al. (2022) as studied in the Persian Rug paper
(eq. 1): f(x) = ReLU(W_out W_in x + b), W_in (n_d × n_s), W_out (n_s × n_d), b (n_s), and its
linear twin f(x) = W_out W_in x + b. Every tensor carries a leading instance axis; instances
of one stack share n_s and a padded hidden width n_h = max n_d. Padded hidden units have
zero rows in W_in and zero columns in W_out; their gradients are then exactly zero, so they
stay zero under Adam and never touch the output (no mask is needed).

A stack built with ``bias=False`` has b ≡ 0, left out of ``params`` and never optimised: the
linear one is the notes' bias-free autoencoder x ↦ ABx with A = W_out, B = W_in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Sequence

import torch


@dataclass
class AutoencoderStack:
    """Parameters of I stacked autoencoders.

    W_in: (I, n_h, n_s); W_out: (I, n_s, n_h); b: (I, n_s); relu: ReLU output (True) or
    identity (the linear twin). n_d: the true hidden width of each instance (≤ n_h).
    bias: False for a bias-free stack (b stays exactly zero and is not in ``params``).
    """

    W_in: torch.Tensor
    W_out: torch.Tensor
    b: torch.Tensor
    n_d: list[int]
    relu: bool = True
    bias: bool = True

    @property
    def params(self) -> list[torch.Tensor]:
        """The optimised tensors: [W_in, W_out, b], or [W_in, W_out] without bias."""
        return [self.W_in, self.W_out, self.b] if self.bias else [self.W_in, self.W_out]

    def select(self, keep: torch.Tensor) -> "AutoencoderStack":
        """The sub-stack of the instances indexed by ``keep`` (a long tensor)."""
        idx = keep.tolist()
        return AutoencoderStack(self.W_in[keep], self.W_out[keep], self.b[keep],
                                [self.n_d[i] for i in idx], self.relu, self.bias)


def init_stack(n_s: int, n_d: Sequence[int], gens: Sequence[torch.Generator],
               relu: bool = True, bias: bool = True) -> AutoencoderStack:
    """PyTorch's default ``nn.Linear`` initialisation, one instance per generator.

    W_in ~ U(±1/sqrt(n_s)) (fan-in n_s); W_out, b ~ U(±1/sqrt(n_d)) (fan-in n_d of that
    instance). Padding to max(n_d) is zero. With ``bias=False`` b is zero and not drawn (W_in
    and W_out are the same draws as with a bias). Raises ValueError if some n_d is not in
    [1, n_s].
    """
    if any(not 1 <= d <= n_s for d in n_d):
        raise ValueError(f"every n_d must be in [1, n_s = {n_s}], got {list(n_d)}")
    n_h, dev = max(n_d), gens[0].device
    W_in = torch.zeros(len(n_d), n_h, n_s, device=dev)
    W_out = torch.zeros(len(n_d), n_s, n_h, device=dev)
    b = torch.zeros(len(n_d), n_s, device=dev)
    for k, (d, g) in enumerate(zip(n_d, gens)):
        bound_in, bound_out = 1 / math.sqrt(n_s), 1 / math.sqrt(d)
        W_in[k, :d].uniform_(-bound_in, bound_in, generator=g)
        W_out[k, :, :d].uniform_(-bound_out, bound_out, generator=g)
        if bias:
            b[k].uniform_(-bound_out, bound_out, generator=g)
    return AutoencoderStack(W_in, W_out, b, list(n_d), relu, bias)


def forward(model: AutoencoderStack, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Hidden h = W_in x (I, B, n_h) and output f(x) (I, B, n_s) for x of shape (I, B, n_s)."""
    h = torch.bmm(x, model.W_in.transpose(1, 2))
    z = torch.baddbmm(model.b.unsqueeze(1), h, model.W_out.transpose(1, 2))
    return h, (torch.relu_(z) if model.relu else z)


def loss_and_grads(model: AutoencoderStack, x: torch.Tensor
                   ) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Per-instance per-feature MSE (I,) of reconstructing x, and its gradients.

    The loss of instance k is mean over the B vectors and n_s features of (f(x) − x)²
    (REFERENCE.md: the authors' normalisation). Gradients are written out by hand (five
    batched matmuls) and match autograd (tests/test_models.py); one per tensor of
    model.params, same shapes (no bias gradient for a bias-free stack).
    """
    n_inst, batch, n_s = x.shape
    h, y = forward(model, x)
    err = y - x
    loss = err.pow(2).mean(dim=(1, 2))
    dz = err.mul_(2.0 / (batch * n_s))
    if model.relu:
        dz.mul_(y > 0)
    g_out = torch.bmm(dz.transpose(1, 2), h)
    dh = torch.bmm(dz, model.W_out)
    g_in = torch.bmm(dh.transpose(1, 2), x)
    return loss, ([g_in, g_out, dz.sum(dim=1)] if model.bias else [g_in, g_out])


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

    def step(self, params: list[torch.Tensor], grads: list[torch.Tensor]) -> None:
        self.t += 1
        b1, b2 = self.betas
        bc1, bc2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m.lerp_(g, 1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = v.sqrt().div_(math.sqrt(bc2)).add_(self.eps)
            lr = (self.lr / bc1).reshape(-1, *([1] * (p.dim() - 1)))
            p.addcdiv_(m * lr, denom, value=-1.0)

    def select(self, keep: torch.Tensor) -> None:
        """Keep only the state of the instances indexed by ``keep``."""
        self.lr = self.lr[keep]
        self.m = [m[keep] for m in self.m]
        self.v = [v[keep] for v in self.v]
