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

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import torch

from tms.engine import precision
from tms.engine.threads import SERIAL, WorkerPool, near_equal

# torch warns on every first use of a CSR tensor; the sparse products here are tested
warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")


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


@dataclass
class RaggedStack:
    """I autoencoders of one n_s, each with its own hidden width, stored without padding.

    flat: (2·D + I, n_s) float tensor, D = Σ n_d. Rows offsets[k]:offsets[k+1] hold W_in of
    instance k (n_d[k], n_s); the same rows shifted by D hold its W_out transposed (W_outᵀ,
    (n_d[k], n_s)); row 2·D + k holds its b (n_s). One tensor, so that Adam updates every
    parameter of every instance in a few elementwise passes with no padding. relu: ReLU
    output or the linear twin; bias: False keeps b at exactly zero (its gradient is zero).
    """

    flat: torch.Tensor
    n_d: list[int]
    relu: bool = True
    bias: bool = True

    def __post_init__(self):
        self.offsets = [0]
        for d in self.n_d:
            self.offsets.append(self.offsets[-1] + d)

    @property
    def hidden(self) -> int:
        """D = Σ n_d, the total hidden width."""
        return self.offsets[-1]

    def W_in(self, k: int) -> torch.Tensor:
        """W_in of instance k, (n_d[k], n_s), a view."""
        return self.flat[self.offsets[k]:self.offsets[k + 1]]

    def W_out_T(self, k: int) -> torch.Tensor:
        """W_outᵀ of instance k, (n_d[k], n_s), a view."""
        return self.flat[self.hidden + self.offsets[k]:self.hidden + self.offsets[k + 1]]

    def b(self, k: int) -> torch.Tensor:
        """b of instance k, (n_s,), a view."""
        return self.flat[2 * self.hidden + k]

    def rows(self, keep: Sequence[int]) -> torch.Tensor:
        """The rows of ``flat`` that belong to the instances ``keep`` (long tensor), in the
        layout of the sub-stack of those instances."""
        w_in = [r for k in keep for r in range(self.offsets[k], self.offsets[k + 1])]
        w_out = [self.hidden + r for r in w_in]
        b = [2 * self.hidden + k for k in keep]
        return torch.tensor(w_in + w_out + b, dtype=torch.long, device=self.flat.device)

    def select(self, keep: Sequence[int]) -> "RaggedStack":
        """The sub-stack of the instances ``keep`` (indices, in order)."""
        return RaggedStack(self.flat[self.rows(keep)], [self.n_d[k] for k in keep],
                           self.relu, self.bias)


def init_ragged(n_s: int, n_d: Sequence[int], gens: Sequence[torch.Generator],
                relu: bool = True, bias: bool = True) -> RaggedStack:
    """The initialisation of :func:`init_stack` (same draws, same values), stored ragged.
    Raises ValueError if some n_d is not in [1, n_s]."""
    if any(not 1 <= d <= n_s for d in n_d):
        raise ValueError(f"every n_d must be in [1, n_s = {n_s}], got {list(n_d)}")
    parts_in, parts_out, parts_b = [], [], []
    for d, g in zip(n_d, gens):
        one = init_stack(n_s, [d], [g], relu, bias)
        parts_in.append(one.W_in[0])
        parts_out.append(one.W_out[0].T)
        parts_b.append(one.b)
    return RaggedStack(torch.cat(parts_in + parts_out + parts_b).contiguous(), list(n_d),
                       relu, bias)


#: A group of instances is computed in pieces of the batch of about this many useful FLOPs
#: (10·rows·n_s·width) each, so that one wide group, or a lone model, keeps every worker
#: busy. The pieces are a function of the shapes alone: the numbers never depend on the
#: thread count (bench/pieces.py measures the choice).
PIECE_FLOPS = 3e8
#: At most this many pieces per group, each of at least MIN_PIECE_ROWS rows of the batch.
MAX_PIECES = 2
MIN_PIECE_ROWS = 256


