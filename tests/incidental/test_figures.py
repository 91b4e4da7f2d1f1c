import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba

from tms.core import savefig
from tms.incidental import figures, sparsification


def test_fig1_is_byte_stable(tmp_path):
    a = savefig.save(figures.fig1_architecture(), tmp_path / "a")
    b = savefig.save(figures.fig1_architecture(), tmp_path / "b")
    assert [x.read_bytes() for x in a] == [y.read_bytes() for y in b]


def test_fig2_draws_the_theory_of_section_2():
    traj = sparsification.trajectory(1000, 1e-3, 0.9, 0, 30)
    fig = figures.fig2_sparsification(traj)
    theory = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "theory"][0]
    t = traj.t[traj.t > 0].to_numpy()
    np.testing.assert_allclose(theory.get_ydata(), sparsification.theory_m_prime(t, 1000, 1e-3))
    assert fig.axes[0].get_xscale() == "log"


def test_fig3_draws_the_fit_and_the_prediction():
    table = pd.DataFrame({"n": 16, "m": np.repeat([16, 32, 64], 2),
                          "polysemantic": [3, 4, 2, 2, 1, 0],
                          "benign_pairs_init": [4, 3, 2, 2, 1, 1]})
    fit = {"c": 0.2, "lo": 0.15, "hi": 0.25}
    ax = figures.fig3_collisions(table, fit).axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    fitted = next(v for k, v in lines.items() if k.startswith("fit"))
    np.testing.assert_allclose(fitted.get_ydata(), 0.2 * 256 / fitted.get_xdata())
    pred = lines["$n^2/(4m)$ (the paper)"]
    np.testing.assert_allclose(pred.get_ydata(), 256 / (4 * pred.get_xdata()))
    init = lines["$n(n-1)/(4m)$: expected benign collisions at init"]
    np.testing.assert_allclose(init.get_ydata(), 16 * 15 / (4 * init.get_xdata()))
    bars = {c.get_label(): c for c in ax.containers}
    trained = bars["trained (mean ± s.e.)"]
    np.testing.assert_allclose(np.asarray(trained.lines[0].get_ydata(), float), [3.5, 2.0, 0.5])
    assert trained.has_yerr and "benign collisions at init (mean ± s.e.)" in bars
    assert list(ax.get_xticks()) == [16, 32, 64]


def test_fig4_one_curve_per_noise_and_sigma_and_the_random_reference():
    table = pd.DataFrame({"instance": [0, 1, 2, 3], "noise": ["bipolar", "bipolar", "normal",
                                                              "normal"],
                          "sigma": [0.1, 0.1, 0.1, 0.1]})
    fourth = np.array([[0.2, 0.6], [0.2, 0.8], [0.2, 0.2], [0.2, 0.1]])
    ax = figures.fig4_fourth_norms(table, np.array([0, 10]), fourth, 16).axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_allclose(lines["bipolar, σ = 0.1"].get_ydata(), [0.2, 0.7])
    np.testing.assert_allclose(lines["normal, σ = 0.1"].get_ydata(), [0.2, 0.15])
    assert lines["3/(m + 2)"].get_ydata()[0] == pytest.approx(3 / 18)
    # a model left out (diverged): the rest keep their own rows of ``fourth``
    kept = table.drop(index=0).reset_index(drop=True)
    ax = figures.fig4_fourth_norms(kept, np.array([0, 10]), fourth, 16).axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    np.testing.assert_allclose(lines["bipolar, σ = 0.1"].get_ydata(), [0.2, 0.8])


def test_fig6_highlights_the_stuck_encoding():
    W = np.eye(4, 6)
    fourth = np.tile(np.linspace(0.2, 1.0, 5)[:, None], (1, 4))
    ax = figures.fig6_single(np.arange(5), fourth, W, 2).axes[0]
    stuck = [ln for ln in ax.get_lines() if "(stuck)" in ln.get_label()]
    assert len(stuck) == 1 and stuck[0].get_label() == "$W_{2}$ (stuck)"
    assert to_rgba(stuck[0].get_color()) == to_rgba("tab:orange")
    none = figures.fig6_single(np.arange(5), fourth, W, None).axes[0]
    assert not any("(stuck)" in ln.get_label() for ln in none.get_lines())


def test_fig5_draws_the_mean_of_each_sweep():
    sweep = pd.DataFrame({"kind": ["baseline", "l1", "l1", "noise", "noise"],
                          "lam": [0, 1e-3, 1e-3, 0, 0], "sigma": [0, 0, 0, 0.1, 0.1],
                          "fourth": [0.16, 0.8, 0.9, 0.5, 0.7]})
    fig = figures.fig5_sweep(sweep, 16)
    for ax, mean in zip(fig.axes, (0.85, 0.6)):
        line = next(ln for ln in ax.get_lines() if ln.get_label() == "mean")
        np.testing.assert_allclose(line.get_ydata(), [mean])


def test_fig7_draws_the_simulation_between_its_bounds():
    traj = sparsification.trajectory(1000, 1e-3, 0.9, 0, 30)
    ax = figures.fig7_relative_variance(traj, 1000).axes[0]
    keep = (traj.t > 0) & (traj.m_prime >= 2)
    line = next(ln for ln in ax.get_lines() if ln.get_label() == "simulation")
    np.testing.assert_allclose(line.get_ydata(), traj.relvar[keep])
    assert len(ax.get_lines()) == 5


def test_fig5_draws_what_is_left_when_one_kind_of_model_diverged():
    table = pd.DataFrame({"kind": ["baseline", "l1", "l1"], "lam": [0.0, 1e-3, 1e-2],
                          "sigma": [0.0, 0.0, 0.0], "fourth": [0.2, 0.3, 0.9]})
    left, right = figures.fig5_sweep(table, 16).axes[:2]
    assert len(left.collections) == 1 and left.get_xscale() == "log"
    assert [t.get_text() for t in right.texts] == ["no model"]


def test_fourth_norm_curves_are_thinned_to_exact_values_at_kept_steps():
    noise = pd.DataFrame({"instance": [0, 1, 2], "noise": ["bipolar", "bipolar", "normal"],
                          "sigma": [0.1, 0.1, 0.2]})
    steps = np.arange(0, 50_005, 5)                          # 10,001 recorded steps
    fourth = np.random.default_rng(0).random((3, len(steps)))
    out = figures.fig4_curves(noise, steps, fourth, 14)
    for series, curve in out.groupby("series"):
        assert len(curve) == figures.CURVE_POINTS
        assert curve.step.iloc[0] == 0 and curve.step.iloc[-1] == 50_000
        assert curve.step.is_monotonic_increasing and curve.step.is_unique
    at = np.searchsorted(steps, out[out.series == "bipolar σ=0.1"].step)
    np.testing.assert_array_equal(out[out.series == "bipolar σ=0.1"].fourth,
                                  (fourth[0, at] + fourth[1, at]) / 2)
    np.testing.assert_array_equal(out[out.series == "normal σ=0.2"].fourth, fourth[2, at])
    assert np.allclose(out[out.series == "random unit vector 3/(m+2)"].fourth, 3 / 16)
    short = figures.fig4_curves(noise, steps[:7], fourth[:, :7], 14)
    assert short[short.series == "normal σ=0.2"].step.tolist() == steps[:7].tolist()
    kept = noise.drop(index=0).reset_index(drop=True)        # instance 0 left out (diverged)
    one = figures.fig4_curves(kept, steps, fourth, 14)
    np.testing.assert_array_equal(one[one.series == "bipolar σ=0.1"].fourth, fourth[1, at])
