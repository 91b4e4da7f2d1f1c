"""Section 1 of the notes on toy autoencoding (tms.notes) against independent computations,
and the autoencoding_notes params section."""

import copy
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.linalg import subspace_angles
from scipy.optimize import minimize

from tms import notes, params

ROOT = Path(__file__).resolve().parents[1]


def _random_sigma(D, seed):
    """A random symmetric positive definite Σ; its eigenvalues are distinct almost surely."""
    M = np.random.default_rng(seed).standard_normal((D, D))
    return M @ M.T / D + 0.1 * np.eye(D)


def test_sparse_sigma_and_its_spectrum_match_the_closed_forms():
    S, D = 0.7, 6
    sigma = notes.sparse_sigma(S, D)
    assert sigma[0, 0] == pytest.approx(0.3 / 3, abs=1e-15)
    assert sigma[0, 1] == pytest.approx(0.09 / 4, abs=1e-15)
    lam = np.linalg.eigvalsh(sigma)[::-1]
    lam1, rest = notes.sparse_spectrum(S, D)
    assert lam[0] == pytest.approx(lam1, abs=1e-14)
    np.testing.assert_allclose(lam[1:], rest, atol=1e-14)          # D − 1 equal eigenvalues
    s = notes.scale_factors(D, 0.25)
    assert s[0] == 1 and s[-1] == pytest.approx(0.25) and np.all(np.diff(s) < 0)
    lam_s = np.linalg.eigvalsh(notes.sparse_sigma(S, D, s))
    assert np.min(np.diff(lam_s)) > 1e-3 * lam_s.max()              # distinct
    with pytest.raises(ValueError, match="S must be"):
        notes.sparse_sigma(1.0, D)
    with pytest.raises(ValueError, match="scale_min"):
        notes.scale_factors(D, 1.0)


def test_loss_equals_the_data_average_with_the_empirical_sigma():
    rng = np.random.default_rng(0)
    x = rng.random((500, 5))
    A, B = rng.standard_normal((5, 2)), rng.standard_normal((2, 5))
    direct = np.mean(np.sum((x - x @ (A @ B).T) ** 2, axis=1))
    assert notes.loss(A, B, x.T @ x / len(x)) == pytest.approx(direct, rel=1e-12)


def test_min_loss_is_the_optimum_found_by_a_generic_optimiser():
    # Corollary 2 against BFGS over (A, B) from several starts; tolerance 1e-8 relative
    sigma, D, d = _random_sigma(5, 1), 5, 2

    def f(theta):
        return notes.loss(theta[:D * d].reshape(D, d), theta[D * d:].reshape(d, D), sigma)

    best = min(minimize(f, np.random.default_rng(s).standard_normal(2 * D * d),
                        method="BFGS", options={"gtol": 1e-12}).fun for s in range(4))
    assert best == pytest.approx(notes.min_loss(sigma, d), rel=1e-8)


def test_principal_angles_match_scipy_also_when_small():
    rng = np.random.default_rng(2)
    A, V = rng.standard_normal((7, 3)), rng.standard_normal((7, 3))
    assert notes.largest_angle(A, V) == pytest.approx(subspace_angles(A, V).max(), abs=1e-12)
    tiny = V + 1e-7 * rng.standard_normal((7, 3))
    assert notes.largest_angle(tiny, V) == pytest.approx(subspace_angles(tiny, V).max(),
                                                         rel=1e-6)
    u = rng.standard_normal(7)
    assert notes.angle_to_vector(A, u) == pytest.approx(subspace_angles(A, u[:, None])[0],
                                                        abs=1e-12)


