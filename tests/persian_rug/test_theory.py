"""Tests of tms.persian_rug.theory: the symmetric-model loss (eq. 4–5), its optimum (section 4.2,
eq. 6) and the optimal linear loss (docs/paper-gaps.md erratum). All losses are per-feature MSE."""

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from scipy.optimize import minimize

from tms.persian_rug import theory
from tms.persian_rug.theory import (optimal_linear_loss, optimal_symmetric, sigma2, symmetric_loss,
                                    theory_table, var_x)

FIG3_P, FIG3_RATIO = 0.044, 130 / 512  # n_s = 512, n_d = 130 (paper fig. 3)


def test_var_x_and_sigma2_and_linear_loss():
    p = np.array([1e-3, 0.044, 0.5, 1.0])
    np.testing.assert_allclose(var_x(p), p / 3 - p**2 / 4, rtol=1e-14)
    n_s, n_d = 512, 130
    np.testing.assert_allclose(sigma2(FIG3_P, n_d / n_s), var_x(FIG3_P) * (n_s / n_d - 1), rtol=1e-14)
    assert sigma2(0.3, 1.0) == 0.0
    ratio = np.array([[0.01], [0.1], [1.0]])  # broadcasts with p to shape (3, 4)
    lin = optimal_linear_loss(p, ratio)
    assert lin.shape == (3, 4)
    np.testing.assert_allclose(lin, var_x(p) * (1 - ratio), rtol=1e-14)


@pytest.mark.parametrize("m, s", [(0.3, 0.2), (-0.25, 0.1), (0.0, 1.5), (-2.0, 0.4), (1.0, 0.05)])
@pytest.mark.parametrize("u", [0.0, 0.37, 1.0])
def test_inner_closed_forms_match_quadrature_over_nu(m, s, u):
    density = stats.norm(m, s).pdf
    lo, hi = m - 12 * s, m + 12 * s
    points = [0.0] if lo < 0 < hi else None
    relu = lambda z: max(z, 0.0)  # noqa: E731
    num_m1 = integrate.quad(lambda z: relu(z) * density(z), lo, hi, points=points, epsabs=1e-13)[0]
    num_m2 = integrate.quad(lambda z: relu(z) ** 2 * density(z), lo, hi, points=points,
                            epsabs=1e-13)[0]
    num_on = integrate.quad(lambda z: (u - relu(z)) ** 2 * density(z), lo, hi, points=points,
                            epsabs=1e-13)[0]
    m1, m2 = theory._relu_moments(m, s)
    assert m1 == pytest.approx(num_m1, rel=1e-8, abs=1e-13)
    assert m2 == pytest.approx(num_m2, rel=1e-8, abs=1e-13)
    assert u**2 - 2 * u * m1 + m2 == pytest.approx(num_on, rel=1e-8, abs=1e-13)
    # the equivalent form u²Φ(−t) + ((m − u)² + s²)Φ(t) + sφ(t)(m − 2u)
    t = m / s
    phi, cdf = stats.norm.pdf(t), stats.norm.cdf(t)
    form = u**2 * stats.norm.cdf(-t) + ((m - u) ** 2 + s**2) * cdf + s * phi * (m - 2 * u)
    assert form == pytest.approx(num_on, rel=1e-8, abs=1e-13)


