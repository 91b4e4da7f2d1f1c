"""Thermodynamic-limit theory of the symmetric ReLU auto-encoder (Persian Rug paper, section 4).

Every loss here is a per-feature mean squared error: the reconstruction error of one output
feature, i.e. the paper's per-sample loss (eq. 2) divided by n_s (averaged over features).

Data: each feature is x = c·u with c ~ Bernoulli(p), u ~ U[0, 1], so
Var(x) = (4p − 3p²)/12.

Symmetric model (section 4.1, eq. 4): in the limit n_s → ∞ with statistical permutation symmetry
output i is ReLU(a(x_i + ν_i) + b), where a is the common diagonal of W = W_out W_in, b the common
bias and ν_i = a⁻¹ Σ_{j≠i} W_ij x_j acts as Gaussian noise, ν ~ N(0, σ²), independent of x_i.
Its loss (eq. 5) splits by whether the feature is on:

    L(a, b) = (1 − p)·E_ν[ReLU(aν + b)²] + p·E_{u,ν}[(u − ReLU(a(u + ν) + b))²].

The smallest achievable noise for unit diagonal and rank n_d (section 4.2.1, eq. 6, reached by the
Persian rug matrix of section 4.2.2) is σ² = Var(x)·(n_s/n_d − 1) = Var(x)·(1/ratio − 1) with
ratio = n_d/n_s.

Evaluation is deterministic: the Gaussian expectations are closed forms in the normal cdf Φ and
pdf φ; for Z ~ N(m, s²) and t = m/s,

    E[ReLU(Z)]  = m Φ(t) + s φ(t),
    E[ReLU(Z)²] = (m² + s²) Φ(t) + m s φ(t),
    E[(u − ReLU(Z))²] = u² − 2u E[ReLU(Z)] + E[ReLU(Z)²]
                      = u² Φ(−t) + ((m − u)² + s²) Φ(t) + s φ(t)(m − 2u);

the integral over u ∈ [0, 1] is Gauss–Legendre quadrature on three pieces split around the
point u₀ = −b/a where the ReLU switches on (the integrand bends there on a scale σ).

Minimisation (optimal_symmetric): for a > 0 write c = b/a; then
L = a²·A(c) − 2a·B(c) + p/3 with A(c) = E[ReLU(x + ν + c)²] and B(c) = E[x·ReLU(x + ν + c)],
so the best a for given c is B/A and L*(c) = p/3 − B²/A, a one-dimensional problem in c that is
scanned on a grid (against local minima) and refined with scipy.optimize.minimize_scalar.
a ≤ 0 is never better: the output is then non-increasing in x, so Cov(x, output) ≤ 0 and
L ≥ Var(x), which the a > 0 family beats (it contains the optimal linear map, and the ReLU
clipping of a non-negative target strictly lowers its loss whenever σ > 0).

The optimal linear loss follows the docs/paper-gaps.md erratum: for independent isotropic features
the best rank-n_d linear map, with or without bias, has per-feature loss Var(x)·(1 − n_d/n_s).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar
from scipy.special import ndtr

__all__ = [
    "var_x",
    "sigma2",
    "symmetric_loss",
    "symmetric_loss_parts",
    "optimal_symmetric",
    "optimal_at_sigma",
    "optimal_linear_loss",
    "initial_loss",
    "theory_table",
]

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(48)  # per quadrature piece
_HALF_WIDTH = 9.0  # the middle piece is u₀ ± 9σ: outside it Φ is 0 or 1 to ~1e-19
_T_GRID = np.concatenate([np.linspace(-12.0, 12.0, 49), np.geomspace(14.0, 4000.0, 24)])


def _check_unit_interval(name: str, value) -> np.ndarray:
    """Return ``value`` as a float array, raising ValueError unless every entry is in (0, 1]."""
    arr = np.asarray(value, dtype=float)
    bad = ~((arr > 0) & (arr <= 1))  # also catches NaN
    if np.any(bad):
        raise ValueError(f"{name} must lie in (0, 1], got {name}={arr[bad].ravel()[0]!r}")
    return arr


def var_x(p):
    """Variance of one feature x = c·u, c ~ Bernoulli(p), u ~ U[0, 1] (section 2).

    Returns (4p − 3p²)/12 = p/3 − p²/4, with the shape of ``p`` (float for scalar p).
    Raises ValueError if any p lies outside (0, 1].
    """
    p = _check_unit_interval("p", p)
    return (4 * p - 3 * p**2) / 12


def sigma2(p, ratio):
    """Noise variance σ² of the optimal symmetric model (section 4.2.1, eq. 6, equality case).

    σ² = Var(x)·(n_s/n_d − 1) = Var(x)·(1/ratio − 1), ratio = n_d/n_s; the variance of the
    interference ν from the other features when W has unit diagonal and rank n_d, saturated by
    the Persian rug matrix (section 4.2.2). p and ratio broadcast against each other.
    Raises ValueError if any p or ratio lies outside (0, 1].
    """
    ratio = _check_unit_interval("ratio", ratio)
    return var_x(p) * (1 / ratio - 1)


def _relu_moments(m, s):
    """E[ReLU(Z)] and E[ReLU(Z)²] for Z ~ N(m, s²), elementwise; s = 0 gives ReLU(m), ReLU(m)²."""
    m, s = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(s, dtype=float))
    pos = s > 0
    t = np.where(pos, m / np.where(pos, s, 1.0), np.where(m > 0, np.inf, -np.inf))
    cdf = ndtr(t)
    s_pdf = np.where(pos, s * np.exp(-0.5 * np.where(pos, t, 0.0) ** 2) / np.sqrt(2 * np.pi), 0.0)
    return m * cdf + s_pdf, (m**2 + s**2) * cdf + m * s_pdf


def _u_nodes(u_bend, sigma):
    """Gauss–Legendre nodes and weights on [0, 1], split at u_bend ± 9σ (clipped to [0, 1]).

    Shapes: u_bend and sigma broadcast to S; returns nodes and weights of shape S + (3·48,).
    """
    lo = np.clip(u_bend - _HALF_WIDTH * sigma, 0.0, 1.0)
    hi = np.clip(u_bend + _HALF_WIDTH * sigma, 0.0, 1.0)
    edges = np.stack(np.broadcast_arrays(np.zeros_like(lo), lo, hi, np.ones_like(lo)), axis=-1)
    left, right = edges[..., :-1, None], edges[..., 1:, None]
    nodes = 0.5 * (left + right) + 0.5 * (right - left) * _GL_NODES
    weights = 0.5 * (right - left) * _GL_WEIGHTS
    shape = nodes.shape[:-2] + (-1,)
    return nodes.reshape(shape), weights.reshape(shape)


def symmetric_loss_parts(a, b, p, sigma):
    """The two parts of the per-feature loss L(a, b) of the symmetric model ReLU(a(x + ν) + b)
    (section 4.1, eq. 4–5), (off, on): the loss while the feature is off,
    (1 − p)·E_ν[ReLU(aν + b)²], and while it is on, p·E_{u,ν}[(u − ReLU(a(u + ν) + b))²],
    ν ~ N(0, σ²), u ~ U[0, 1]: Gaussian expectations in closed form, the u-integral by
    Gauss–Legendre quadrature split where the ReLU switches on. Their sum is
    :func:`symmetric_loss`.

    a, b, p, sigma (the noise standard deviation σ, not σ²) broadcast against each other; the
    results have the broadcast shape (0-d arrays for scalar inputs). Any real a and b are allowed;
    σ = 0 is exact (no noise). Raises ValueError if any p is outside (0, 1] or any sigma is
    negative or not finite.
    """
    p = _check_unit_interval("p", p)
    sigma = np.asarray(sigma, dtype=float)
    if np.any(~(np.isfinite(sigma) & (sigma >= 0))):
        raise ValueError(f"sigma must be finite and >= 0, got sigma={sigma!r}")
    a, b, p, sigma = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                         p, sigma)
    s = np.abs(a) * sigma  # standard deviation of aν
    # The ReLU argument a·u + b crosses 0 at u = −b/a; with a = 0 it is flat (any split works).
    u_bend = np.where(a != 0, -b / np.where(a != 0, a, 1.0), 0.5)
    u, w = _u_nodes(u_bend, sigma)
    m1, m2 = _relu_moments(a[..., None] * u + b[..., None], s[..., None])
    loss_on = np.sum(w * (u**2 - 2 * u * m1 + m2), axis=-1)
    loss_off = _relu_moments(b, s)[1]
    return (1 - p) * loss_off, p * loss_on


def symmetric_loss(a, b, p, sigma):
    """Per-feature loss L(a, b) of the symmetric model ReLU(a(x + ν) + b) (section 4.1, eq. 4–5):

    L = (1 − p)·E_ν[ReLU(aν + b)²] + p·E_{u,ν}[(u − ReLU(a(u + ν) + b))²], ν ~ N(0, σ²),
    the sum of :func:`symmetric_loss_parts` (arguments, shapes and errors as there). Per-feature
    MSE (averaged over features).
    """
    off, on = symmetric_loss_parts(a, b, p, sigma)
    return off + on


def _profile(c, p, sigma):
    """A(c) = E[ReLU(x + ν + c)²] and B(c) = E[x·ReLU(x + ν + c)] for an array c (scalar p, σ)."""
    u, w = _u_nodes(-c, sigma)
    m1, m2 = _relu_moments(u + c[..., None], sigma)
    off = _relu_moments(c, sigma)[1]
    big_a = (1 - p) * off + p * np.sum(w * m2, axis=-1)
    big_b = p * np.sum(w * u * m1, axis=-1)
    return big_a, big_b


def _profile_loss(c, p, sigma):
    """min over a > 0 of L(a, a·c): p/3 − B(c)²/A(c) (p/3 where the output is never on)."""
    big_a, big_b = _profile(np.atleast_1d(np.asarray(c, dtype=float)), p, sigma)
    safe = big_a > 1e-300
    return np.where(safe, p / 3 - big_b**2 / np.where(safe, big_a, 1.0), p / 3)


def optimal_symmetric(p, ratio):
    """Optimal symmetric model at sparsity p and ratio = n_d/n_s (section 4.2; eq. 4–6):
    :func:`optimal_at_sigma` at σ² = sigma2(p, ratio) (eq. 6).

    p, ratio: scalars. Returns a dict of floats {"loss", "a", "b", "sigma2"}; loss is a
    per-feature MSE. Raises ValueError if p or ratio is not a scalar in (0, 1].
    """
    p_arr, r_arr = _check_unit_interval("p", p), _check_unit_interval("ratio", ratio)
    if p_arr.ndim or r_arr.ndim:
        raise ValueError(f"p and ratio must be scalars, got shapes {p_arr.shape}, {r_arr.shape}")
    s2 = float(sigma2(float(p_arr), float(r_arr)))
    return {**optimal_at_sigma(float(p_arr), np.sqrt(s2)), "sigma2": s2}


def optimal_at_sigma(p, sigma):
    """The symmetric model ReLU(a(x + ν) + b) with the best a and b for Gaussian interference
    ν ~ N(0, σ²) of a given σ (section 4.2), whatever made σ.

    For σ = 0 the optimum is exact: loss 0 at a = 1, b = 0. Otherwise a is profiled out
    analytically (best a = B(c)/A(c) for threshold c = b/a, see the module docstring), c/σ is
    scanned on a fixed grid and the best cell refined with scipy.optimize.minimize_scalar
    (bounded Brent); the reported loss is symmetric_loss at the returned (a, b).

    p in (0, 1] and sigma ≥ 0 (the standard deviation), scalars. Returns a dict of floats
    {"loss", "a", "b"}; loss is a per-feature MSE, below Var(x) for every finite σ and tending
    to it as σ → ∞. Raises ValueError for p outside (0, 1] or a negative, infinite or NaN σ.
    """
    p = float(_check_unit_interval("p", p))
    sigma = float(sigma)
    if not (np.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be finite and >= 0, got sigma={sigma!r}")
    return dict(zip(("loss", "a", "b"), _optimum(p, sigma)))


@functools.lru_cache(maxsize=65536)
def _optimum(p: float, sigma: float) -> tuple[float, float, float]:
    """(loss, a, b) of :func:`optimal_at_sigma`, once per (p, σ): the claims and the reports ask
    for the same cells again and again."""
    if sigma == 0.0:
        return 0.0, 1.0, 0.0
    grid_loss = _profile_loss(sigma * _T_GRID, p, sigma)
    k = int(np.argmin(grid_loss))
    lo, hi = _T_GRID[max(k - 1, 0)], _T_GRID[min(k + 1, len(_T_GRID) - 1)]
    res = minimize_scalar(lambda t: float(_profile_loss(sigma * t, p, sigma)[0]),
                          bounds=(lo, hi), method="bounded", options={"xatol": 1e-7})
    t_best = res.x if res.fun <= grid_loss[k] else _T_GRID[k]
    c = sigma * t_best
    big_a, big_b = _profile(np.array([c]), p, sigma)
    a = float(big_b[0] / big_a[0])
    return float(symmetric_loss(a, a * c, p, sigma)), a, float(a * c)


def optimal_linear_loss(p, ratio):
    """Per-feature loss of the best linear rank-n_d map (docs/paper-gaps.md erratum).

    For independent isotropic features the best linear map of rank n_d = ratio·n_s, with or
    without bias, keeps a fraction ratio of the total variance: loss Var(x)·(1 − ratio) per
    feature. p and ratio broadcast against each other. Raises ValueError if any p or ratio lies
    outside (0, 1].
    """
    ratio = _check_unit_interval("ratio", ratio)
    return var_x(p) * (1 - ratio)


def initial_loss(p):
    """L0(p), the per-feature loss of the symmetric model as ratio → 0 (section 4.3.1).

    With σ → ∞ the output carries no information about x, and the best output is the constant
    E x = p/2, so L0(p) = Var(x) = p/3 − p²/4 (the optimal symmetric loss tends to it from
    below as ratio → 0; tests/persian_rug/test_theory.py). The paper's eq. after (8) states
    L0 ≥ p/3 − p²/9: that uses (E u)² = 1/9 instead of 1/4 and is violated (an erratum).
    Raises ValueError for p outside (0, 1].
    """
    return var_x(p)


def theory_table(p_values, ratios):
    """Theory curves on the cartesian product p_values × ratios (section 4.2, eq. 4–6).

    Returns a pandas DataFrame with one row per (p, ratio) pair, p varying slowest, and columns
    p, ratio, sigma2 (eq. 6), a, b, loss (optimal symmetric per-feature MSE, optimal_symmetric)
    and loss_linear (optimal_linear_loss, docs/paper-gaps.md erratum). Raises ValueError if any p or
    ratio lies outside (0, 1].
    """
    p_values = np.atleast_1d(_check_unit_interval("p", p_values)).ravel()
    ratios = np.atleast_1d(_check_unit_interval("ratio", ratios)).ravel()
    rows = []
    for p in p_values:
        for ratio in ratios:
            opt = optimal_symmetric(p, ratio)
            rows.append({"p": float(p), "ratio": float(ratio), "sigma2": opt["sigma2"],
                         "a": opt["a"], "b": opt["b"], "loss": opt["loss"],
                         "loss_linear": float(optimal_linear_loss(p, ratio))})
    return pd.DataFrame(rows, columns=["p", "ratio", "sigma2", "a", "b", "loss", "loss_linear"])
