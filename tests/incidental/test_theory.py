import numpy as np
import pytest

from tms.incidental import theory


def _within(est_se, exact, k=4.0):
    est, se = est_se
    assert abs(est - exact) <= k * se, (est, se, exact)


def test_fourth_norm_of_a_random_unit_vector_is_3_over_m_plus_2():
    for m in (4, 16, 64):
        _within(theory.random_unit_fourth_norm_mc(m, 40000, m), theory.random_unit_fourth_norm(m))
    # and the Monte Carlo can tell 3/(m + 2) from the paper's limit 3/m at small m
    est, se = theory.random_unit_fourth_norm_mc(4, 40000, 0)
    assert abs(est - 3 / 4) > 10 * se


def test_collision_probability_and_interference_at_init():
    _within(theory.collision_probability_mc(8, 40000, 1), 1 / 16)
    _within(theory.interference_at_init_mc(6, 12, 20000, 2), 5 / 24)


def test_projected_fourth_moment_carries_the_excess_kurtosis():
    w = theory.unit_encodings(8, 5, 0)[4]
    for noise in ("bipolar", "normal"):
        _within(theory.projected_fourth_moment_mc(w, 0.3, noise, 60000, 3),
                theory.projected_fourth_moment(w, 0.3, noise))
    # bipolar: 3σ⁴‖w‖⁴ − 2σ⁴‖w‖₄⁴; normal: 3σ⁴‖w‖⁴ whatever the direction
    assert theory.projected_fourth_moment(w, 0.3, "bipolar") == pytest.approx(
        0.3 ** 4 * (3 - 2 * (w ** 4).sum()))
    e = np.eye(8)[0]
    assert theory.projected_fourth_moment(e, 0.3, "normal") == pytest.approx(
        theory.projected_fourth_moment(w, 0.3, "normal"))


def test_printed_fourth_moment_double_counts_the_pairs():
    """Appendix C's 6Σ_{j≠j'} is off the Monte Carlo; an exact sum over every bipolar noise
    vector of R^4 gives the corrected form, and the printed one exceeds it by 3σ⁴Σ_{j≠j'}."""
    w = theory.unit_encodings(4, 5, 1)[2]
    xi = 0.3 * np.array(np.meshgrid(*[[-1, 1]] * 4)).reshape(4, -1).T
    exact = float(np.mean((xi @ w) ** 4))
    assert theory.projected_fourth_moment(w, 0.3, "bipolar") == pytest.approx(exact)
    pairs = (w @ w) ** 2 - (w ** 4).sum()
    assert theory.printed_fourth_moment(w, 0.3, "bipolar") - exact == pytest.approx(
        3 * 0.3 ** 4 * pairs)
    est, se = theory.projected_fourth_moment_mc(w, 0.3, "bipolar", 60000, 3)
    assert abs(est - theory.printed_fourth_moment(w, 0.3, "bipolar")) > 10 * se


def test_quadrature_is_exact_for_noise_moments():
    for noise, mu4 in (("bipolar", 0.2 ** 4), ("normal", 3 * 0.2 ** 4)):
        nodes, probs = theory.noise_nodes(3, 0.2, noise)
        assert probs.sum() == pytest.approx(1.0)
        assert probs @ nodes[:, 0] ** 2 == pytest.approx(0.04)
        assert probs @ nodes[:, 1] ** 4 == pytest.approx(mu4)
        assert probs @ (nodes[:, 0] ** 4 * nodes[:, 2] ** 4) == pytest.approx(mu4 ** 2)


