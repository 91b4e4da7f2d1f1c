"""The Persian rug model: an explicit optimal W built from a Hadamard matrix.

Persian Rug paper, section 4.2.2 (construction), fig. 1 (the matrix, n_s = 256, n_d = 40),
fig. 2 (its loss against trained models) and eq. 6 (the variance bound it saturates).

Construction. H is the Sylvester Hadamard matrix of size n_s = 2^m,
H_ij = (-1)^popcount(i AND j). (The paper writes parity(bin(i) XOR bin(j)); taken literally
that is (-1)^popcount(i) (-1)^popcount(j), a rank-1 matrix: an erratum.) A set S of n_d
distinct rows is drawn at random; W_in = H[S, :] (n_d x n_s), W_out = W_in^T / n_d
(n_s x n_d) and W = W_out W_in (n_s x n_s). Because the rows of H are orthogonal with
squared norm n_s, W = H D_S H / n_d (D_S the 0/1 diagonal mask of S, H symmetric), so
W is symmetric, has unit diagonal, rank n_d and W^2 = (n_s/n_d) W; hence every row has
sum_{j != i} W_ij^2 = n_s/n_d - 1, equality in eq. 6. Row 0 of H is all ones, so every row
of W sums to n_s/n_d if 0 is in S and to 0 otherwise: the mean interference per feature,
(p/2)(row sum - 1), and with it the fitted bias b, depends on whether 0 is in S.

Model output: ReLU(a (W x + b)) with two scalars a, b fitted numerically per (p, n_d).
Loss: mean squared error averaged over vectors and features (per-feature MSE); the loss of
the zero output is E x^2 = p/3.

Speed. W x is never formed densely: W x = H (mask * (H x)) / n_d, and H x is a fast
Walsh-Hadamard transform computed from the Kronecker factorisation
H_{2^m} = H_{2^{m1}} kron H_{2^{m2}} as two small matrix products on a reshaped batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
import scipy.linalg
import torch

from tms.core.progress import Progress
from tms.engine.sampler import heldout_uniform, sparse_from_uniform
from tms.persian_rug.readout import fit_scale_bias

__all__ = [
    "hadamard",
    "choose_rows",
    "rug_weights",
    "rug_matrix",
    "fwht",
    "rug_apply",
    "rug_losses",
    "RugSamples",
]


# --------------------------------------------------------------------------- Hadamard matrix

def _log2_exact(n_s, what: str = "n_s") -> int:
    """m with n_s = 2^m; ValueError naming ``what`` and its value otherwise."""
    if isinstance(n_s, (bool, np.bool_)) or not isinstance(n_s, (int, np.integer)):
        raise ValueError(f"{what} must be a power of two >= 1, got {n_s!r}")
    n = int(n_s)
    if n < 1 or n & (n - 1):
        raise ValueError(f"{what} must be a power of two >= 1, got {what}={n}")
    return n.bit_length() - 1


def hadamard(n_s: int) -> np.ndarray:
    """Sylvester Hadamard matrix H of shape (n_s, n_s), entries +-1 (integer dtype).

    H_ij = (-1)^popcount(i AND j) (Persian Rug paper, section 4.2.2; the paper's XOR is an
    erratum, see the module docstring). H is symmetric and H H = n_s I.
    Raises ValueError (naming n_s) unless n_s is a power of two >= 1.
    """
    _log2_exact(n_s)
    return scipy.linalg.hadamard(int(n_s))


def choose_rows(n_s: int, n_d: int, seed: int) -> np.ndarray:
    """The random row set S: n_d distinct indices in [0, n_s), sorted ascending (int64).

    Drawn without replacement by ``numpy.random.default_rng(seed)``, so the same arguments
    give the same S (section 4.2.2, fig. 1: "S chosen randomly").
    Raises ValueError unless n_s is a power of two and 1 <= n_d <= n_s, or if seed < 0.
    """
    _log2_exact(n_s)
    n_d = int(n_d)
    if not 1 <= n_d <= int(n_s):
        raise ValueError(f"n_d must be in [1, n_s={int(n_s)}], got n_d={n_d}")
    if int(seed) < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    rng = np.random.default_rng(int(seed))
    return np.sort(rng.choice(int(n_s), size=n_d, replace=False)).astype(np.int64)


def rows_for(n_s: int, n_d: int, seed: int) -> np.ndarray:
    """The row set of the rug with n_d hidden units in a grid seeded ``seed``:
    choose_rows(n_s, n_d, seed + n_d), so every n_d of a grid has its own draw."""
    return choose_rows(n_s, n_d, int(seed) + int(n_d))


def _check_rows(n_s: int, rows) -> np.ndarray:
    """Validate a row set: 1-D, non-empty, distinct integers in [0, n_s). Returns int64."""
    r = np.asarray(rows.cpu() if isinstance(rows, torch.Tensor) else rows)
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"rows must be a non-empty 1-D sequence of indices, got shape {r.shape}")
    if not np.issubdtype(r.dtype, np.integer):
        raise ValueError(f"rows must be integers, got dtype {r.dtype}")
    r = r.astype(np.int64)
    if r.min() < 0 or r.max() >= n_s:
        raise ValueError(f"rows must lie in [0, n_s={n_s}), got range [{r.min()}, {r.max()}]")
    if np.unique(r).size != r.size:
        raise ValueError("rows must be distinct")
    return r


def rug_weights(n_s: int, rows) -> tuple[np.ndarray, np.ndarray]:
    """Persian rug weights (section 4.2.2): W_in = H[rows, :], W_out = W_in^T / n_d.

    n_s: number of features (a power of two); rows: the n_d distinct row indices S.
    Returns float64 arrays W_in of shape (n_d, n_s) (features -> hidden) and W_out of shape
    (n_s, n_d) (hidden -> features), in the model's convention h = W_in x, out = W_out h.
    Raises ValueError for a bad n_s or row set.
    """
    _log2_exact(n_s)
    r = _check_rows(int(n_s), rows)
    w_in = hadamard(n_s)[r, :].astype(np.float64)
    w_out = w_in.T / r.size
    return w_in, w_out


def memory_bytes(n_s: int, n_d: int, n_fit: int, device: str) -> dict[str, int]:
    """Upper estimates of the memory (bytes) of the rug's stage, by device name: the Hadamard
    matrix (int64, n_s²) with W_in and W_out of the widest row set n_d (float64), on the CPU;
    :func:`rug_losses`' fit sample of n_fit vectors, about 72 bytes per entry of its n_fit·n_s
    on ``device`` (a float32 draw, float64 copies, the fit's own arrays; measured 59–65), with
    40 more per entry on the CPU when ``device`` is a GPU (the copies the fit reads there). The
    weights are built after the fit: each device needs the larger of its two."""
    weights, pairs = 8 * n_s * n_s + 16 * n_d * n_s, n_fit * n_s
    if device == "cpu":
        return {"cpu": max(weights, 72 * pairs)}
    return {"cpu": max(weights, 40 * pairs), device: 72 * pairs}


def rug_matrix(n_s: int, rows) -> np.ndarray:
    """Dense Persian rug matrix W = W_out W_in of shape (n_s, n_s), float64 (fig. 1).

    Symmetric, unit diagonal, rank n_d, W^2 = (n_s/n_d) W, and every row has
    sum_{j != i} W_ij^2 = n_s/n_d - 1 (equality in eq. 6). For figures and tests; the
    loss computations use :func:`rug_apply` instead. Raises ValueError as rug_weights.
    """
    w_in, w_out = rug_weights(n_s, rows)
    return w_out @ w_in


# --------------------------------------------------------------------------- fast transform

@lru_cache(maxsize=64)
def _hadamard_factor(k: int, dtype: torch.dtype, device: str) -> torch.Tensor:
    """Cached Sylvester Hadamard matrix of size 2^k as a torch tensor."""
    return torch.as_tensor(scipy.linalg.hadamard(1 << k), dtype=dtype, device=device)


def fwht(x: torch.Tensor) -> torch.Tensor:
    """Unnormalised Walsh-Hadamard transform H x along the last axis.

    x: floating tensor of shape (..., n_s) (batch/instance axes first), n_s = 2^m.
    Returns H x of the same shape and dtype, with H the Sylvester matrix of
    :func:`hadamard` (symmetric, so this is also x H). Applying it twice multiplies by n_s.

    Uses H_{2^m} = H_{2^{m1}} kron H_{2^{m2}} (m1 = m // 2, m2 = m - m1; index
    i = i1 2^{m2} + i2): a vector reshaped to a (2^{m1}, 2^{m2}) matrix X maps to
    H_{2^{m1}} X H_{2^{m2}}, two batched matmuls, O(n_s^{3/2}) per vector.
    Raises ValueError if the last axis is not a power of two, TypeError if x is not floating.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"fwht expects a torch.Tensor, got {type(x).__name__}")
    if not (x.is_floating_point() or x.is_complex()):
        raise TypeError(f"fwht expects a floating tensor, got dtype {x.dtype}")
    if x.dim() == 0:
        raise ValueError("fwht needs at least one axis")
    n = x.shape[-1]
    m = _log2_exact(n, "last axis length")
    if m == 0:
        return x.clone()
    m1 = m // 2
    m2 = m - m1
    dev = str(x.device)
    hb = _hadamard_factor(m2, x.dtype, dev)
    lead = x.shape[:-1]
    xr = x.reshape(-1, 1 << m1, 1 << m2)
    y = torch.matmul(xr, hb)
    if m1 > 0:
        ha = _hadamard_factor(m1, x.dtype, dev)
        y = torch.matmul(ha, y)
    return y.reshape(*lead, n)


