import numpy as np
import pandas as pd
import pytest
import scipy.stats

from tms.engine.grid import Schedule
from tms.persian_rug import anatomy, paired, rug, theory, training


def _model(seed, n_d=6, n_s=20):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n_d, n_s)) / 3, rng.normal(size=(n_s, n_d)) / 3,
            rng.normal(size=n_s) / 10)


def test_the_loss_split_adds_up_to_the_engines_held_out_loss():
    """A small trained grid: the engine scores it in float32 on its own path."""
    pts = training.expand(16, [0.1, 0.5], [0.25, 0.5], 1)
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=10, check_every=5, max_steps=40)
    got = {}
    table, _ = training.train_and_score(training.GridSpec(16, 0, 1e-2, sched, 3, 8192), pts,
                                        True, sink=lambda pt, *w: got.setdefault(pt.instance, w))
    for k, pt in enumerate(pts):
        off, on = anatomy.loss_split(*got[k], pt.p, 3, 8192)
        assert off > 0 and on > 0
        assert off + on == pytest.approx(table.loss[k], rel=1e-5)


def test_the_row_shape_is_that_of_each_row_by_hand():
    W_in, W_out, _ = _model(0)
    W = W_out @ W_in
    shape = anatomy.row_shape(W_in, W_out, block=7)
    for i in range(len(W)):
        row = np.delete(W[i], i)
        assert shape["diag"][i] == pytest.approx(W[i, i])
        assert shape["off2"][i] == pytest.approx((row ** 2).sum())
        assert shape["skew"][i] == pytest.approx(scipy.stats.skew(row))
        strong = row < -anatomy.NEGATIVE * W[i, i]
        assert shape["negative_count"][i] == strong.sum()
        assert shape["negative_energy"][i] == pytest.approx((row[strong] ** 2).sum()
                                                            / (row ** 2).sum())


def test_the_gaussianised_table_is_the_exact_optimum_between_and_beyond_its_points():
    p = 0.1
    table = anatomy.gaussianised(p)
    scale = np.sqrt(theory.var_x(p))
    sigma = scale * np.exp(np.random.default_rng(0).uniform(np.log(1e-3), np.log(1e3), 60))
    sigma = np.sort(np.concatenate([sigma, scale * np.array([5e-5, 2e3])]))   # beyond the grid
    got = table(sigma)
    for s, row in zip(sigma, got):
        exact = table.exact(s)
        assert row[0] == pytest.approx(exact[0], rel=1e-5)
        assert row[1:] == pytest.approx(exact[1:], rel=1e-4)
        assert row[0] == pytest.approx(row[1] + row[2])
    assert np.all(np.diff(got[:, 0]) > 0)                       # more noise, more loss
    assert table(np.array([np.inf]))[0] == pytest.approx([theory.var_x(p), 0.9 * 0.05 ** 2,
                                                          theory.var_x(p) - 0.9 * 0.05 ** 2])


def test_gaussianised_interference_gives_the_rug_the_theory_and_the_construction_not():
    """The rug's rows all meet the variance bound, so Gaussianising its interference gives the
    theory's loss; the construction's interference is one partner, nothing like a Gaussian, and
    Gaussianised it loses far more than it does."""
    p, n_s, n_d = 0.2, 256, 64
    W_in, W_out = rug.rug_weights(n_s, rug.rows_for(n_s, n_d, 0))
    rugged = anatomy.model_anatomy(W_in, W_out, np.zeros(n_s), p, 5, 4096)
    assert rugged["gauss_loss"] == pytest.approx(rugged["theory_loss"], rel=1e-6)
    assert rugged["variance_ratio"] == pytest.approx(1.0)
    n_s, n_d = 64, 32
    built = anatomy.model_anatomy(*paired.construction_weights(n_s, n_d, p), p, 5, 65536)
    assert built["loss_off"] + built["loss_on"] == pytest.approx(built["paired_loss"], rel=0.05)
    assert built["gauss_loss"] > 2 * built["paired_loss"]
    assert built["paired"] == 1.0 and built["dead_fraction"] == 0.0
    assert built["negative_count"] == 1.0 and built["negative_energy"] == 1.0


def test_a_grid_whose_models_all_diverged_has_an_empty_anatomy_with_its_columns():
    trained = pd.DataFrame({"instance": [0, 1], "model": "relu", "n_s": 20, "n_d": 6,
                            "ratio": 0.3, "ratio_target": 0.3, "p": 0.1, "seed_index": 0,
                            "diverged": True, "loss": np.nan, "diag_mean": 1.0,
                            "bias_mean": 0.0})
    kept = {("relu", 0): _model(0), ("relu", 1): _model(1)}
    empty = anatomy.grid_anatomy(trained, kept, 3, 256)
    assert len(empty) == 0 and list(anatomy.COLUMNS) == list(empty.columns[-len(anatomy.COLUMNS):])
    one = anatomy.grid_anatomy(trained.assign(diverged=[False, True]), kept, 3, 256)
    assert one.instance.tolist() == [0] and np.isfinite(one.loss_off[0])
    assert anatomy.example_rows(trained, kept) == []
