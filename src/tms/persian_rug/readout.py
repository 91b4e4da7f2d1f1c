"""The read-out of the Persian rug model: the two scalars (a, b) of its output ReLU(a (W x + b)),
fitted exactly by least squares (Persian Rug paper, section 4.2.2, fig. 2; tms.persian_rug.rug
builds W and scores the fitted model).
"""

from __future__ import annotations

import numpy as np
import torch


def _vdot(p: np.ndarray, q: np.ndarray) -> float:
    """Dot product of two float64 vectors (einsum: avoids BLAS threading overhead)."""
    return float(np.einsum("i,i->", p, q))


def _scan(ud: np.ndarray, xd: np.ndarray, total: float,
          base: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0),
          t_top: float = np.inf, t_bot: float = -np.inf) -> tuple[float, float, float]:
    """Exact minimiser over a >= 0 and b in [-t_top, -t_bot] of sum (x - ReLU(a (u + b)))^2.

    ud: the "band" values of u in (t_bot, t_top], sorted descending, xd their targets;
    base: (count, sum u, sum u^2, sum x, sum x u) over the pairs with u > t_top (always
    active in the window); pairs with u <= t_bot are never active and enter only through
    ``total`` = sum x^2 over all pairs.

    Piece k (k = 0..m, m = len(ud)): the base and the first k band pairs are active, and
    b lies in [lo_k, hi_k] = [-ud[k-1], -ud[k]] (ud[-1] := t_top, ud[m] := t_bot). With
    prefix sums the loss there is total - 2 a N + a^2 D, N = P + b X, D = Q + 2 b Z + b^2 C,
    so a = max(N, 0) / D and the profile total - max(N, 0)^2 / D is extremal on a piece
    only at the least-squares point b* = c / a of x ~ a u + c over its active set, or at
    the piece's ends. Every piece's lower end and clipped b* are scored at once (upper ends
    are the next piece's lower end; the profile is continuous in b).
    Returns (loss sum, a, b); a = 0 (with b = 0) if no positive slope lowers the loss.
    """
    m = ud.size
    c0, z0, q0, x0, p0 = base

    def prefix(v: np.ndarray, start: float) -> np.ndarray:
        out = np.empty(m + 1)
        out[0] = start
        np.cumsum(v, out=out[1:])
        out[1:] += start
        return out

    cnt = c0 + np.arange(m + 1, dtype=np.float64)
    sz = prefix(ud, z0)
    szz = prefix(ud * ud, q0)
    sx = prefix(xd, x0)
    sxz = prefix(xd * ud, p0)
    lo = np.empty(m + 1)
    hi = np.empty(m + 1)
    lo[0] = -t_top
    lo[1:] = -ud
    hi[:-1] = -ud
    hi[-1] = -t_bot
    if not np.isfinite(lo[0]):            # empty or infinite first piece: use its end
        lo[0] = hi[0] if np.isfinite(hi[0]) else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        bstar = (sxz * sz - sx * szz) / (sx * sz - cnt * sxz)
    bad = ~np.isfinite(bstar)
    bstar[bad] = lo[bad]
    np.clip(bstar, lo, hi, out=bstar)

    best = (total, 0.0, 0.0)
    for b in (lo, bstar):
        num = sxz + b * sx
        d = szz + 2.0 * b * sz + b * b * cnt
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where((num > 0) & (d > 0), num / d, 0.0)
        val = total - a * num                   # total - max(N, 0)^2 / D
        k = int(np.argmin(val))
        if val[k] < best[0] and a[k] > 0:
            best = (float(val[k]), float(a[k]), float(b[k]))
    return best


