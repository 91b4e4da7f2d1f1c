import numpy as np
import pandas as pd
import pytest

from tms.core.schema import Compute, ParamsError
from tms.engine import checkpoint, train
from tms.engine.grid import Instance, Schedule, plan_chunks, stack_bytes
from tms.persian_rug import ends, rows, stats, training, weights


def test_expand_orders_seeds_ratio_p_and_rounds_n_d_down():
    pts = training.expand(512, [0.1, 0.2], [0.254, 0.5], seeds=2)
    assert len(pts) == 8 and [pt.instance for pt in pts] == list(range(8))
    assert (pts[0].seed_index, pts[0].ratio_target, pts[0].p) == (0, 0.254, 0.1)
    assert pts[1].p == 0.2 and pts[2].ratio_target == 0.5 and pts[4].seed_index == 1
    assert pts[0].n_d == 130 and training.n_d_of(128, 0.001) == 1


def test_summary_statistics_by_hand():
    W_in = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])       # n_d 2, n_s 3
    W_out = np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 0.5]])
    # W = W_out W_in has diagonal (1, 2, 1.5)
    s = rows.summary(W_in, W_out, np.array([-0.1, -0.2, -0.3]))
    assert np.isclose(s["diag_mean"], 1.5) and np.isclose(s["diag_std"], np.std([1, 2, 1.5]))
    assert s["dead_fraction"] == 0 and np.isclose(s["diag_live_mean"], 1.5)
    dead = rows.summary(W_in, W_out * np.array([[1.0], [1.0], [0.1]]), np.zeros(3))
    assert np.isclose(dead["dead_fraction"], 1 / 3) and np.isclose(dead["diag_live_mean"], 1.5)
    assert np.isclose(s["bias_mean"], -0.2) and np.isclose(s["bias_std"], np.std([-0.1, -0.2, -0.3]))


def test_budget_below_one_model_is_a_params_error_before_training():
    pts = training.expand(64, [0.1], [0.5], 1)
    sched = Schedule(batch_size=1024, adam_eps=1e-7, window=10, check_every=5, max_steps=10)
    with pytest.raises(ParamsError, match=r"persian_rug.compute.memory_budget_mb = 0.5: 0.5 MiB "
                                          r"is too small for one model of n_s = 64, n_d = 32"):
        training.train_and_score(training.GridSpec(64, 0, 1e-2, sched, 0, 65536,
                                                   compute=Compute(memory_budget_mb=0.5)),
                                 pts, True)


def test_chunked_scoring_gives_the_unchunked_table():
    pts = training.expand(16, [0.1, 0.5], [0.25, 0.5], 1)
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=10, check_every=5, max_steps=20)
    whole, _ = training.train_and_score(training.GridSpec(16, 0, 1e-2, sched, 3, 65536), pts,
                                        True)
    # a budget that holds one group of equal inputs (two models) at a time
    insts = [Instance(pt.p, pt.n_d, pt.instance, 1e-2, 0) for pt in pts]
    budget = 1.2 * stack_bytes(16, [4, 8], 12, 1, 64, 20) / 2 ** 20
    assert len(plan_chunks(16, insts, sched, budget)) == 2
    spec = training.GridSpec(16, 0, 1e-2, sched, 3, 65536, compute=Compute(memory_budget_mb=budget))
    table, _ = training.train_and_score(spec, pts, True)
    pd.testing.assert_frame_equal(table, whole)


def _statistics(W_in, W_out, b, p, device):
    return stats.weight_statistics(W_in, W_out, b, p, device=device)


def _measured(pts, sched, keep=None, ckpt=None, compute=Compute()):
    """train_and_score with the plan keeping ``keep``: its table, the statistics it measured of
    the models not kept, and the weights its sink received."""
    got = {}
    spec = training.GridSpec(16, 0, 1e-2, sched, 3, 65536, compute=compute)
    table, measured = training.train_and_score(
        spec, pts, True, ckpt, measure_unkept=_statistics,
        sink=lambda pt, *w: got.setdefault(pt.instance, w),
        plan=training.plan_grid(spec, pts, ckpt, keep))
    return table, measured, got


def _downstream(table, got, measured):
    """The statistics table of a grid from its kept weights ``got`` and the ``measured``."""
    return stats.grid_statistics(table, {("relu", k): w for k, w in got.items()}, measured)