@pytest.mark.parametrize("a, b, p, sigma", [
    (1.3, -0.44, FIG3_P, np.sqrt(sigma2(FIG3_P, FIG3_RATIO))),
    (1.0, -0.02, 0.01, 1e-4),   # sharp bend: the u-quadrature must split around u = 0.02
    (0.7, 0.05, 0.3, 2.0),
    (-0.8, 0.2, 0.5, 0.3),
    (1.0, -0.3, 0.2, 0.0),      # no noise: a kink at u = 0.3
])
def test_u_quadrature_matches_scipy_quad(a, b, p, sigma):
    s = abs(a) * sigma

    def inner_on(u):
        m1, m2 = theory._relu_moments(a * u + b, s)
        return u**2 - 2 * u * m1 + m2

    # the integrand bends at u = -b/a on a scale sigma: give quad break points across the bend
    points = [-b / a + k * sigma for k in (-8, -3, -1, 0, 1, 3, 8)]
    points = [u for u in points if 0 < u < 1] or None
    on = integrate.quad(inner_on, 0, 1, points=points, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
    expected = (1 - p) * theory._relu_moments(b, s)[1] + p * on
    assert float(symmetric_loss(a, b, p, sigma)) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def _monte_carlo_loss(a, b, p, sigma, n, seed, stratified=True):
    """Seeded Monte Carlo estimate of L(a, b) and its standard error, n samples per stratum.

    stratified: sample the off (x = 0) and on (x = u) cases separately, n samples each, and
    weight them by 1 - p and p (much lower variance at small p); otherwise sample x = c·u.
    """
    rng = np.random.default_rng(seed)
    if not stratified:
        x = (rng.random(n) < p) * rng.random(n)
        err = (x - np.maximum(a * (x + sigma * rng.standard_normal(n)) + b, 0.0)) ** 2
        return err.mean(), err.std() / np.sqrt(n)
    off = np.maximum(a * sigma * rng.standard_normal(n) + b, 0.0) ** 2
    u = rng.random(n)
    on = (u - np.maximum(a * (u + sigma * rng.standard_normal(n)) + b, 0.0)) ** 2
    mean = (1 - p) * off.mean() + p * on.mean()
    se = np.sqrt((1 - p) ** 2 * off.var() + p**2 * on.var()) / np.sqrt(n)
    return mean, se


@pytest.mark.parametrize("a, b, p, sigma, stratified", [
    (1.3, -0.44, FIG3_P, np.sqrt(sigma2(FIG3_P, FIG3_RATIO)), True),
    (1.2, -0.15, 0.01, np.sqrt(sigma2(0.01, 0.5)), True),  # b < 0, small p
    (1.5, -0.6, 0.001, np.sqrt(sigma2(0.001, 0.05)), True),  # b < 0, very small p
    (0.9, 0.1, 0.4, 0.5, True),
    (1.0, -0.3, 0.2, 0.0, True),      # no noise
    (-0.5, 0.3, 0.3, 0.4, True),      # a < 0
    (1.1, -0.1, 0.5, 0.2, False),     # plain sampling of x = c·u
])
def test_symmetric_loss_matches_monte_carlo(a, b, p, sigma, stratified):
    mc, se = _monte_carlo_loss(a, b, p, sigma, n=2_000_000, seed=1234, stratified=stratified)
    assert se < 0.0025 * mc  # the 1% check below is at least 4 standard errors
    assert float(symmetric_loss(a, b, p, sigma)) == pytest.approx(mc, rel=0.01)


def test_symmetric_loss_broadcasts_and_special_cases():
    a = np.array([0.5, 1.0, 1.5])
    out = symmetric_loss(a[:, None], np.array([-0.1, 0.0]), 0.1, 0.2)
    assert out.shape == (3, 2)
    for i in range(3):
        for j, b in enumerate([-0.1, 0.0]):
            assert out[i, j] == pytest.approx(float(symmetric_loss(a[i], b, 0.1, 0.2)), rel=1e-13)
    # identity map without noise is exact; output zero gives E[x²] = p/3
    assert float(symmetric_loss(1.0, 0.0, 0.3, 0.0)) == pytest.approx(0.0, abs=1e-15)
    assert float(symmetric_loss(0.0, 0.0, 0.3, 0.7)) == pytest.approx(0.1, rel=1e-12)


GRID = [(0.001, 0.01), (0.01, 0.1), (FIG3_P, FIG3_RATIO), (0.1, 0.5), (0.5, 0.05), (1.0, 0.001),
        (0.002, 0.9)]


@pytest.mark.parametrize("p, ratio", GRID)
def test_optimal_symmetric_is_a_minimum(p, ratio):
    opt = optimal_symmetric(p, ratio)
    sigma = np.sqrt(opt["sigma2"])
    assert opt["sigma2"] == pytest.approx(float(sigma2(p, ratio)), rel=1e-14)
    assert opt["loss"] == pytest.approx(float(symmetric_loss(opt["a"], opt["b"], p, sigma)), rel=1e-12)
    for delta in (1e-3, 1e-2, 1e-1):
        for da in (-delta, 0.0, delta):
            for db in (-delta, 0.0, delta):
                perturbed = float(symmetric_loss(opt["a"] + da, opt["b"] + db, p, sigma))
                assert opt["loss"] <= perturbed * (1 + 1e-12)
    assert opt["loss"] <= p / 3                      # output-zero strategy (a = 0, b = 0)
    assert opt["loss"] <= float(var_x(p))            # best constant output (a = 0, b = p/2)
    assert opt["loss"] <= float(optimal_linear_loss(p, ratio)) * (1 + 1e-12)


@pytest.mark.parametrize("p, ratio", [(0.01, 0.1), (0.3, 0.02), (0.003, 0.6)])
def test_optimal_symmetric_beats_multistart_nelder_mead(p, ratio):
    opt = optimal_symmetric(p, ratio)
    sigma = np.sqrt(opt["sigma2"])
    loss = lambda z: float(symmetric_loss(z[0], z[1], p, sigma))  # noqa: E731
    starts = [(1.0, -2 * sigma), (1.0, 0.0), (0.3, 0.0), (ratio, p / 2), (2.0, -1.0)]
    best = min(minimize(loss, s, method="Nelder-Mead",
                        options={"xatol": 1e-9, "fatol": 1e-15, "maxiter": 3000}).fun
               for s in starts)
    assert opt["loss"] <= best * (1 + 1e-9)


@pytest.mark.parametrize("p", [0.001, 0.3, 1.0])
def test_ratio_one_is_lossless(p):
    assert optimal_symmetric(p, 1.0) == {"loss": 0.0, "a": 1.0, "b": 0.0, "sigma2": 0.0}


@pytest.mark.parametrize("p", [0.005, 0.05, 0.5])
def test_loss_increases_as_ratio_decreases(p):
    ratios = [1.0, 0.9, 0.5, 0.2, 0.1, 0.03, 0.01, 0.001]
    losses = [optimal_symmetric(p, r)["loss"] for r in ratios]
    assert np.all(np.diff(losses) > 0)


def test_loss_per_feature_becomes_small_when_ratio_over_p_is_large():
    # p = 0.01: the fraction of the output-zero loss p/3 that remains falls as r/p grows
    fractions = [optimal_symmetric(0.01, r)["loss"] / (0.01 / 3) for r in (0.02, 0.1, 0.5, 0.9)]
    assert np.all(np.diff(fractions) < 0)
    assert fractions[2] < 0.05      # r = 0.5: loss well below p/3
    assert fractions[3] < 0.005


def test_relu_model_beats_linear_at_high_sparsity():
    for p, ratio in [(0.01, 0.1), (0.01, 0.5), (0.001, 0.05), (FIG3_P, FIG3_RATIO)]:
        loss = optimal_symmetric(p, ratio)["loss"]
        assert loss < 0.5 * float(optimal_linear_loss(p, ratio))


def test_theory_table():
    p_values, ratios = [0.01, 0.2], [0.05, 0.5, 1.0]
    df = theory_table(p_values, ratios)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["p", "ratio", "sigma2", "a", "b", "loss", "loss_linear"]
    assert len(df) == 6
    assert list(zip(df.p, df.ratio)) == [(p, r) for p in p_values for r in ratios]
    for row in df.itertuples():
        opt = optimal_symmetric(row.p, row.ratio)
        assert (row.sigma2, row.a, row.b, row.loss) == (opt["sigma2"], opt["a"], opt["b"], opt["loss"])
        assert row.loss_linear == pytest.approx(float(var_x(row.p)) * (1 - row.ratio), rel=1e-14)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, np.nan])