def _scan_all(u: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    """Exact global minimiser over a >= 0 and all b: the whole data as one band."""
    order = np.argsort(-u, kind="quicksort")
    return _scan(u[order], x[order], _vdot(x, x))


def _scan_window(u: np.ndarray, x: np.ndarray, total: float, t_bot: float,
                 t_top: float) -> tuple[float, float, float]:
    """Exact minimiser over a >= 0 and b in [-t_top, -t_bot], on all pairs."""
    above = u > t_top
    band = (u > t_bot) & ~above
    mf = above.astype(np.float64)
    base = (float(mf.sum()), _vdot(mf, u), _vdot(mf, u * u), _vdot(mf, x),
            _vdot(mf, x * u))
    ub, xb = u[band], x[band]
    order = np.argsort(-ub, kind="quicksort")
    return _scan(ub[order], xb[order], total, base, t_top, t_bot)


def _relu_loss_sum(u: np.ndarray, x: np.ndarray, a: float, b: float) -> float:
    """sum (x - ReLU(a (u + b)))^2."""
    r = x - np.maximum(a * (u + b), 0.0)
    return _vdot(r, r)


_SCAN_MAX = 1 << 16          # pairs used by the global scan (a fixed seeded subsample above)


def fit_scale_bias(z, x, start: tuple[float, float] | None = None) -> tuple[float, float]:
    """Fit the scalars (a, b) of the rug output ReLU(a (z + b)) (section 4.2.2, fig. 2).

    z, x: 1-D arrays (numpy or torch) of equal length n >= 1 of pairs: z_i = (W x)_i,
    x_i the target feature value, pooled over vectors and features.
    Returns Python floats (a, b) minimising the per-feature loss
    mean_i (x_i - ReLU(a (z_i + b)))^2 over a >= 0 and real b.

    Method (no start needed, no iteration to converge): for a >= 0 the active set
    {z + b > 0} is a top segment of the pairs sorted by z, the optimal a is closed-form for
    each b, and the profile over b is extremal on each segment only at that active set's
    least-squares point or at the segment's ends; so all segments are scored at once with
    prefix sums. For n <= 2^16 this scan over all pairs is the exact global optimum. Beyond
    that, the scan runs on a fixed seeded subsample of 2^16 pairs to locate the optimum,
    then exactly on all pairs within a window of thresholds around it (widened until the
    optimum is inside the window, ultimately the whole range; the whole data too if the
    subsample shows no positive slope). ``start`` (a, b), if given with a > 0, is scored
    too and returned if it is better. a = 0 (zero output, loss mean x^2) is the fallback
    when no positive slope helps; then (0.0, 0.0) is returned. A very small a with a large
    b (output close to the constant mean of x) is a legitimate optimum when the
    interference swamps the signal (tiny n_d / n_s or large p).
    Raises ValueError on non-1-D input, unequal lengths, empty or non-finite input.
    """
    zt, xt = _pairs(z, x)
    # Standardise z for conditioning: a (z + b) = (a s)(u + (b + c)/s), u = (z - c)/s.
    shift = float(zt.mean())
    scale = float(zt.std())
    if not scale > 0:
        scale = 1.0
    u = (zt - shift) / scale
    loss, a_u, b_u = _scan_all(u, xt) if u.size <= _SCAN_MAX else _scan_large(u, xt)
    if start is not None:
        a0, b0 = (float(v) for v in start)
        if np.isfinite(a0) and np.isfinite(b0) and a0 > 0:
            a0u, b0u = a0 * scale, (b0 + shift) / scale
            loss0 = _relu_loss_sum(u, xt, a0u, b0u)
            if loss0 < loss:
                loss, a_u, b_u = loss0, a0u, b0u
    if not a_u > 0:
        return 0.0, 0.0
    return float(a_u / scale), float(b_u * scale - shift)


def _pairs(z, x) -> tuple[np.ndarray, np.ndarray]:
    """z and x as float64 numpy arrays; ValueError unless 1-D, equal, non-empty and finite."""
    zt = z.detach().cpu().numpy() if isinstance(z, torch.Tensor) else np.asarray(z)
    xt = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
    if np.ndim(zt) != 1 or np.ndim(xt) != 1:
        raise ValueError(f"z and x must be 1-D arrays, got shapes {np.shape(zt)}, {np.shape(xt)}")
    zt = np.asarray(zt, dtype=np.float64)
    xt = np.asarray(xt, dtype=np.float64)
    if zt.size != xt.size:
        raise ValueError(f"z and x must have equal length, got {zt.size} and {xt.size}")
    if zt.size == 0:
        raise ValueError("z and x must be non-empty")
    if not (np.isfinite(zt).all() and np.isfinite(xt).all()):
        raise ValueError("z and x must be finite")
    return zt, xt


def _scan_large(u: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    """:func:`_scan_all`'s minimiser on a subsample, then exact in a window widened around it."""
    total = _vdot(x, x)
    idx = np.random.default_rng(0).integers(0, u.size, _SCAN_MAX)
    _, a_s, b_s = _scan_all(u[idx], x[idx])
    if not a_s > 0:                      # nothing found on the subsample: scan all
        return _scan_all(u, x)
    u_min, u_max = float(u.min()), float(u.max())
    half = 0.05
    while True:
        t_bot, t_top = -b_s - half, -b_s + half
        whole = t_bot < u_min and t_top >= u_max
        if whole:
            t_bot, t_top = -np.inf, np.inf
        best = _scan_window(u, x, total, t_bot, t_top)
        inside = -t_top < best[2] < -t_bot
        if whole or (best[1] > 0 and inside):
            return best
        half *= 4.0