def batch_pieces(width: int, n_s: int, batch: int) -> list[slice]:
    """The row ranges of the batch that a group of total hidden width ``width`` is computed in:
    k near-equal ranges, k = floor(10·batch·n_s·width / PIECE_FLOPS) clipped to
    [1, min(MAX_PIECES, batch // MIN_PIECE_ROWS)]."""
    k = int(10 * batch * n_s * width // PIECE_FLOPS)
    return near_equal(batch, max(1, min(k, MAX_PIECES, batch // MIN_PIECE_ROWS)))


#: On CPU, the two products with a group's sparse inputs (W_in x and ∂hᵀ x) go through x as a
#: CSR matrix where that pays: groups of total width ≥ SPARSE_MIN_WIDTH at p ≤ SPARSE_MAX_P.
#: Measured by bench/sparse_input.py on whole training steps: 1.1–1.3× there (the grid of
#: bench/throughput.py at n_s 512 and 1024), none or a loss on narrower groups or at larger p
#: (the conversion to CSR, and a sparse kernel far slower per nonzero than a dense matmul).
SPARSE_MIN_WIDTH = 1500
SPARSE_MAX_P = 0.035


def sparse_pays(width: int, p: float) -> bool:
    """Whether a group of total hidden width ``width`` whose inputs have a fraction p of
    nonzero entries computes W_in x and ∂hᵀ x with x sparse (on CPU; see above)."""
    return width >= SPARSE_MIN_WIDTH and p <= SPARSE_MAX_P


def _step_plan(widths: Sequence[int], sizes: Sequence[int], n_s: int, batch: int,
               workers: int) -> tuple[list[list[slice]], list[tuple[int, int]], list[list[int]]]:
    """How a step of groups of total widths ``widths`` and ``sizes`` instances is shared out:
    the batch pieces of each group, the pieces of work (group, piece), and the indices of those
    dealt to each worker. A function of the shapes alone (a few microseconds a step)."""
    pieces = [batch_pieces(w, n_s, batch) for w in widths]
    items = [(g, j) for g, cuts in enumerate(pieces) for j in range(len(cuts))]
    # cost of a piece: its matmuls (∝ its group's total width) and per instance a few passes
    # over (rows, n_s), worth about ten hidden units each; all ∝ its rows
    cost = [(widths[g] + 10 * sizes[g]) * (pieces[g][j].stop - pieces[g][j].start)
            for g, j in items]
    return pieces, items, _balanced(cost, workers)


def _balanced(cost: Sequence[int], workers: int) -> list[list[int]]:
    """Indices of ``cost`` dealt to at most ``workers`` lists, largest first to the least
    loaded."""
    shares: list[list[int]] = [[] for _ in range(max(1, min(workers, len(cost))))]
    load = [0] * len(shares)
    for g in sorted(range(len(cost)), key=lambda g: (-cost[g], g)):
        w = load.index(min(load))
        shares[w].append(g)
        load[w] += cost[g]
    return shares


def loss_and_grads(model: RaggedStack, groups: Sequence[tuple[int, int]],
                   x_of: Callable[[int, slice, torch.Tensor], torch.Tensor], batch: int,
                   grad: torch.Tensor, loss: torch.Tensor, workers: WorkerPool = SERIAL,
                   density: Sequence[float] | None = None) -> None:
    """Per-instance per-feature MSE of reconstructing x, and its gradients, in place.

    Instances a ≤ k < b of each group (a, b) of ``groups`` see the same inputs, a batch of
    ``batch`` vectors; ``x_of(g, rows, out)`` fills ``out`` (a (rows, n_s) scratch tensor)
    with the rows ``rows`` (a slice) of group g's batch and returns it. The hidden
    activations of a group are one matmul, hᵀ = [W_in of the group] xᵀ, over the
    concatenated W_in, and so is the gradient of W_in. Per instance: z = h W_outᵀ + b,
    y = ReLU(z) (or z), err = y − x, loss_k = mean over the batch vectors and n_s features of
    err² (docs/paper-gaps.md: the authors' normalisation), dz = 2·err·[z > 0]/(batch·n_s),
    ∂W_out = dzᵀh, ∂h = dz W_out, ∂W_in = ∂hᵀx, ∂b = Σ_batch dz (zero for a bias-free stack).
    A wide group is computed in pieces of the batch (:func:`batch_pieces`), whose sums are
    added piece after piece. density: the fraction of nonzero inputs of each group (its p);
    on CPU the groups where :func:`sparse_pays` compute W_in x and ∂hᵀ x from x as a sparse
    matrix (equal to the dense products up to rounding). None: every product dense.

    grad: a tensor shaped like ``model.flat``, overwritten with the gradients in the same
    layout. loss: (I,), overwritten. workers: the pieces are dealt to its threads (the default
    SERIAL: the caller's thread); a piece is always computed whole, by one thread on one intra-op
    thread, with the same operations, and the pieces are added in a fixed order, so the
    numbers do not depend on the number of workers (call with one intra-op thread set, as
    tms.engine.train does, for the same numbers without workers).
    Hand-written; tests/engine/test_models.py checks it against autograd.
    """
    n_s, D, dev = model.flat.shape[1], model.hidden, model.flat.device
    off = model.offsets
    widths = [off[b] - off[a] for a, b in groups]
    pieces, items, shares = _step_plan(widths, [b - a for a, b in groups], n_s, batch,
                                       workers.n)
    step = _Step(model, groups, x_of, grad, loss, pieces, items, widths,
                 _sparse_groups(widths, density, dev), _partial_sums(groups, items, widths, n_s,
                                                                     dev))
    if not model.bias:
        grad[2 * D:].zero_()
    workers.map(functools.partial(_run_share, step), shares)
    _add_partials(step)
    grad.mul_(2.0 / (batch * n_s))
    loss.div_(batch * n_s)


def _sparse_groups(widths: Sequence[int], density: Sequence[float] | None,
                   dev: torch.device) -> list[bool]:
    """Which groups compute W_in x and ∂hᵀ x from x as a sparse matrix (:func:`sparse_pays`)."""
    if density is None or dev.type != "cpu":
        return [False] * len(widths)
    return [sparse_pays(w, q) for w, q in zip(widths, density)]


def _partial_sums(groups: Sequence[tuple[int, int]], items: Sequence[tuple[int, int]],
                  widths: Sequence[int], n_s: int, dev: torch.device
                  ) -> dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]]:
    """The sums (rows ∂W_in, ∂W_outᵀ, ∂b; losses) of each piece j > 0 of a group g, by (g, j)."""
    return {(g, j): (torch.empty(2 * widths[g] + b - a, n_s, device=dev),
                     torch.empty(b - a, device=dev))
            for g, j in items if j > 0 for a, b in [groups[g]]}


class _Step(NamedTuple):
    """What every piece of one step of :func:`loss_and_grads` reads: its arguments, the plan
    (:func:`_step_plan`), the width and sparse choice of each group and the partial sums."""

    model: RaggedStack
    groups: Sequence[tuple[int, int]]
    x_of: Callable[[int, slice, torch.Tensor], torch.Tensor]
    grad: torch.Tensor
    loss: torch.Tensor
    pieces: list[list[slice]]
    items: list[tuple[int, int]]
    widths: list[int]
    sparse: list[bool]
    partial: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]]


