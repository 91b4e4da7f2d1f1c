import numpy as np
import pandas as pd
import pytest

from tms.engine.train import Instance, Result, Schedule, plan_chunks, stack_bytes
from tms.persian_rug import stats, training
from tms.pipeline.params import Compute, ParamsError


def test_expand_orders_seeds_ratio_p_and_rounds_n_d_down():
    pts = training.expand(512, [0.1, 0.2], [0.254, 0.5], seeds=2)
    assert len(pts) == 8 and [pt.instance for pt in pts] == list(range(8))
    assert (pts[0].seed_index, pts[0].ratio_target, pts[0].p) == (0, 0.254, 0.1)
    assert pts[1].p == 0.2 and pts[2].ratio_target == 0.5 and pts[4].seed_index == 1
    assert pts[0].n_d == 130 and training.n_d_of(128, 0.001) == 1


def test_weights_pack_and_unpack_round_trip():
    rng = np.random.default_rng(0)
    res = [Result(rng.normal(size=(d, 6)).astype(np.float32), rng.normal(size=(6, d)).astype(np.float32),
                  rng.normal(size=6).astype(np.float32), 10, True, np.ones(10)) for d in (2, 5, 1)]
    back = training.unpack_weights(training.pack_weights(res), [2, 5, 1])
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


def test_budget_below_one_model_is_a_params_error_before_training():
    pts = training.expand(64, [0.1], [0.5], 1)
    sched = Schedule(batch_size=1024, adam_eps=1e-7, window=10, check_every=5, max_steps=10)
    with pytest.raises(ParamsError, match=r"persian_rug.compute.memory_budget_mb = 0.5: 0.5 MiB "
                                          r"is too small for one model of n_s = 64, n_d = 32"):
        training.train_and_score(64, pts, 0, 1e-2, sched, True, 0, 65536,
                                 compute=Compute(memory_budget_mb=0.5))


def test_chunked_scoring_gives_the_unchunked_table():
    pts = training.expand(16, [0.1, 0.5], [0.25, 0.5], 1)
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=10, check_every=5, max_steps=20)
    whole, _ = training.train_and_score(16, pts, 0, 1e-2, sched, True, 3, 65536)
    # a budget that holds one group of equal inputs (two models) at a time
    insts = [Instance(pt.p, pt.n_d, pt.instance, 1e-2, 0) for pt in pts]
    budget = 1.2 * stack_bytes(16, [4, 8], 12, 1, 64, 20) / 2 ** 20
    assert len(plan_chunks(16, insts, sched, budget)) == 2
    table, _ = training.train_and_score(16, pts, 0, 1e-2, sched, True, 3, 65536,
                                        compute=Compute(memory_budget_mb=budget))
    pd.testing.assert_frame_equal(table, whole)