def test_bad_p_raises(bad):
    for call in (lambda: var_x(bad), lambda: sigma2(bad, 0.5), lambda: optimal_linear_loss(bad, 0.5),
                 lambda: symmetric_loss(1.0, 0.0, bad, 0.1), lambda: optimal_symmetric(bad, 0.5),
                 lambda: theory_table([0.1, bad], [0.5])):
        with pytest.raises(ValueError, match=r"p=.*" + ("nan" if np.isnan(bad) else str(bad))):
            call()


@pytest.mark.parametrize("bad", [0.0, -0.2, 1.01])
def test_bad_ratio_raises(bad):
    for call in (lambda: sigma2(0.1, bad), lambda: optimal_linear_loss(0.1, bad),
                 lambda: optimal_symmetric(0.1, bad), lambda: theory_table([0.1], [0.5, bad])):
        with pytest.raises(ValueError, match=r"ratio=.*" + str(bad)):
            call()


def test_bad_sigma_and_shapes_raise():
    with pytest.raises(ValueError, match="sigma"):
        symmetric_loss(1.0, 0.0, 0.1, -0.5)
    with pytest.raises(ValueError, match="scalar"):
        optimal_symmetric([0.1, 0.2], 0.5)


def test_initial_loss_is_the_ratio_to_zero_limit_and_below_the_papers_bound():
    for p in (0.01, 0.1, 0.5):
        near_zero = theory.optimal_symmetric(p, 1e-4)["loss"]
        assert near_zero == pytest.approx(theory.initial_loss(p), rel=2e-3)
        assert near_zero <= theory.initial_loss(p)
        assert theory.initial_loss(p) == pytest.approx(p / 3 - p * p / 4)
        assert near_zero < p / 3 - p * p / 9          # the paper's stated lower bound fails
