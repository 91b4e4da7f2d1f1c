"""Gradients and flows of the notes on toy autoencoding (tms.notes.flows, eqs. 19–28)."""

import numpy as np
import pytest

from tms.notes import flows, theory


def _fd_grad(f, W, h=1e-6):
    g = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        e = np.zeros_like(W)
        e[idx] = h
        g[idx] = (f(W + e) - f(W - e)) / (2 * h)
    return g


def test_gradient_identities_hold_to_round_off():
    # every published row: relative difference ≤ 1e-12 (float64 round-off)
    table = flows.gradient_checks(0.6, 6, 2, 400, 3, 0.3)
    assert len(table) == 7 and (table.rel_diff < 1e-12).all() and (table.scale > 0).all()


def test_tied_loss_gradient_matches_finite_differences_and_differs_from_eq_22():
    rng = np.random.default_rng(0)
    sigma = theory.sparse_sigma(0.5, 5, theory.scale_factors(5, 0.3))
    W = rng.standard_normal((2, 5))
    g = flows.tied_loss_grad(W, sigma)
    np.testing.assert_allclose(g, _fd_grad(lambda w: flows.tied_loss(w, sigma), W),
                               rtol=1e-6, atol=1e-8)
    # −∇L/4 is the average of eq. 22 and its A-twin, not eq. 22 itself (Σ ≠ I)
    assert np.abs(-g / 4 - flows.tied_flow(W, sigma)).max() > 1e-2


def test_eq_28_flow_is_minus_the_gradient_of_the_energy_over_unordered_pairs():
    W = np.random.default_rng(1).standard_normal((3, 6))
    flow = flows.column_flow(W, np.ones(6))
    np.testing.assert_allclose(flow, -_fd_grad(flows.energy, W), rtol=1e-6, atol=1e-7)
    printed = -_fd_grad(lambda w: flows.energy(w, ordered=True), W)
    assert np.abs(printed - flow).max() > 1e-2


def test_every_orthonormal_row_matrix_is_a_rest_point_of_eq_22_only():
    sigma = theory.sparse_sigma(0.5, 6, theory.scale_factors(6, 0.25))
    Q, _ = np.linalg.qr(np.random.default_rng(2).standard_normal((6, 2)))
    W = Q.T                                                         # orthonormal rows
    assert np.abs(flows.tied_flow(W, sigma)).max() < 1e-14
    assert np.abs(flows.tied_loss_grad(W, sigma)).max() > 1e-3
    U = theory.spectrum(sigma)[1]
    assert np.abs(flows.tied_loss_grad(U[:, :2].T, sigma)).max() < 1e-14


def test_gradient_descent_tracks_the_flow_to_first_order_when_sigma_is_identity():
    # ‖W_flow − W_GD‖ is O(η): halving η about halves the largest distance (ratio 1.6–2.4)
    sigma = np.eye(5)
    far = flows.compare_flows(sigma, 2, 0.3, 0, 10.0, 0.02, 10).distance.max()
    near = flows.compare_flows(sigma, 2, 0.3, 0, 10.0, 0.01, 10).distance.max()
    assert 1.6 < far / near < 2.4 and near < 0.05


def test_eq_22_stops_off_the_minimum_where_gradient_descent_reaches_it():
    sigma = theory.sparse_sigma(0.5, 6, theory.scale_factors(6, 0.25))
    t = flows.compare_flows(sigma, 2, 0.1, 0, 600.0, 0.02, 8)
    end = t.iloc[-1]
    assert end.loss_min == pytest.approx(theory.min_loss(sigma, 2))
    assert end.loss_gd - end.loss_min < 1e-8
    assert end.loss_flow - end.loss_min > 1e-3 and end.orth_flow < 1e-8
    assert t.step.is_monotonic_increasing and t.t.iloc[-1] == pytest.approx(600.0, rel=1e-3)


def test_energy_decreases_along_the_flow_and_the_printed_one_does_not():
    D, d = 6, 2
    table = flows.energy_along_flow(D, d, 0.1, 0, 30.0, 30)
    assert np.diff(table.E).max() <= 1e-12
    inner = table[table.t > 0]
    scale = inner.minus_speed_sq.abs().max()
    np.testing.assert_allclose(inner.dE_dt, inner.minus_speed_sq, atol=1e-6 * scale)
    # at rest WᵀW is a rank-d projection: E = ‖I − WᵀW‖²/4 = (D − d)/4
    assert table.E.iloc[-1] == pytest.approx((D - d) / 4, abs=1e-8)
    assert inner.dE_ordered_dt.max() > 1e-3


def test_record_steps_are_unique_increasing_and_cover_both_ends():
    steps = flows.record_steps(1000, 12)
    assert steps[0] == 0 and steps[-1] == 1000 and np.all(np.diff(steps) > 0)
