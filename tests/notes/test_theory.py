"""Section 1 of the notes on toy autoencoding (tms.notes.theory) against independent
computations."""

import itertools

import numpy as np
import pytest
from scipy.linalg import subspace_angles
from scipy.optimize import minimize

from tms.notes import theory


def _random_sigma(D, seed):
    """A random symmetric positive definite Σ; its eigenvalues are distinct almost surely."""
    M = np.random.default_rng(seed).standard_normal((D, D))
    return M @ M.T / D + 0.1 * np.eye(D)


def test_sparse_sigma_and_its_spectrum_match_the_closed_forms():
    S, D = 0.7, 6
    sigma = theory.sparse_sigma(S, D)
    assert sigma[0, 0] == pytest.approx(0.3 / 3, abs=1e-15)
    assert sigma[0, 1] == pytest.approx(0.09 / 4, abs=1e-15)
    lam = np.linalg.eigvalsh(sigma)[::-1]
    lam1, rest = theory.sparse_spectrum(S, D)
    assert lam[0] == pytest.approx(lam1, abs=1e-14)
    np.testing.assert_allclose(lam[1:], rest, atol=1e-14)          # D − 1 equal eigenvalues
    s = theory.scale_factors(D, 0.25)
    assert s[0] == 1 and s[-1] == pytest.approx(0.25) and np.all(np.diff(s) < 0)
    lam_s = np.linalg.eigvalsh(theory.sparse_sigma(S, D, s))
    assert np.min(np.diff(lam_s)) > 1e-3 * lam_s.max()              # distinct
    with pytest.raises(ValueError, match="S must be"):
        theory.sparse_sigma(1.0, D)
    with pytest.raises(ValueError, match="scale_min"):
        theory.scale_factors(D, 1.0)


def test_loss_equals_the_data_average_with_the_empirical_sigma():
    rng = np.random.default_rng(0)
    x = rng.random((500, 5))
    A, B = rng.standard_normal((5, 2)), rng.standard_normal((2, 5))
    direct = np.mean(np.sum((x - x @ (A @ B).T) ** 2, axis=1))
    assert theory.loss(A, B, x.T @ x / len(x)) == pytest.approx(direct, rel=1e-12)


def test_min_loss_is_the_optimum_found_by_a_generic_optimiser():
    # Corollary 2 against BFGS over (A, B) from several starts; tolerance 1e-8 relative
    sigma, D, d = _random_sigma(5, 1), 5, 2

    def f(theta):
        return theory.loss(theta[:D * d].reshape(D, d), theta[D * d:].reshape(d, D), sigma)

    best = min(minimize(f, np.random.default_rng(s).standard_normal(2 * D * d),
                        method="BFGS", options={"gtol": 1e-12}).fun for s in range(4))
    assert best == pytest.approx(theory.min_loss(sigma, d), rel=1e-8)


def test_principal_angles_match_scipy_also_when_small():
    rng = np.random.default_rng(2)
    A, V = rng.standard_normal((7, 3)), rng.standard_normal((7, 3))
    assert theory.largest_angle(A, V) == pytest.approx(subspace_angles(A, V).max(), abs=1e-12)
    tiny = V + 1e-7 * rng.standard_normal((7, 3))
    assert theory.largest_angle(tiny, V) == pytest.approx(subspace_angles(tiny, V).max(),
                                                          rel=1e-6)
    u = rng.standard_normal(7)
    assert theory.angle_to_vector(A, u) == pytest.approx(subspace_angles(A, u[:, None])[0],
                                                         abs=1e-12)


