import numpy as np
import pandas as pd
import pytest

from tms.persian_rug import compare, figures


def test_nearest_grid_point():
    assert figures.nearest([0.002001, 0.044, 0.086], 0.05) == 0.044
    assert figures.nearest([0.1, 0.5], 0.001) == 0.1


def test_fig2_draws_every_series_for_every_p():
    theory = pd.DataFrame({"p": [0.1] * 3 + [0.5] * 3, "ratio": [0.25, 0.5, 1.0] * 2,
                           "loss": [0.02, 0.01, 0.0, 0.08, 0.05, 0.0],
                           "loss_linear": [0.03, 0.02, 0.0, 0.09, 0.06, 0.0]})
    rug_t = pd.DataFrame({"n_s": 1024, "p": [0.1, 0.5], "ratio": [0.25, 0.25],
                          "loss": [0.02, 0.08]})
    trained = pd.DataFrame({"model": ["relu"] * 4, "n_s": 64, "p": [0.1, 0.1, 0.5, 0.5],
                            "ratio": [0.25, 0.25, 0.25, 0.25], "loss": [0.021, 0.023, 0.08, 0.081],
                            "seed_index": [0, 1, 0, 1]})
    fig = figures.fig2_loss(trained, rug_t, theory, [0.1, 0.5])
    left = fig.axes[0]
    labels = [line.get_label() for line in left.get_lines()]
    for p in (0.1, 0.5):                              # every curve names its p
        assert {f"p = {p:g}: theory", f"p = {p:g}: optimal linear",
                f"p = {p:g}: Persian rug"} <= set(labels)
    assert fig._suptitle.get_text() == "trained n_s = 64; Persian rug n_s = 1024"
    theory_line = next(line for line in left.get_lines() if line.get_label() == "p = 0.1: theory")
    assert list(theory_line.get_xdata()) == [0.25, 0.5]        # ratio 1 (loss 0) left off log axis
    assert left.get_yscale() == "log"


def test_the_best_known_loss_is_the_lower_of_theory_and_construction_at_each_point():
    theory = pd.DataFrame({"p": [0.5, 0.1, 0.1, 0.5], "ratio": [0.25, 0.5, 0.25, 0.75],
                           "loss": [0.08, 0.01, 0.02, 0.04], "loss_linear": 0.1})   # unsorted
    paired = pd.DataFrame({"p": [0.5, 0.1, 0.1, 0.9], "ratio": [0.25, 0.5, 0.25, 0.25],
                           "loss": [0.05, 0.01, 0.03, 0.2]})
    best = compare.best_known(theory, paired)
    assert best.to_dict("list") == {"p": [0.1, 0.1, 0.5], "ratio": [0.25, 0.5, 0.25],
                                    "loss": [0.02, 0.01, 0.05],      # only points in both
                                    "by": ["theory", "theory", "construction"]}   # a tie: theory
    fig = figures.fig2_loss(pd.DataFrame(columns=["model", "n_s", "p", "ratio", "loss",
                                                  "seed_index"]),
                            pd.DataFrame(columns=["n_s", "p", "ratio", "loss"]), theory,
                            [0.5], paired)
    band = next(line for line in fig.axes[0].get_lines()
                if line.get_label() == "p = 0.5: lower of theory and construction")
    assert list(band.get_ydata()) == [0.05]


def test_fig3_puts_the_bias_on_its_own_scale_and_marks_dead_features():
    W = np.diag([1.3, 0.1, 1.3, 1.2]) + 0.05
    b = np.array([-0.2, -0.1, -0.2, -0.15])
    fig = figures.fig3_weights(W, b, np.array([False, True, False, False]))
    ax, axb = fig.axes[0], fig.axes[2]              # W, its colour bar, b, its colour bar
    assert ax.images[0].get_clim() == pytest.approx((-1.35, 1.35))
    assert axb.images[0].get_clim() == pytest.approx((-0.2, 0.2))       # not W's scale
    dead = next(line for line in ax.get_lines() if line.get_label().startswith("dead"))
    assert list(dead.get_xdata()) == [1] and dead.get_label() == "dead feature (1 of 4)"


def test_antipodal_figure_leaves_out_small_ratios_and_shows_the_baseline():
    cells = pd.DataFrame({"n_s": [64, 64, 128, 128], "ratio": [0.05, 0.5, 0.5, 0.25],
                          "trained_theory": [1.0, 0.4, 0.5, 1.0], "antipodal": [1.0, 0.9, 0.8, 0.0],
                          "antipodal_random": [1.0, 0.0, 0.0, 0.0]})
    ax = figures.antipodal_pairs(cells, 0.9, 0.1).axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines["trained, $n_s$ = 64"].get_ydata()) == [0.9]          # ratio 0.05 out
    assert list(lines["trained, $n_s$ = 128"].get_xdata()) == [0.5, 1.0]
    assert list(lines["untrained weights"].get_ydata()) == [0.0, 0.0, 0.0]
