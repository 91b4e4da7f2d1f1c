"""Tied-weight autoencoders of *Incidental polysemanticity*, instance-stacked (sections 2–4).

Symbols are the paper's: n features (inputs and outputs; the project's n_s), m neurons (the
hidden width; the project's n_d), W (n × m) the tied weight, its row W_i the *encoding* of
feature i, λ the l1 coefficient, σ the scale of the hidden-layer noise ξ ∈ R^m.

The model (section 2, section 3.1; docs/paper-gaps.md for what the authors' code does): the data are
the n basis vectors e_i, all of them every step; for e_i the hidden vector is h_i = W_i + ξ and
the output is ReLU(W h_i) ∈ R^n; there is no bias. The loss of one instance is

    L = Σ_i ‖ReLU(W h_i) − e_i‖² + λ Σ_ik |W_ik|,

squared errors summed over inputs and outputs (λ‖W‖₁ equals an l1 penalty on the hidden
activations, since the activation for e_i is W_i). The noise ξ is one vector per step shared by
the n inputs (the authors' code): bipolar (ξ_k = ±σ with equal probability, excess kurtosis −2)
or normal (ξ_k = σ·N(0, 1), excess kurtosis 0).

Every tensor carries a leading instance axis I: W is (I, n, m) and one batched matmul serves all
instances. Each instance has its own λ, σ, noise kind and seed; instances of one stack share n,
m, the optimiser and its learning rate. Same code on CPU and CUDA: the device is that of W.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from tms.core.progress import Progress
from tms.engine import precision as precisions
from tms.engine.optim import make_optimizer
from tms.engine.sampler import generators
from tms.engine.threads import torch_threads

#: Noise kinds accepted by :class:`HiddenNoise` (params: ``noise``).
NOISES = ("bipolar", "normal")
#: Noise is drawn this many steps at a time per instance (a fixed constant, so the draws of an
#: instance depend on its seed only, never on the stack it is trained in).
NOISE_BLOCK = 256
#: Below this many weights per stack a CPU step is short enough that a second thread costs more
#: in synchronisation than it saves (measured on a shared 2-core machine: 2–10× slower with two
#: threads up to 16 × 32 × 512): such stacks train on one thread.
SMALL_STACK = 1 << 20


def init_weights(n: int, m: int, gens: Sequence[torch.Generator]) -> torch.Tensor:
    """W of shape (I, n, m) with W_ik ~ N(0, 1/m) i.i.d. (docs/paper-gaps.md), instance k from
    gens[k].

    The encodings W_i then start with squared length ≈ 1 (section 2's assumption). Raises
    ValueError if n or m is below 1.
    """
    if n < 1 or m < 1:
        raise ValueError(f"n and m must be >= 1, got n = {n}, m = {m}")
    W = torch.empty(len(gens), n, m, device=gens[0].device)
    for k, g in enumerate(gens):
        W[k].normal_(0.0, 1.0 / math.sqrt(m), generator=g)
    return W


class Workspace:
    """The buffers of :func:`loss_and_grad` for one stack, kept from step to step: Z (I, n, n),
    and of W's shape (I, n, m) the gradient, a scratch for a product, |W| and the l1 term, and
    (made at the first step with noise) the noisy hidden vectors H. On CPU a fresh tensor of W's
    size each step costs more in page faults than its arithmetic (16 × 256 × 4096, 2 cores: the
    gradient product into a new tensor 58 ms against 44 ms into a kept one, sign(W) 23 ms
    against 7 ms; bench/kernels.py). The numbers are the same bytes with or without it."""

    def __init__(self, W: torch.Tensor):
        self.Z = W.new_empty(W.shape[0], W.shape[1], W.shape[1])
        self.grad, self.tmp = torch.empty_like(W), torch.empty_like(W)
        self.H: torch.Tensor | None = None

    def hidden(self, W: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
        """H = W + ξ (I, n, m) from ξ (I, m), into the kept buffer."""
        if self.H is None:
            self.H = torch.empty_like(W)
        return torch.add(W, xi.unsqueeze(1), out=self.H)


def loss_and_grad(W: torch.Tensor, lam: torch.Tensor, xi: torch.Tensor | None = None,
                  with_loss: bool = True, matmul_dtype: torch.dtype | None = None,
                  work: Workspace | None = None) -> tuple[torch.Tensor | None, torch.Tensor]:
    """The loss L (I,) of every instance and its gradient dL/dW (I, n, m), written out by hand.

    W: (I, n, m); lam: (I,) the l1 coefficients λ; xi: (I, m) this step's hidden noise, or None
    for none. With Z = H Wᵀ, H = W + ξ (rows h_i), E = ReLU(Z) − 1 and dZ = 2E·[Z > 0]:
    dL/dW = dZ W + dZᵀ H + λ sign(W) (tied weights: W is both decoder and encoder). Without
    noise H = W and the two products are one, (dZ + dZᵀ) W. The subgradient of |·| at 0 is 0.
    Without noise, −dL/dW_i is section 2's 4(1 − ‖W_i‖²)W_i − 4Σ_{j≠i} ReLU(W_i·W_j)W_j
    − λ sign(W_i) wherever the ReLUs are on. The loss is a sum (not a mean) of squared errors.
    ``with_loss=False`` skips the loss (None is returned in its place). matmul_dtype: the
    products' inputs and outputs in that dtype (tms.engine.precision.bmm; None: float32).
    ``work``: a :class:`Workspace` of this W's shape, whose buffers then hold Z, H and the
    returned gradient (valid until the next call with it); None: fresh tensors.
    """
    work = work or Workspace(W)
    if xi is None:
        H, Z = W, gram(W, matmul_dtype, work.Z)
    else:
        H = work.hidden(W, xi)
        Z = precisions.bmm(H, W.transpose(1, 2), matmul_dtype, out=work.Z)
    err = torch.relu(Z)
    err.diagonal(dim1=1, dim2=2).sub_(1.0)
    loss = None
    if with_loss:
        loss = err.pow(2).sum(dim=(1, 2)) + lam * torch.abs(W, out=work.tmp).sum(dim=(1, 2))
    dZ = err.mul_(Z > 0).mul_(2.0)
    if xi is None:                                  # Z symmetric: dZ + dZᵀ = 2·dZ exactly
        grad = precisions.bmm(dZ.mul_(2.0), W, matmul_dtype, out=work.grad)
    else:
        grad = precisions.bmm(dZ, W, matmul_dtype, out=work.grad).add_(
            precisions.bmm(dZ.transpose(1, 2), H, matmul_dtype, out=work.tmp))
    return loss, grad.addcmul_(torch.sign(W, out=work.tmp), lam.reshape(-1, 1, 1))


def gram(W: torch.Tensor, matmul_dtype: torch.dtype | None = None,
         out: torch.Tensor | None = None) -> torch.Tensor:
    """Z = W Wᵀ, (I, n, n) from W (I, n, m), exactly symmetric: the products of the upper
    triangle's two row blocks (rows [0, h) against all n, rows [h, n) against [h, n), h = ⌈n/2⌉),
    so 3/4 of a general product's 2·n²·m FLOPs (on CPU at n 256, m 4096, 16 instances: 32 ms
    against 39 ms), then the strict upper triangle mirrored onto the lower (a product of a block
    with itself need not come out symmetric to the bit, e.g. on CPU at n 3, m 70).
    matmul_dtype as in :func:`loss_and_grad`; into ``out`` when given."""
    n, h = W.shape[1], (W.shape[1] + 1) // 2
    Z = W.new_empty(W.shape[0], n, n) if out is None else out
    Z[:, :h] = precisions.bmm(W[:, :h], W.transpose(1, 2), matmul_dtype)
    Z[:, h:, h:] = precisions.bmm(W[:, h:], W[:, h:].transpose(1, 2), matmul_dtype)
    return Z.copy_(torch.triu(Z) + torch.triu(Z, 1).transpose(1, 2))


class HiddenNoise:
    """The hidden-layer noise ξ of section 3: one vector (I, m) per call, instance k from gens[k].

    sigma: (I,) scales σ ≥ 0; bipolar: (I,) bool, True for ±σ and False for σ·N(0, 1).
    Draws :data:`NOISE_BLOCK` steps at a time per instance. Raises ValueError on a negative σ.
    """

    def __init__(self, gens: Sequence[torch.Generator], m: int, sigma: torch.Tensor,
                 bipolar: torch.Tensor):
        if bool((sigma < 0).any()):
            raise ValueError(f"every sigma must be >= 0, got {sigma.tolist()}")
        self.gens, self.m, self.bipolar = list(gens), m, bipolar.tolist()
        self.scale = sigma.reshape(-1, 1, 1)
        self.at = NOISE_BLOCK

    def __call__(self) -> torch.Tensor:
        if self.at == NOISE_BLOCK:
            self.block = torch.empty(len(self.gens), NOISE_BLOCK, self.m, device=self.scale.device)
            for k, (g, bip) in enumerate(zip(self.gens, self.bipolar)):
                if bip:
                    torch.randint(0, 2, (NOISE_BLOCK, self.m), generator=g, device=g.device,
                                  out=self.block[k]).mul_(2).sub_(1)
                else:
                    self.block[k].normal_(generator=g)
            self.block.mul_(self.scale)
            self.at = 0
        self.at += 1
        return self.block[:, self.at - 1]


def stack_bytes(n: int, m: int, instances: int, steps: int, record_every: int,
                record_width: int) -> int:
    """An upper estimate of the memory (bytes, float32) of :func:`train` on one stack: W, its
    gradient, the optimiser's two moments, the noisy hidden vectors, the :class:`Workspace`'s
    scratch and a temporary of the recorded statistic (7 copies of I·n·m), the products of the
    loss and their gradients (4 of I·n·n), a block of noise (I·NOISE_BLOCK·m) and the recorded
    statistic, ``record_width`` values per instance at every recorded step."""
    records = steps // record_every + 2
    return 4 * instances * (7 * n * m + 4 * n * n + NOISE_BLOCK * m + records * record_width)


def stack_flops(n: int, m: int, instances: int, steps: int) -> float:
    """An upper estimate of the work of :func:`train` on one stack: per instance and step the
    products Z = H Wᵀ, dZ·W and dZᵀ·H of :func:`loss_and_grad` with noise, 2·n²·m FLOPs each
    (without noise 3.5·n²·m: :func:`gram`'s 1.5·n²·m and one product for the gradient)."""
    return 6.0 * n * n * m * instances * steps


@dataclass(frozen=True)
class Setting:
    """One instance: its seed, l1 coefficient λ ≥ 0, noise scale σ ≥ 0 and noise kind (which
    does not matter when σ = 0)."""

    seed: int
    lam: float = 0.0
    sigma: float = 0.0
    noise: str = "bipolar"


@dataclass(frozen=True)
class Optim:
    """The optimiser of a stack: name (adam, adamw, sgd), learning rate, AdamW weight decay."""

    name: str
    lr: float
    weight_decay: float = 0.0


@dataclass
class Trace:
    """A trained stack: final W (I, n, m); the recorded steps (T,); the statistic ``record`` of
    :func:`train` at those steps (I, T, …); the final loss (I,) without noise (reconstruction +
    λ‖W‖₁); ``diverged`` (I,) bool, by :func:`diverged`. float32 numpy arrays (steps: int64)."""

    W: np.ndarray
    steps: np.ndarray
    recorded: np.ndarray
    loss: np.ndarray
    diverged: np.ndarray


#: A final loss above this factor times the larger of the loss at initialisation and that of
#: W = 0 means training diverged.
DIVERGE_FACTOR = 100.0


def diverged(W: torch.Tensor, first: torch.Tensor, last: torch.Tensor) -> torch.Tensor:
    """(I,) bool: the instances whose training diverged: W (I, n, m) not finite, the final loss
    ``last`` NaN/inf, or above :data:`DIVERGE_FACTOR` times the larger of the loss at
    initialisation ``first`` and n, the loss of W = 0 (both without noise: a healthy model may
    shrink towards W = 0, never past its loss). Instances of a stack never mix, so the others
    train on unaffected."""
    finite = torch.isfinite(W).flatten(1).all(1) & torch.isfinite(last)
    return ~finite | (last > DIVERGE_FACTOR * torch.clamp(first, min=float(W.shape[1])))


@dataclass(frozen=True)
class TiedSpec:
    """What every instance of a stack of tied autoencoders shares: n features, m neurons, the
    optimiser, the number of steps, how often the statistic is recorded (``record_every``
    steps), the torch device and ``precision``, the training products' arithmetic
    (tms.engine.precision; the final loss is computed in float32)."""

    n: int
    m: int
    optim: Optim
    steps: int
    record_every: int
    device: str = "cpu"
    precision: str = "fp32"


def train(spec: TiedSpec, settings: Sequence[Setting],
          record: Callable[[torch.Tensor], torch.Tensor]) -> Trace:
    """Train one stack of tied autoencoders (``spec``: n features, m neurons) for ``spec.steps``
    steps.

    Instance k has ``settings[k]``: W is drawn by :func:`init_weights` from its seed, then its
    noise (if σ > 0) from the same generator. ``record(W)`` (W: (I, n, m); a statistic with the
    instance axis first, e.g. the fourth norms of figs. 4–6) is recorded at step 0, every
    ``spec.record_every`` steps and after the last step. Raises ValueError on an empty stack,
    an unknown noise kind or optimiser, a negative λ or σ, steps/record_every below 1, or an
    unknown precision or tf32 off CUDA.
    """
    n, m, optim, steps, record_every = spec.n, spec.m, spec.optim, spec.steps, spec.record_every
    device, precision = spec.device, spec.precision
    if not settings:
        raise ValueError("the stack is empty: nothing to train")
    precisions.check(precision, device)
    if steps < 1 or record_every < 1:
        raise ValueError(f"steps and record_every must be >= 1, got {steps}, {record_every}")
    bad = [s.noise for s in settings if s.noise not in NOISES]
    if bad:
        raise ValueError(f"noise must be one of {NOISES}, got {bad[0]!r}")
    if any(s.lam < 0 or s.sigma < 0 for s in settings):
        raise ValueError(f"every lam and sigma must be >= 0, got "
                         f"{[(s.lam, s.sigma) for s in settings]}")
    device = torch.device(device)
    gens = generators([s.seed for s in settings], device)
    W = init_weights(n, m, gens)
    lam = torch.tensor([s.lam for s in settings], device=device)
    sigma = torch.tensor([s.sigma for s in settings], device=device)
    noise = (HiddenNoise(gens, m, sigma, torch.tensor([s.noise == "bipolar" for s in settings]))
             if bool((sigma > 0).any()) else None)
    opt = make_optimizer(optim.name, [W], optim.lr, optim.weight_decay)
    marks = sorted(set(range(0, steps, record_every)) | {steps})
    at = set(marks)
    recorded = [record(W)]
    work = Workspace(W)
    first, _ = loss_and_grad(W, lam, work=work)
    threads = 1 if device.type == "cpu" and W.numel() < SMALL_STACK else None
    with torch_threads(threads):
        with precisions.matmul_precision(precision, device) as dtype:
            with Progress(f"tied autoencoders n={n} m={m} x{len(settings)} instances",
                          steps) as bar:               # a bar, or a line every 30 s
                for step in range(1, steps + 1):
                    _, grad = loss_and_grad(W, lam, noise() if noise else None, False, dtype,
                                            work)
                    opt.step([W], [grad])
                    if step in at:
                        recorded.append(record(W))
                    bar.update(1)
        loss, _ = loss_and_grad(W, lam, work=work)
    return Trace(W.cpu().numpy(), np.array(marks), torch.stack(recorded, 1).cpu().numpy(),
                 loss.cpu().numpy(), diverged(W, first, loss).cpu().numpy())