def test_gradient_and_hessian_match_finite_differences():
    rng = np.random.default_rng(3)
    sigma, D, d = _random_sigma(4, 3), 4, 2
    A, B = rng.standard_normal((D, d)), rng.standard_normal((d, D))
    gA, gB = theory.gradient(A, B, sigma)
    theta = np.concatenate([A.ravel(), B.ravel()])

    def f(t):
        return theory.loss(t[:D * d].reshape(D, d), t[D * d:].reshape(d, D), sigma)

    def grad(t):
        ga, gb = theory.gradient(t[:D * d].reshape(D, d), t[D * d:].reshape(d, D), sigma)
        return np.concatenate([ga.ravel(), gb.ravel()])

    h = 1e-6
    eye = np.eye(len(theta))
    fd = np.array([(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in eye])
    np.testing.assert_allclose(np.concatenate([gA.ravel(), gB.ravel()]), fd, rtol=1e-6, atol=1e-7)
    fd_h = np.array([(grad(theta + h * e) - grad(theta - h * e)) / (2 * h) for e in eye])
    np.testing.assert_allclose(theory.hessian(A, B, sigma), fd_h, rtol=1e-5, atol=1e-6)


def test_every_index_set_gives_a_critical_point_with_the_stated_loss_and_inertia():
    # Proposition 1 and 3 on a random Σ (distinct eigenvalues): gradient ≤ 1e-12, loss exact to
    # 1e-12, negative Hessian eigenvalues = #{j ∈ I, k ∉ I, k < j}, d² zero eigenvalues (GL(d)).
    sigma, D, d = _random_sigma(5, 4), 5, 2
    table = theory.critical_points_table(sigma, d, theory.invertible_c(d, 0))
    assert len(table) == 10
    assert table.grad_norm.max() < 1e-12
    np.testing.assert_allclose(table.loss, table.loss_formula, atol=1e-12)
    assert (table.n_negative == table.inversions).all() and (table.n_zero == d * d).all()
    assert table[table.n_negative == 0].I.tolist() == ["1 2"]
    brute = {I: sum(1 for j in I for k in range(1, j) if k not in I)
             for I in itertools.combinations(range(1, D + 1), d)}
    assert table.inversions.tolist() == list(brute.values())


def test_perturbation_lowers_the_loss_by_the_stated_amount():
    sigma = _random_sigma(6, 5)
    lam = theory.spectrum(sigma)[0]
    C = theory.invertible_c(3, 1)
    eps = np.geomspace(1e-3, 1e2, 11)
    table, summary = theory.saddle_table(sigma, [1, 3, 5], C, eps)
    assert (summary["j"], summary["k"]) == (5, 2)
    expected = eps**2 / (1 + eps**2) * (lam[1] - lam[4])                   # λ_k − λ_j
    np.testing.assert_allclose(table.decrease, expected, rtol=1e-8)
    assert summary["curvature"] == pytest.approx(-2 * (lam[1] - lam[4]), rel=1e-5)
    assert summary["rayleigh"] == pytest.approx(summary["rayleigh_predicted"], rel=1e-10)
    assert summary["hess_min"] <= summary["rayleigh"] < 0
    assert summary["grad_norm"] < 1e-12


def test_bad_index_sets_are_rejected():
    U = np.eye(4)
    with pytest.raises(ValueError, match="top index set"):
        theory.swap_pair([1, 2], 4)
    with pytest.raises(ValueError, match="distinct"):
        theory.critical_point(U, [1, 1], np.eye(2))
    with pytest.raises(ValueError, match="distinct"):
        theory.critical_point(U, [1, 5], np.eye(2))
    lam = np.array([4.0, 3.0, 2.0, 1.0])
    assert theory.critical_loss(lam, [1, 3]) == 4.0          # tr Σ 10 − λ_1 − λ_3
    with pytest.raises(ValueError, match="distinct"):        # index 0 would wrap to λ_D
        theory.critical_loss(lam, [0, 1])
    with pytest.raises(ValueError, match="nonzero"):         # no direction (it read π/2)
        theory.angle_to_vector(U[:, :2], np.zeros(4))


def test_commutator_and_projection_residual_vanish_exactly_on_critical_points():
    sigma = _random_sigma(5, 6)
    lam, U = theory.spectrum(sigma)
    A, B = theory.critical_point(U, [2, 4], theory.invertible_c(2, 2))
    assert theory.commutator(A, sigma) < 1e-12 and theory.projection_residual(A, B) < 1e-12
    rng = np.random.default_rng(0)
    A2, B2 = rng.standard_normal((5, 2)), rng.standard_normal((2, 5))
    assert theory.commutator(A2, sigma) > 1e-2 and theory.projection_residual(A2, B2) > 1e-2