def _fwht_into(src: torch.Tensor, out: torch.Tensor, tmp: torch.Tensor) -> torch.Tensor:
    """H applied to the rows of a contiguous (r, n) tensor, written into ``out``.

    ``tmp`` (same shape) is scratch. Same factorisation as :func:`fwht`, but without
    allocations: on CPU, fresh multi-megabyte buffers cost more than the products.
    """
    r, n = src.shape
    m = n.bit_length() - 1
    m1 = m // 2
    m2 = m - m1
    shape = (r, 1 << m1, 1 << m2)
    dev = str(src.device)
    hb = _hadamard_factor(m2, src.dtype, dev)
    if m1 == 0:
        torch.matmul(src.view(shape), hb, out=out.view(shape))
        return out
    torch.matmul(src.view(shape), hb, out=tmp.view(shape))
    torch.matmul(_hadamard_factor(m1, src.dtype, dev), tmp.view(shape), out=out.view(shape))
    return out


def _row_mask(n_s: int, rows, dtype: torch.dtype, device) -> torch.Tensor:
    """0/1 vector of length n_s with ones at ``rows`` (the diagonal of D_S)."""
    r = _check_rows(n_s, rows)
    mask = torch.zeros(n_s, dtype=dtype, device=device)
    mask[torch.as_tensor(r, device=device)] = 1
    return mask


