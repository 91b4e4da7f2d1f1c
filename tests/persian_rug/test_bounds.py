"""Section 4.3 / appendix D bounds (tms.persian_rug.bounds) against Monte Carlo, limits and the
theory."""

import numpy as np
import pytest

from tms.persian_rug import bounds, theory


@pytest.mark.parametrize("sigma", [0.03, 0.2, 0.7])
def test_mmse_matches_monte_carlo_with_a_numerical_posterior_mean(sigma):
    # Independent of the closed form: E[u | y] by brute-force quadrature on a u grid, the error
    # averaged over Monte Carlo draws of (u, ν).
    rng = np.random.default_rng(0)
    n = 40000
    u = rng.uniform(size=n)
    y = u + sigma * rng.normal(size=n)
    grid = (np.arange(4000) + 0.5) / 4000
    post = np.empty(n)
    for k in range(0, n, 2000):
        w = np.exp(-0.5 * ((y[k:k + 2000, None] - grid) / sigma) ** 2)
        post[k:k + 2000] = (w * grid).sum(1) / w.sum(1)
    err = (u - post) ** 2
    assert bounds.mmse(sigma) == pytest.approx(err.mean(), abs=4 * err.std() / np.sqrt(n))


def test_mmse_limits():
    assert bounds.mmse(0.0) == 0.0
    assert bounds.mmse(1e-3) == pytest.approx(1e-6, rel=2e-3)      # small σ: σ² (edges O(σ³))
    assert bounds.mmse(50.0) == pytest.approx(1 / 12, rel=1e-3)    # no information: Var(u)
    with pytest.raises(ValueError, match="sigma"):
        bounds.mmse(-1.0)


@pytest.mark.parametrize("p", [0.001, 0.01, 0.05, 0.2])
@pytest.mark.parametrize("ratio", [0.05, 0.2, 0.5, 0.9])
def test_lower_le_optimal_symmetric_le_upper(p, ratio):
    opt = theory.optimal_symmetric(p, ratio)["loss"]
    assert bounds.lower_bound(p, ratio) <= opt <= bounds.upper_bound(p, ratio)


def test_bounds_scale_like_the_paper_in_the_sparse_regime():
    # lower / (p σ²) → 1 from below as p → 0 (the u-interval's edges cost O(σ³)), so the
    # lower bound is ≈ p²(1/r − 1)/3; upper / (p σ² log 1/p) stays of order one (eq. 13, 31)
    r = 0.5
    gaps = [1 - bounds.lower_bound(p, r) / (p * theory.sigma2(p, r)) for p in (1e-3, 1e-4, 1e-5)]
    assert 0 < gaps[2] < gaps[1] < gaps[0] < 0.05 and gaps[2] < 0.005
    ratios = [bounds.upper_bound(p, r) / (p * theory.sigma2(p, r) * np.log(1 / p))
              for p in (1e-5, 1e-4, 1e-3)]
    assert max(ratios) / min(ratios) < 1.5
    with pytest.raises(ValueError, match="p in"):
        bounds.upper_bound(1.0, r)


def test_the_printed_initial_bound_is_violated_by_L0():
    p = np.geomspace(1e-4, 1.0, 50)
    assert np.all(theory.initial_loss(p) < bounds.paper_initial_bound(p))
    with pytest.raises(ValueError):
        bounds.paper_initial_bound(0.0)