class _Piece(NamedTuple):
    """One piece of a group in a step: its instances a ≤ k < b (rows r0 on of ``flat``), its
    inputs x (n, n_s) and xs (x as CSR, or None), hᵀ (w, n), the scratch z and on (n, n_s)
    and ∂hᵀ (w, n), and its sums ∂W_in, ∂W_outᵀ (w, n_s), ∂b (b − a, n_s) and loss (b − a).
    A tuple: one is made per piece per training step (a frozen dataclass costs 4× as much)."""

    a: int
    b: int
    r0: int
    x: torch.Tensor
    xs: torch.Tensor | None
    hT: torch.Tensor
    z: torch.Tensor
    on: torch.Tensor
    dhT: torch.Tensor
    g_in: torch.Tensor
    g_out: torch.Tensor
    g_b: torch.Tensor
    ls: torch.Tensor


def _run_share(step: _Step, share: list[int]) -> None:
    """The pieces ``share`` (indices into step.items) in turn, in scratch for the largest."""
    n_s, dev = step.model.flat.shape[1], step.model.flat.device
    pieces, items = step.pieces, step.items
    rows = max(pieces[g][j].stop - pieces[g][j].start for g, j in (items[i] for i in share))
    widest = max(step.widths[items[i][0]] for i in share)
    hT_buf, dhT_buf = (torch.empty(widest * rows, device=dev) for _ in range(2))
    x_buf, z_buf, on_buf = (torch.empty(rows * n_s, device=dev) for _ in range(3))
    for i in share:
        p = _piece(step, *items[i], (hT_buf, dhT_buf, x_buf, z_buf, on_buf))
        _instance_grads(step.model, p)
        if p.xs is not None:                # xᵀ is x's CSR read as CSC: ∂W_inᵀ = xᵀ ∂h
            p.g_in.copy_(torch.sparse.mm(p.xs.t(), p.dhT.T).T)
        else:
            torch.mm(p.dhT, p.x, out=p.g_in)