def rug_apply(x: torch.Tensor, rows) -> torch.Tensor:
    """W x for every vector along the last axis, W the Persian rug matrix of ``rows``.

    x: floating tensor of shape (..., n_s) (batch/instance axes first), n_s a power of two.
    Returns z = W x of the same shape, z_i = x_i + interference (section 4.2.2), computed as
    H (mask * (H x)) / n_d with two fast transforms (:func:`fwht`); no dense W is formed.
    Raises ValueError for a bad n_s or row set, TypeError for a non-floating x.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"rug_apply expects a torch.Tensor, got {type(x).__name__}")
    n_s = x.shape[-1]
    _log2_exact(n_s, "last axis length")
    mask = _row_mask(n_s, rows, x.dtype, x.device)
    n_d = int(mask.sum().item())
    return fwht(fwht(x) * mask) / n_d


# --------------------------------------------------------------------------- rug losses

@dataclass(frozen=True)
class RugSamples:
    """The two samples of :func:`rug_losses` (tms.engine.sampler.heldout_uniform): the fit
    sample, ``n_fit`` vectors drawn with ``fit_seed``, and the held-out sample, ``n_eval``
    vectors drawn with ``eval_seed`` in chunks of ``chunk``."""

    fit_seed: int
    n_fit: int
    eval_seed: int
    n_eval: int
    chunk: int = 8192


@dataclass(frozen=True)
class _Grid:
    """What every pass of :func:`rug_losses` reads: n_s, the n_d and p values (p also as a
    float64 tensor on ``device``), the row set of each n_d, the samples and the rows of a
    block (2^20 entries)."""

    n_s: int
    n_ds: list[int]
    ps: list[float]
    p_t: torch.Tensor
    rows: dict[int, np.ndarray]
    samples: RugSamples
    device: torch.device
    block: int


def rug_losses(n_s: int, n_ds: Sequence[int], ps: Sequence[float], seed: int,
               samples: RugSamples, device: torch.device | str = "cpu") -> pd.DataFrame:
    """Loss of the fitted Persian rug model for every (n_d, p) (fig. 2, section 4.2.2).

    n_s: number of features (a power of two). n_ds: hidden sizes, each in [1, n_s]
    (duplicates are dropped, first occurrence kept). ps: feature probabilities in (0, 1].
    Row set for n_d: S = rows_for(n_s, n_d, seed).

    Fit: (a, b) by :func:`fit_scale_bias` on all n_fit * n_s pairs (x_i, (W x)_i) of a fit
    sample of n_fit vectors drawn from ``heldout_uniform(fit_seed, ...)`` and
    ``sparse_from_uniform`` (computed in float64; :class:`RugSamples`). Keep n_fit * n_s at a
    few million. Score: the per-feature MSE mean over vectors and features of
    (x - ReLU(a (W x + b)))^2 on the held-out sample ``heldout_uniform(eval_seed, n_eval,
    n_s, chunk)`` (float32 transforms in blocks of 2^20 entries; block sums accumulated in
    float64), common to all (n_d, p).
    The zero output scores p/3.

    Returns a DataFrame with one row per (n_d, p), n_d-major in the given order, columns
    n_s, n_d, ratio (= n_d / n_s, realised), p, a, b, loss. Deterministic: the same
    arguments (on the same machine and thread count) give an identical frame.
    Raises ValueError for a bad n_s, n_d, p, seed, n_fit or n_eval.
    """
    n_s, n_ds, ps, samples = _checked(n_s, n_ds, ps, seed, samples)
    rows = {n_d: rows_for(n_s, n_d, seed) for n_d in n_ds}
    device = torch.device(device)
    grid = _Grid(n_s, n_ds, ps, torch.tensor(ps, dtype=torch.float64, device=device), rows,
                 samples, device, max(1, (1 << 20) // n_s))   # a block: 4-8 MB buffers
    bar = Progress(f"rug n_s {n_s}", len(ps) + -(-samples.n_eval // samples.chunk), unit="pass")
    fits = _fit(grid, bar)               # a fit per p, then a pass per held-out chunk
    sums = _score(grid, fits, bar)
    bar.close()
    records = []
    for jd, n_d in enumerate(n_ds):
        for jp, p in enumerate(ps):
            a, b = fits[(n_d, jp)]
            records.append({"n_s": n_s, "n_d": n_d, "ratio": n_d / n_s, "p": p,
                            "a": a, "b": b, "loss": sums[jd, jp] / (samples.n_eval * n_s)})
    return pd.DataFrame.from_records(records, columns=["n_s", "n_d", "ratio", "p", "a", "b",
                                                      "loss"])


def _checked(n_s, n_ds: Sequence[int], ps: Sequence[float], seed: int, samples: RugSamples
             ) -> tuple[int, list[int], list[float], RugSamples]:
    """The arguments of :func:`rug_losses` as Python numbers; ValueError as it says."""
    _log2_exact(n_s)
    n_ds = list(dict.fromkeys(int(n) for n in n_ds))
    ps = [float(p) for p in ps]
    if not n_ds or not ps:
        raise ValueError("n_ds and ps must be non-empty")
    for p in ps:
        if not 0.0 < p <= 1.0:
            raise ValueError(f"every p must be in (0, 1], got p={p}")
    if int(samples.n_fit) < 1 or int(samples.n_eval) < 1:
        raise ValueError(f"n_fit and n_eval must be >= 1, got {samples.n_fit}, {samples.n_eval}")
    for s in (seed, samples.fit_seed, samples.eval_seed):
        if int(s) < 0:
            raise ValueError(f"seeds must be >= 0, got {s}")
    return int(n_s), n_ds, ps, RugSamples(int(samples.fit_seed), int(samples.n_fit),
                                          int(samples.eval_seed), int(samples.n_eval),
                                          samples.chunk)


def _fit(grid: _Grid, bar: Progress) -> dict[tuple[int, int], tuple[float, float]]:
    """(a, b) by (n_d, index of p), fitted on the fit sample in float64."""
    n_s, n_fit, block, device = grid.n_s, grid.samples.n_fit, grid.block, grid.device
    v_fit = torch.cat(list(heldout_uniform(grid.samples.fit_seed, n_fit, n_s, grid.samples.chunk,
                                           device)))
    masks = {n_d: _row_mask(n_s, grid.rows[n_d], torch.float64, device) for n_d in grid.n_ds}
    y = torch.empty(n_fit, n_s, dtype=torch.float64, device=device)
    z = torch.empty_like(y)
    buf = torch.empty(min(block, n_fit), n_s, dtype=torch.float64, device=device)
    tmp = torch.empty_like(buf)
    fits: dict[tuple[int, int], tuple[float, float]] = {}
    for jp in range(len(grid.ps)):
        x = sparse_from_uniform(v_fit, grid.p_t[jp:jp + 1])[0].to(torch.float64)
        x_np = x.cpu().numpy().ravel()
        for r0 in range(0, n_fit, block):
            r1 = min(n_fit, r0 + block)
            _fwht_into(x[r0:r1], y[r0:r1], tmp[:r1 - r0])
        for n_d in grid.n_ds:
            for r0 in range(0, n_fit, block):
                r1 = min(n_fit, r0 + block)
                torch.mul(y[r0:r1], masks[n_d], out=buf[:r1 - r0])
                _fwht_into(buf[:r1 - r0], z[r0:r1], tmp[:r1 - r0])
            z.div_(n_d)
            fits[(n_d, jp)] = fit_scale_bias(z.cpu().numpy().ravel(), x_np)
        bar.update(1)
    return fits


def _score(grid: _Grid, fits: dict[tuple[int, int], tuple[float, float]], bar: Progress
           ) -> np.ndarray:
    """Σ squared errors (n_d, p) of the fitted models on the held-out sample, H x shared by n_d."""
    n_s, n_ds, block, device = grid.n_s, grid.n_ds, grid.block, grid.device
    masks = {n_d: _row_mask(n_s, grid.rows[n_d], torch.float32, device) for n_d in n_ds}
    rows_max = min(block, grid.samples.n_eval)
    y = torch.empty(rows_max, n_s, device=device)
    z = torch.empty_like(y)
    buf = torch.empty_like(y)
    tmp = torch.empty_like(y)
    sums = np.zeros((len(n_ds), len(grid.ps)))
    for v in heldout_uniform(grid.samples.eval_seed, grid.samples.n_eval, n_s, grid.samples.chunk,
                             device):
        for r0 in range(0, v.shape[0], block):
            vb = v[r0:r0 + block]
            r = vb.shape[0]
            yb, zb, bb, tb = y[:r], z[:r], buf[:r], tmp[:r]
            for jp in range(len(grid.ps)):
                x = sparse_from_uniform(vb, grid.p_t[jp:jp + 1])[0]
                _fwht_into(x, yb, tb)
                for jd, n_d in enumerate(n_ds):
                    a, b = fits[(n_d, jp)]
                    torch.mul(yb, masks[n_d], out=bb)
                    _fwht_into(bb, zb, tb)            # n_d * (W x)
                    zb.mul_(a / n_d).add_(a * b).relu_().sub_(x).square_()
                    sums[jd, jp] += float(zb.sum())
        bar.update(1)
    return sums
