"""Figures of the notes on toy autoencoding draw what their tables say."""

import numpy as np
import pandas as pd
import pytest

from tms.core import savefig
from tms.notes import data, figures, flows, theory
from tms.notes.params import NotesFlows


def test_skeletons_curves_are_the_closed_form_and_points_the_monte_carlo():
    table = data.skeletons_table([0.8, 0.99], [5, 20], 2000, 0)
    fig = figures.skeletons(table)
    ax = fig.axes[0]
    curves = [line for line in ax.get_lines() if line.get_label().startswith("D = ")]
    assert [c.get_label() for c in curves] == ["D = 5", "D = 20"]
    q = curves[1].get_xdata()
    np.testing.assert_allclose(curves[1].get_ydata(), data.mass_ge2(1 - q, 20), rtol=1e-12)
    assert q.min() == pytest.approx(0.01) and q.max() == pytest.approx(0.2)


def test_saddle_figure_plots_measured_and_predicted_decrease(tmp_path):
    sigma = theory.sparse_sigma(0.5, 5, theory.scale_factors(5, 0.25))
    C = theory.invertible_c(2, 0)
    table, summary = theory.saddle_table(sigma, [1, 3], C, [0.01, 0.1, 1.0])
    fig = figures.saddle(table, theory.critical_points_table(sigma, 2, C), summary)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    np.testing.assert_array_equal(lines["L(A, B) − L(Ã, B̃), measured"].get_ydata(), table.decrease)
    np.testing.assert_array_equal(lines["ε²/(1 + ε²)(λ_k − λ_j)"].get_ydata(), table.predicted)
    a, b = savefig.save(fig, tmp_path / "a"), savefig.save(fig, tmp_path / "b")
    assert all(x.read_bytes() == y.read_bytes() for x, y in zip(a, b))


def test_linear_convergence_draws_one_line_per_model_and_panel():
    rows = [{"spectrum": sp, "S": S, "d": d, "steps_cap": cap, "gap": 1.0 / cap,
             "angle_top_deg": 90.0 / cap, "angle_u1_deg": 9.0 / cap, "commutator": 0.1 / cap}
            for sp in ("sparse", "scaled") for S in (0.5, 0.9) for d in (1, 2)
            for cap in (10, 100)]
    fig = figures.linear_convergence(pd.DataFrame(rows))
    for ax in fig.axes:
        assert len(ax.get_lines()) == 2 * 2 * 2
    line = fig.axes[0].get_lines()[0]
    assert list(line.get_xdata()) == [10, 100] and list(line.get_ydata()) == [0.1, 0.01]


def test_flows_and_energy_figures_show_each_spectrum_and_the_rising_energy():
    table = flows.flows_table(NotesFlows(D=5, d=2, S=0.5, T=2, init_std=0.1, t_max=50.0, lr=0.05,
                                         n_t=6, seed=0), 0.25)
    fig = figures.flows(table)
    assert [ax.get_title() for ax in fig.axes] == ["Σ: identity", "Σ: sparse", "Σ: scaled"]
    energy = flows.energy_along_flow(6, 2, 0.1, 0, 30.0, 30)
    fig = figures.energy(energy)
    rising = next(line for line in fig.axes[1].get_lines()
                  if line.get_label() == f"dE/dt > {flows.RISE_TOL:g}: the printed E rises")
    later = energy[energy.t > 0]                       # round-off is not drawn as a rise
    assert len(rising.get_xdata()) == int((later.dE_ordered_dt > flows.RISE_TOL).sum()) > 0