def test_next_step_loss_matches_monte_carlo():
    rng = np.random.default_rng(4)
    w = theory.unit_encodings(3, 4, 1)[2]
    eta, sigma = 0.05, 0.3
    for noise in ("bipolar", "normal"):
        xi = (sigma * np.sign(rng.standard_normal((200000, 3))) if noise == "bipolar"
              else sigma * rng.standard_normal((200000, 3)))
        xi2 = (sigma * np.sign(rng.standard_normal((200000, 3))) if noise == "bipolar"
               else sigma * rng.standard_normal((200000, 3)))
        w1 = w - 2 * eta * (xi @ w)[:, None] * (2 * w + xi)
        loss = ((w1 * w1).sum(1) - 1 + (w1 * xi2).sum(1)) ** 2
        assert theory.expected_next_loss(w, eta, sigma, noise) == pytest.approx(
            loss.mean(), abs=4 * loss.std() / np.sqrt(len(loss)))


def _eta2_closed_form(w: np.ndarray, sigma: float, noise: str) -> float:
    """Appendix C's η² coefficient of the expected next-step loss for a unit w, every term kept:
    16(4σ² + E(w·ξ)⁴) + 4σ²(4σ² + μ₄ + (m − 1)σ⁴), E(w·ξ)⁴ = 3σ⁴ + ‖w‖₄⁴(μ₄ − 3σ⁴)."""
    assert float(w @ w) == pytest.approx(1.0, abs=1e-9)
    s2, mu4 = theory.noise_moments(sigma, noise)
    return (16 * (4 * s2 + theory.projected_fourth_moment(w, sigma, noise))
            + 4 * s2 * (4 * s2 + mu4 + (len(w) - 1) * s2 * s2))


def test_fourth_norm_coefficient_is_negative_for_bipolar_and_zero_for_normal():
    sigma = 0.2
    for noise, kurtosis in (("bipolar", -2.0), ("normal", 0.0)):
        for w in theory.unit_encodings(4, 5, 7):
            # the η² coefficient from the exact expectation equals the closed form
            assert theory.loss_polynomial(w, sigma, noise)[2] == pytest.approx(
                _eta2_closed_form(w, sigma, noise), rel=1e-10)
        coef = theory.fourth_norm_coefficient(sigma, noise)
        assert coef == pytest.approx(16 * sigma ** 4 * kurtosis, abs=1e-15)
        assert theory.fourth_norm_slope(4, sigma, noise, 6, 8) == pytest.approx(coef, abs=1e-12)
    assert theory.fourth_norm_slope(4, sigma, "bipolar", 6, 8) < 0


def test_normal_noise_keeps_the_whole_next_step_loss_rotation_invariant():
    a, b = theory.unit_encodings(3, 4, 2)[[0, 3]]
    assert (a ** 4).sum() != pytest.approx((b ** 4).sum(), rel=0.1)
    np.testing.assert_allclose(theory.loss_polynomial(a, 0.3, "normal"),
                               theory.loss_polynomial(b, 0.3, "normal"), rtol=1e-10, atol=1e-14)


def test_interference_decay_exact_solution_and_rate():
    check = theory.interference_decay_check(10, 0)
    assert check["exact_error"] < 1e-6
    assert check["rate_error"] < 1e-4
    t = np.linspace(0, 20, 5)
    q = theory.pair_inner_product(0.1, 2.0, t)
    assert q[0] == pytest.approx(0.1)
    rate = -np.diff(np.log(q[-2:])) / np.diff(t[-2:])
    assert rate[0] == pytest.approx(np.sqrt(4 - 0.04), rel=1e-6)   # √(s² − 4q²)
    with pytest.raises(ValueError):
        theory.pair_inner_product(-0.1, 2.0, t)


def test_checks_table_has_every_closed_form_within_its_error():
    table = theory.checks(4, 8, 0.2, 5000, 0, 3)
    assert len(table) == 10
    printed = table.check == theory.PRINTED_FOURTH_MOMENT      # the erratum: far off
    assert (table[printed].estimate - table[printed].closed_form).abs().item() > 4 * table[
        printed].se.item()
    table = table[~printed]
    mc = table[table.se > 0]
    assert ((mc.estimate - mc.closed_form).abs() <= 4 * mc.se).all()
    exact = table[table.se == 0]
    assert ((exact.estimate - exact.closed_form).abs() <= 1e-4).all()
