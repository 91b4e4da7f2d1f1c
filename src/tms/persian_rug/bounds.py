"""Loss limits and bounds of the Persian Rug paper's section 4.3 and appendix D.

All losses are per-feature mean squared errors (averaged over features), like
tms.persian_rug.theory. The interference of the symmetric model is ν ~ N(0, σ²) with, at best,
σ² = Var(x)(1/r − 1), r = n_d/n_s (eq. 6); tms.persian_rug.theory.sigma2.

- Initial loss (section 4.3.1, r → 0): L0(p) = Var(x) = p/3 − p²/4
  (tms.persian_rug.theory.initial_loss); the paper prints the bound p/3 − p²/9, which L0 violates
  (:func:`paper_initial_bound`).
- Lower bound (appendix D, eq. 24 and 31): no function f of the pre-activation u + ν, not even
  one told which features are on, beats the Bayes estimator E[u | u + ν], so
  L ≥ p·mmse(σ) with mmse(σ) = E_y[Var(u | y)], y = u + ν, u ~ U[0, 1]. For small σ,
  mmse → σ² and the bound is ≈ p·Var(x)(1/r − 1) ~ p²/(3r): the paper's C·p²/r, with C
  computed rather than left unknown.
- Upper bound (section 4.3.2, eq. 10–13): the paper's construction a = 1, b = −μ with
  μ = σ·sqrt(2 log(1/p)) (eq. 12, μ ~ σ sqrt(log 1/p); the factor √2 makes the off term
  ≤ p·σ²/2). Its loss, computed exactly, bounds the optimal symmetric loss from above and
  scales like p²/r·log(1/p) (eq. 13).
"""

from __future__ import annotations

import numpy as np
from scipy import integrate
from scipy.special import ndtr

from tms.persian_rug import theory

__all__ = ["mmse", "lower_bound", "upper_bound", "paper_initial_bound"]


def _phi(z):
    return np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)


def mmse(sigma: float) -> float:
    """Minimum mean squared error of estimating u ~ U[0, 1] from y = u + ν, ν ~ N(0, σ²).

    mmse = E[u²] − E_y[E[u | y]²] = 1/3 − ∫ N1(y)²/N0(y) dy, with the density of y
    N0(y) = Φ(y/σ) − Φ((y − 1)/σ) and N1(y) = ∫_0^1 u φ_σ(y − u) du = y·N0(y) + σ(φ(y/σ) −
    φ((y − 1)/σ)) (appendix D, eq. 24–25), integrated by scipy.integrate.quad over
    y ∈ [−10σ, 1 + 10σ]. σ = 0 gives 0; σ → ∞ gives Var(u) = 1/12. Raises ValueError for a
    negative or non-finite σ.
    """
    sigma = float(sigma)
    if not np.isfinite(sigma) or sigma < 0:
        raise ValueError(f"sigma must be finite and >= 0, got {sigma}")
    if sigma == 0.0:
        return 0.0

    def integrand(y):
        n0 = ndtr(y / sigma) - ndtr((y - 1) / sigma)
        n1 = y * n0 + sigma * (_phi(y / sigma) - _phi((y - 1) / sigma))
        return n1 * n1 / n0 if n0 > 1e-300 else 0.0

    lo, hi = -10 * sigma, 1 + 10 * sigma
    points = [0.0, 1.0] if sigma < 0.1 else None
    second = integrate.quad(integrand, lo, hi, points=points, limit=200, epsabs=1e-13,
                            epsrel=1e-10)[0]
    return max(1 / 3 - second, 0.0)


def lower_bound(p: float, ratio: float) -> float:
    """Appendix D lower bound on the per-feature loss: p·mmse(σ), σ² = Var(x)(1/ratio − 1).

    p, ratio: scalars in (0, 1]. ≈ p²/(3·ratio)·(1 − ratio) for p/ratio ≪ 1 (eq. 31).
    Raises ValueError outside (0, 1].
    """
    return float(p) * mmse(float(np.sqrt(theory.sigma2(p, ratio))))


def upper_bound(p: float, ratio: float) -> float:
    """Section 4.3.2 upper bound: loss of the symmetric model with a = 1, b = −σ·sqrt(2 log 1/p).

    σ² = Var(x)(1/ratio − 1) (eq. 6); the loss is tms.persian_rug.theory.symmetric_loss (exact
    quadrature), so it is ≥ the optimal symmetric loss; it scales like p²/ratio·log(1/p) (eq. 13).
    p, ratio: scalars in (0, 1); p = 1 has no log(1/p) and raises ValueError, as do values
    outside (0, 1].
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"the upper-bound construction needs p in (0, 1), got {p}")
    sigma = float(np.sqrt(theory.sigma2(p, ratio)))
    mu = sigma * np.sqrt(2 * np.log(1 / p))
    return float(theory.symmetric_loss(1.0, -mu, p, sigma))


def paper_initial_bound(p):
    """The bound printed after the paper's eq. 8, L0 ≥ p/3 − p²/9 (an erratum: it uses
    (E u)² = 1/9 instead of 1/4, and L0 = p/3 − p²/4 lies below it for every p > 0).
    p: scalar or array in (0, 1]; raises ValueError outside."""
    theory.var_x(p)                                   # raises ValueError outside (0, 1]
    p = np.asarray(p, dtype=float)
    return p / 3 - p ** 2 / 9