def test_statistics_downstream_of_the_kept_weights_are_those_measured_where_they_trained(
        tmp_path, monkeypatch):
    pts = training.expand(16, [0.1, 0.5], [0.25, 0.5], 1)
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=10, check_every=5, max_steps=20)
    table, measured, got = _measured(pts, sched)
    assert sorted(got) == [0, 1, 2, 3] and measured == {}
    downstream = _downstream(table, got, measured)
    assert downstream.instance.tolist() == table.instance.tolist() == [0, 1, 2, 3]
    for k, pt in enumerate(pts):
        expect = stats.weight_statistics(*got[k], pt.p)
        assert downstream.loc[k, stats.STAT_COLUMNS].tolist() == pytest.approx(
            [expect[c] for c in stats.STAT_COLUMNS], nan_ok=True)
    # keep two points, chunk the grid in two and checkpoint it: the other two are measured in
    # training, and the statistics table is the same, bytes alike
    insts = [Instance(pt.p, pt.n_d, pt.instance, 1e-2, 0) for pt in pts]
    budget = 1.2 * stack_bytes(16, [4, 8], 12, 1, 64, 20) / 2 ** 20
    assert len(plan_chunks(16, insts, sched, budget)) == 2
    ckpt = checkpoint.for_stage("t", 5, root=tmp_path)
    part, part_measured, part_got = _measured(pts, sched, keep=lambda pt: pt.p == 0.5,
                                              ckpt=ckpt, compute=Compute(memory_budget_mb=budget))
    pd.testing.assert_frame_equal(part, table)
    assert sorted(part_got) == [1, 3] and sorted(part_measured) == [("relu", 0), ("relu", 2)]
    pd.testing.assert_frame_equal(_downstream(part, part_got, part_measured), downstream)
    for k in part_got:
        assert all(np.array_equal(a, b) for a, b in zip(part_got[k], got[k]))
    with pytest.raises(KeyError, match="relu model 0: neither its weights nor its statistics"):
        _downstream(part, part_got, {})
    # each finished stack's checkpoint holds its numbers and the kept weights alone
    done = [ckpt.load(f.stem) for f in sorted(ckpt.directory.glob("*.pt"))]
    assert len(done) == 2 and all(d["done"] for d in done)
    items = [m for d in done for m in d["results"]]
    assert sorted(m.weights is not None for m in items) == [False, False, True, True]
    # a rerun resumes every stack from them: the same tables, nothing trained again
    monkeypatch.setattr(train, "_train_bucket", lambda *a, **k: pytest.fail("trained again"))
    again, again_measured, again_got = _measured(pts, sched, keep=lambda pt: pt.p == 0.5,
                                                 ckpt=ckpt, compute=Compute(memory_budget_mb=budget))
    pd.testing.assert_frame_equal(again, table)
    assert again_measured == part_measured and sorted(again_got) == [1, 3]


def test_the_training_keeps_the_states_where_the_models_the_check_retrains_ended(tmp_path):
    pts = training.expand(16, [0.1, 0.5], [0.25, 0.5], 2)
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=10, check_every=5, max_steps=60)
    insts = [Instance(pt.p, pt.n_d, pt.instance, 1e-2, pt.seed_index) for pt in pts]
    budget = 1.2 * stack_bytes(16, [4, 8], 12, 1, 64, 60) / 2 ** 20
    assert len(plan_chunks(16, insts, sched, budget)) == 4     # the states kept across chunks
    spec = training.GridSpec(16, 0, 1e-2, sched, 3, 65536, compute=Compute(memory_budget_mb=budget))
    table = training.train_models(spec, pts, ["relu", "linear"], tmp_path / "w",
                                  ends_dir=tmp_path / "e")
    states, kept = ends.read(tmp_path / "e"), weights.read(tmp_path / "w")
    relu = table[table.model == "relu"]
    assert set(states) == ends.kept(relu) and 2 <= len(states) <= 4
    assert ends.kept(relu) != ends.kept(table[table.model == "linear"])     # the ReLU models'
    row = relu.set_index("instance")
    for k, state in states.items():
        n_d = row.n_d[k]
        W_in, W_out, b = kept[("relu", k)]
        assert state.steps == row.steps[k] and state.flat.shape == (2 * n_d + 1, 16)
        assert np.array_equal(state.flat, np.vstack([W_in, W_out.T, b[None]]))
    # the folder is byte-stable: written again, the same bytes
    (tmp_path / "again").mkdir()
    ends.write(states, tmp_path / "again")
    for name in ends.FILES:
        assert (tmp_path / "e" / f"{name}.npy").read_bytes() == \
            (tmp_path / "again" / f"{name}.npy").read_bytes()
