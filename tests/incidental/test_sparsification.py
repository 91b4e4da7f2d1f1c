import numpy as np
import pytest
from scipy.stats import halfnorm

from tms.incidental import sparsification


def test_suffix_sums_match_brute_force():
    w0 = sparsification.initial_weights(300, 0.9, 1)
    weights = sparsification.SortedWeights(w0)
    for B in [0.0, np.median(w0), np.sort(w0)[-3], w0.max()]:
        alive = w0[w0 > B] - B
        k, s1, q = weights.sums(B)
        assert k == len(alive)
        assert s1 == pytest.approx(alive.sum(), rel=1e-12, abs=1e-15)
        assert q == pytest.approx((alive ** 2).sum(), rel=1e-10, abs=1e-15)


def test_exact_integrator_matches_euler_within_first_order_error():
    m, lam = 400, 2e-3
    table = sparsification.euler_comparison(m, lam, 0.9, 3, [0.4, 0.2, 0.1], n_times=60)
    err = (table.l1 / table.exact_l1 - 1).abs().groupby(table.dt).max()
    # Euler is first order: halving dt halves the error, and the error is small.
    assert err[0.4] / err[0.2] == pytest.approx(2.0, rel=0.15)
    assert err[0.2] / err[0.1] == pytest.approx(2.0, rel=0.15)
    assert err[0.1] < 2e-3
    l2 = (table.l2sq / table.exact_l2sq - 1).abs().groupby(table.dt).max()
    assert l2[0.1] < l2[0.4] / 3


def test_affine_map_reproduces_the_weights_and_relative_variance():
    m, lam = 500, 1e-3
    w0 = sparsification.initial_weights(m, 0.9, 5)
    sol = sparsification.integrate(sparsification.SortedWeights(w0), lam)
    t = np.array([0.0, 1.0, 50.0, 0.5 * sol.t_end])
    A, B = sol.at(t)
    table = sol.table(t)
    traj = sparsification.trajectory(m, lam, 0.9, 5, 40)
    for k in range(len(t)):
        w = A[k] * np.clip(w0 - B[k], 0.0, None)
        w = w[w > 0]
        assert len(w) == table.m_prime[k]
        assert w.sum() == pytest.approx(table.l1[k], rel=1e-9)
        assert (w ** 2).sum() == pytest.approx(table.l2sq[k], rel=1e-9)
    A, B = sol.at(traj.t.to_numpy())
    for row, a, b in zip(traj.itertuples(), A, B):
        w = w0[w0 > b] - b
        if len(w) >= 2:
            assert row.relvar == pytest.approx(w.var() / w.mean() ** 2, rel=1e-7)


def test_sparsification_ends_with_one_unit_weight_and_l1_follows_theory():
    traj = sparsification.trajectory(5000, 1e-4, 0.9, 0, 60)
    assert traj.m_prime.iloc[0] == 5000 and traj.m_prime.iloc[-1] == 1
    assert traj.l2sq.iloc[0] == pytest.approx(0.81, rel=0.05)      # (0.9)² at t = 0
    assert traj.l2sq.iloc[-1] == pytest.approx(1.0, abs=2e-3)
    assert np.all(np.diff(traj.m_prime) <= 0)
    ratio = traj.l1 / sparsification.theory_l1(traj.t, 5000, 1e-4)
    assert ratio.between(1 / 3, 3).all()


def test_relative_variance_bounds_match_brute_force_and_enclose_the_simulation():
    desc = np.sort(sparsification.initial_weights(50, 0.9, 2))[::-1]
    lo, hi = sparsification.relvar_bounds(desc)
    for k in (2, 7, 49, 50):
        top = desc[:k]
        below = desc[k] if k < 50 else 0.0
        assert lo[k - 1] == pytest.approx((top - below).var() / (top - below).mean() ** 2)
        shifted = top - desc[k - 1]
        assert hi[k - 1] == pytest.approx(shifted.var() / shifted.mean() ** 2)
    traj = sparsification.trajectory(2000, 1e-3, 0.9, 4, 80)
    two = traj[traj.m_prime >= 2]
    assert (two.relvar >= two.relvar_lo * (1 - 1e-9)).all()
    assert (two.relvar <= two.relvar_hi * (1 + 1e-9)).all()


def test_ideal_weights_hit_regular_half_normal_percentiles():
    w = sparsification.ideal_weights(10)
    np.testing.assert_allclose(w, halfnorm.ppf(1 - (np.arange(1, 11) - 0.5) / 10))
    # the relative variance of a half-normal: (1 − 2/π)/(2/π)
    big = sparsification.ideal_weights(200000)
    assert big.var() / big.mean() ** 2 == pytest.approx((1 - 2 / np.pi) / (2 / np.pi), rel=1e-3)


def test_theory_curves():
    assert sparsification.theory_l1(0.0, 10000, 1e-3) == pytest.approx(100.0)
    assert sparsification.theory_m_prime(1e3, 10000, 1e-3) == pytest.approx(1 / 1.01 ** 2)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="lam"):
        sparsification.integrate(sparsification.SortedWeights(np.array([0.1, 0.2])), 0.0)
    with pytest.raises(ValueError, match="m >= 2"):
        sparsification.initial_weights(1, 0.9, 0)
    with pytest.raises(ValueError, match="dt"):
        sparsification.euler(np.ones(3), 1e-3, 0.0, np.array([1.0]))
    sol = sparsification.integrate(sparsification.SortedWeights(np.array([0.3, 0.2, 0.1])), 1e-2)
    with pytest.raises(ValueError, match="t_end"):
        sol.at(np.array([sol.t_end * 2]))