def _piece_sums(step: _Step, g: int, j: int
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Where piece j of group g sums ∂W_in, ∂W_outᵀ, ∂b, losses: grad, loss (j = 0) or its own."""
    model, (a, b) = step.model, step.groups[g]
    D, r0, r1 = model.hidden, model.offsets[a], model.offsets[b]
    if j == 0:
        grad = step.grad
        return grad[r0:r1], grad[D + r0:D + r1], grad[2 * D + a:2 * D + b], step.loss[a:b]
    part, ls = step.partial[g, j]
    w = r1 - r0
    return part[:w], part[w:2 * w], part[2 * w:], ls


def _piece(step: _Step, g: int, j: int, bufs: tuple[torch.Tensor, ...]) -> _Piece:
    """Piece j of group g: its inputs, hᵀ = W_in xᵀ, its views of ``bufs`` (hᵀ, ∂hᵀ, x, z, on)."""
    hT_buf, dhT_buf, x_buf, z_buf, on_buf = bufs
    model, (a, b) = step.model, step.groups[g]
    n_s, r0, r1 = model.flat.shape[1], model.offsets[a], model.offsets[b]
    w, cut = r1 - r0, step.pieces[g][j]
    n = cut.stop - cut.start
    g_in, g_out, g_b, ls = _piece_sums(step, g, j)
    x = step.x_of(g, cut, x_buf[:n * n_s].view(n, n_s))
    z, on = z_buf[:n * n_s].view(n, n_s), on_buf[:n * n_s].view(n, n_s)
    if step.sparse[g]:
        xs = x.to_sparse_csr()
        hT = torch.mm(xs, model.flat[r0:r1].T, out=hT_buf[:w * n].view(n, w)).T
    else:
        xs = None
        hT = torch.mm(model.flat[r0:r1], x.T, out=hT_buf[:w * n].view(w, n))
    return _Piece(a, b, r0, x, xs, hT, z, on, dhT_buf[:w * n].view(w, n), g_in, g_out, g_b, ls)


def _instance_grads(model: RaggedStack, p: _Piece) -> None:
    """Per instance of the piece: its loss Σ err², ∂W_outᵀ, ∂hᵀ and ∂b (unscaled)."""
    off, r0, a = model.offsets, p.r0, p.a
    x, z, on, hT, dhT, g_out, g_b, ls = p.x, p.z, p.on, p.hT, p.dhT, p.g_out, p.g_b, p.ls
    for k in range(a, p.b):
        s0, s1 = off[k] - r0, off[k + 1] - r0
        W_out_T = model.W_out_T(k)
        if model.bias:
            torch.addmm(model.b(k), hT[s0:s1].T, W_out_T, out=z)
        else:
            torch.mm(hT[s0:s1].T, W_out_T, out=z)
        if model.relu:
            torch.gt(z, 0, out=on)
            z.mul_(on)
        err = z.sub_(x)
        torch.dot(err.view(-1), err.view(-1), out=ls[k - a])
        if model.relu:
            err.mul_(on)
        torch.mm(hT[s0:s1], err, out=g_out[s0:s1])
        torch.mm(W_out_T, err.T, out=dhT[s0:s1])
        if model.bias:
            torch.sum(err, 0, out=g_b[k - a])


def _add_partials(step: _Step) -> None:
    """The sums of the pieces j > 0 added to grad and loss, in a fixed order (piece by piece)."""
    model, grad, D, off = step.model, step.grad, step.model.hidden, step.model.offsets
    for (g, j), (part, ls) in step.partial.items():
        a, b = step.groups[g]
        r0, r1 = off[a], off[b]
        w = r1 - r0
        grad[r0:r1].add_(part[:w])
        grad[D + r0:D + r1].add_(part[w:2 * w])
        if model.bias:
            grad[2 * D + a:2 * D + b].add_(part[2 * w:])
        step.loss[a:b].add_(ls)


def equal_width_runs(n_d: Sequence[int]) -> list[tuple[int, int]]:
    """The (start, stop) ranges of consecutive instances of equal n_d: the buckets of
    :func:`bucketed_loss_and_grads` (contiguous in a stack ordered by n_d)."""
    runs: list[tuple[int, int]] = []
    for k, d in enumerate(n_d):
        if runs and n_d[runs[-1][0]] == d:
            runs[-1] = (runs[-1][0], k + 1)
        else:
            runs.append((k, k + 1))
    return runs


def bucketed_loss_and_grads(model: RaggedStack, buckets: Sequence[tuple[int, int]],
                            x_of: Callable[[int], torch.Tensor], batch: int, grad: torch.Tensor,
                            loss: torch.Tensor, matmul_dtype: torch.dtype | None = None) -> None:
    """The losses and gradients of :func:`loss_and_grads`, a bucket of equal n_d at a time: the
    GPU path, whose operations per step grow with the number of buckets, never with the number
    of models in one.

    buckets: (start, stop) ranges of instances of equal n_d (:func:`equal_width_runs`); their
    rows of ``model.flat`` are read as (m, n_d, n_s) tensors and every product of the bucket is
    one batched matmul (forward W_in x and W_out h; backward ∂W_out, ∂h and ∂W_in), every
    elementwise step one pass over the bucket. ``x_of(j)``: the inputs of bucket j this step,
    (m, batch, n_s), instance by instance (each with its own p). grad (shaped like
    ``model.flat``) and loss (I,) are overwritten, as by :func:`loss_and_grads` (per-feature
    MSE; equal up to rounding: tests/engine/test_models.py). matmul_dtype: None (float32, or
    TF32 where torch allows it), or torch.bfloat16 for the products' inputs and outputs (their
    sums accumulate in float32); everything else stays float32.
    """
    n_s, D, off = model.flat.shape[1], model.hidden, model.offsets
    bmm = functools.partial(precision.bmm, dtype=matmul_dtype)
    for j, (a, b) in enumerate(buckets):
        m, d, r0, r1 = b - a, model.n_d[a], off[a], off[b]
        W_in = model.flat[r0:r1].view(m, d, n_s)
        W_out_T = model.flat[D + r0:D + r1].view(m, d, n_s)
        x = x_of(j)
        h = bmm(x, W_in.transpose(1, 2))                               # (m, batch, d)
        z = bmm(h, W_out_T)                                            # (m, batch, n_s)
        if model.bias:
            z.add_(model.flat[2 * D + a:2 * D + b].unsqueeze(1))
        if model.relu:
            on = z > 0
            z.mul_(on)
        err = z.sub_(x)
        flat_err = err.view(m, -1)
        torch.linalg.vecdot(flat_err, flat_err, out=loss[a:b])        # Σ err², no temporary
        if model.relu:
            err.mul_(on)
        bmm(h.transpose(1, 2), err, out=grad[D + r0:D + r1].view(m, d, n_s))
        dh = bmm(err, W_out_T.transpose(1, 2))                         # (m, batch, d)
        bmm(dh.transpose(1, 2), x, out=grad[r0:r1].view(m, d, n_s))
        if model.bias:
            torch.sum(err, 1, out=grad[2 * D + a:2 * D + b])
    if not model.bias:
        grad[2 * D:].zero_()
    grad.mul_(2.0 / (batch * n_s))
    loss.div_(batch * n_s)
