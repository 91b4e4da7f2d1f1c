import numpy as np

from tms import grid, stats
from tms.train import Result


def test_expand_orders_seeds_ratio_p_and_rounds_n_d_down():
    pts = grid.expand(512, [0.1, 0.2], [0.254, 0.5], seeds=2)
    assert len(pts) == 8 and [pt.instance for pt in pts] == list(range(8))
    assert (pts[0].seed_index, pts[0].ratio_target, pts[0].p) == (0, 0.254, 0.1)
    assert pts[1].p == 0.2 and pts[2].ratio_target == 0.5 and pts[4].seed_index == 1
    assert pts[0].n_d == 130 and grid.n_d_of(128, 0.001) == 1


def test_weights_pack_and_unpack_round_trip():
    rng = np.random.default_rng(0)
    res = [Result(rng.normal(size=(d, 6)).astype(np.float32), rng.normal(size=(6, d)).astype(np.float32),
                  rng.normal(size=6).astype(np.float32), 10, True, np.ones(10)) for d in (2, 5, 1)]
    back = grid.unpack_weights(grid.pack_weights(res), [2, 5, 1])
    for r, (W_in, W_out, b) in zip(res, back):
        assert np.array_equal(W_in, r.W_in) and np.array_equal(W_out, r.W_out)
        assert np.array_equal(b, r.b)


def test_summary_statistics_by_hand():
    W_in = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])       # n_d 2, n_s 3
    W_out = np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 0.5]])
    # W = W_out W_in has diagonal (1, 2, 1.5)
    s = stats.summary(W_in, W_out, np.array([-0.1, -0.2, -0.3]))
    assert np.isclose(s["diag_mean"], 1.5) and np.isclose(s["diag_std"], np.std([1, 2, 1.5]))
    assert s["dead_fraction"] == 0 and np.isclose(s["diag_live_mean"], 1.5)
    dead = stats.summary(W_in, W_out * np.array([[1.0], [1.0], [0.1]]), np.zeros(3))
    assert np.isclose(dead["dead_fraction"], 1 / 3) and np.isclose(dead["diag_live_mean"], 1.5)
    assert np.isclose(s["bias_mean"], -0.2) and np.isclose(s["bias_std"], np.std([-0.1, -0.2, -0.3]))