def test_gradient_and_hessian_match_finite_differences():
    rng = np.random.default_rng(3)
    sigma, D, d = _random_sigma(4, 3), 4, 2
    A, B = rng.standard_normal((D, d)), rng.standard_normal((d, D))
    gA, gB = notes.gradient(A, B, sigma)
    theta = np.concatenate([A.ravel(), B.ravel()])

    def f(t):
        return notes.loss(t[:D * d].reshape(D, d), t[D * d:].reshape(d, D), sigma)

    def grad(t):
        ga, gb = notes.gradient(t[:D * d].reshape(D, d), t[D * d:].reshape(d, D), sigma)
        return np.concatenate([ga.ravel(), gb.ravel()])

    h = 1e-6
    eye = np.eye(len(theta))
    fd = np.array([(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in eye])
    np.testing.assert_allclose(np.concatenate([gA.ravel(), gB.ravel()]), fd, rtol=1e-6, atol=1e-7)
    fd_h = np.array([(grad(theta + h * e) - grad(theta - h * e)) / (2 * h) for e in eye])
    np.testing.assert_allclose(notes.hessian(A, B, sigma), fd_h, rtol=1e-5, atol=1e-6)


def test_every_index_set_gives_a_critical_point_with_the_stated_loss_and_inertia():
    # Proposition 1 and 3 on a random Σ (distinct eigenvalues): gradient ≤ 1e-12, loss exact to
    # 1e-12, negative Hessian eigenvalues = #{j ∈ I, k ∉ I, k < j}, d² zero eigenvalues (GL(d)).
    sigma, D, d = _random_sigma(5, 4), 5, 2
    table = notes.critical_points_table(sigma, d, notes.invertible_c(d, 0))
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
    lam = notes.spectrum(sigma)[0]
    C = notes.invertible_c(3, 1)
    eps = np.geomspace(1e-3, 1e2, 11)
    table, summary = notes.saddle_table(sigma, [1, 3, 5], C, eps)
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
        notes.swap_pair([1, 2], 4)
    with pytest.raises(ValueError, match="distinct"):
        notes.critical_point(U, [1, 1], np.eye(2))
    with pytest.raises(ValueError, match="distinct"):
        notes.critical_point(U, [1, 5], np.eye(2))


def test_commutator_and_projection_residual_vanish_exactly_on_critical_points():
    sigma = _random_sigma(5, 6)
    lam, U = notes.spectrum(sigma)
    A, B = notes.critical_point(U, [2, 4], notes.invertible_c(2, 2))
    assert notes.commutator(A, sigma) < 1e-12 and notes.projection_residual(A, B) < 1e-12
    rng = np.random.default_rng(0)
    A2, B2 = rng.standard_normal((5, 2)), rng.standard_normal((2, 5))
    assert notes.commutator(A2, sigma) > 1e-2 and notes.projection_residual(A2, B2) > 1e-2


DEFAULT = yaml.safe_load((ROOT / "params.yaml").read_text())


@pytest.mark.parametrize("path, value, expected", [
    ("autoencoding_notes.linear.d", [1, 16], "d = 16 must be < D = 16"),
    ("autoencoding_notes.moments.S", [0.5, 1.0], "less than 1"),
    ("autoencoding_notes.scale_min", 1.0, "less than 1"),
    ("autoencoding_notes.saddle.I", [1, 2, 3], "top index set"),
    ("autoencoding_notes.saddle.I", [1, 2, 9], "distinct indices in 1..8"),
    ("autoencoding_notes.saddle.epsilon", {"start": 0.0, "stop": 1.0, "num": 3}, "greater than 0"),
    ("autoencoding_notes.linear.steps", [300, 100], "strictly increasing"),
    ("autoencoding_notes.flows.lr", 1e-6, "gradient steps"),
    ("autoencoding_notes.relu.n_per_stratum", 10, "greater than or equal to 100"),
    ("autoencoding_notes.relu.trian", {}, "unknown key"),
])
def test_bad_notes_params_name_the_key(path, value, expected):
    raw = copy.deepcopy(DEFAULT)
    *parents, last = path.split(".")
    node = raw
    for key in parents:
        node = node[key]
    node[last] = value
    with pytest.raises(params.ParamsError) as err:
        params.parse(raw, "params.yaml")
    assert expected in str(err.value) and path.rsplit(".", 1)[0] in str(err.value)


def test_a_bad_value_stops_a_notes_stage_before_any_output(tmp_path):
    raw = copy.deepcopy(DEFAULT)
    raw["autoencoding_notes"]["saddle"]["I"] = [1, 2, 3]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    run = subprocess.run([sys.executable, str(ROOT / "stages/notes_saddle.py")], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert "autoencoding_notes.saddle" in run.stderr and "top index set" in run.stderr
    assert not (tmp_path / "data").exists()
