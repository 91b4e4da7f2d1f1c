"""The convergence check beyond the stopping rule (tms.persian_rug.converge): which model it
reruns, that the rerun is the stopped model's own trajectory, and that it tells a model the rule
stopped early from one at its minimum."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from tms.engine.grid import Schedule, TrainState
from tms.persian_rug import converge, ends, stats, training


def _table(**columns):
    base = {"model": "relu", "n_s": 16, "p": 0.1, "stopped": True, "diverged": False,
            "steps": 100, "n_d": 4, "seed_index": 0, "instance": 0}
    return pd.DataFrame([{**base, **row} for row in columns["rows"]])


def test_the_sample_is_the_slowest_model_the_rule_stopped_per_n_s_and_p():
    t = _table(rows=[{"instance": 0, "steps": 300}, {"instance": 1, "steps": 900},
                     {"instance": 2, "steps": 5000, "stopped": False},      # the cap: not rerun
                     {"instance": 3, "steps": 6000, "diverged": True},
                     {"instance": 4, "steps": 9000, "model": "linear"},
                     {"instance": 5, "steps": 900, "n_d": 8},                # a tie: the wider
                     {"instance": 6, "p": 0.2, "steps": 50},
                     {"instance": 7, "p": 0.3, "stopped": False}])          # none stopped
    chosen = ends.sample(t)
    assert chosen[["p", "instance"]].values.tolist() == [[0.1, 5], [0.2, 6]]
    # with capped, the step cap's models compete: the most steps, stopped or capped
    capped = ends.sample(t, capped=True)
    assert capped[["p", "instance"]].values.tolist() == [[0.1, 2], [0.2, 6], [0.3, 7]]
    assert ends.kept(t) == {5, 6, 2, 7}          # the training keeps the states of both


def _grid(window, max_steps=20000, states=None):
    """A small grid trained with the stopping rule (window ``window``, step cap ``max_steps``):
    its spec and table, with each model's Λ (its statistics table's ``lyapunov``); or, with
    ``states`` (a dict), its weights kept and the states of the models the check retrains in
    ``states``, without Λ."""
    sched = Schedule(batch_size=256, adam_eps=1e-7, window=window, check_every=5,
                     max_steps=max_steps)
    spec = training.GridSpec(16, 0, 2e-2, sched, 3, 8192)
    points = [training.Point(k, p, 0.25, 4, 0) for k, p in enumerate((0.05, 0.2))]
    keep = states is not None                  # states are kept of kept models only
    table, measured = training.train_and_score(
        spec, points, True, measure_unkept=_statistics,
        plan=training.plan_grid(spec, points, keep=lambda pt: keep), states=states)
    if keep:
        return spec, table
    return spec, table.assign(lyapunov=[measured[("relu", k)]["lyapunov"] for k in table.instance])


def _statistics(W_in, W_out, b, p, device):
    return stats.weight_statistics(W_in, W_out, b, p, device=device)


def test_a_rerun_of_one_times_the_steps_is_the_stopped_model_itself():
    spec, table = _grid(window=10)
    assert table.stopped.all() and (table.steps < 20000).all()
    same = converge.rerun(spec, table, 1.0, "grid")
    assert same.long_steps.tolist() == same.steps.tolist() == table.steps.tolist()
    assert same.long_loss.tolist() == table.loss.tolist()       # bit for bit: the same run
    assert (same["drop"] == 0).all()
    for c in (*converge.SUMMARY, "lyapunov"):                    # the same weights, too
        assert same[f"long_{c}"].tolist() == table[c].tolist(), c
    with pytest.raises(ValueError, match="factor must be >= 1"):
        converge.rerun(spec, table, 0.5, "grid")


def test_the_rerun_goes_on_from_the_kept_states_only_where_that_is_cheaper():
    start = TrainState(np.zeros((9, 16)), np.zeros((9, 16)), np.zeros((9, 16)), 100, 0.1, b"")
    one = pd.DataFrame({"data_seed": [0], "n_d": [4]})
    # a lone model: a quarter of its steps fewer on the same one stream
    assert converge.resume_pays(one, [400], [start], "cpu")
    assert not converge.resume_pays(one, [400], [None], "cpu")            # nothing kept
    # six narrow models on two shared streams: six streams from their stops draw more than the
    # steps save (the default profile's n_s 64 check, measured 50 s against 45 s)
    six = pd.DataFrame({"data_seed": [0, 1, 0, 1, 0, 1], "n_d": [3, 3, 3, 31, 12, 22]})
    steps = [2250, 3990, 3720, 3300, 3270, 4740]
    starts = [dataclasses.replace(start, steps=s) for s in steps]
    assert not converge.resume_pays(six, [4 * s for s in steps], starts, "cpu")
    assert converge.resume_pays(six, [4 * s for s in steps], starts, "cuda:0")   # draws cheap
    wide = six.assign(n_d=[300] * 6)                # wide models: the steps saved weigh more
    assert converge.resume_pays(wide, [4 * s for s in steps], starts, "cpu")


def test_the_rerun_on_from_the_kept_states_is_the_rerun_from_the_start_to_the_bit(monkeypatch):
    monkeypatch.setattr(converge, "DRAW_WIDTH", 0)     # the two models of _grid share a stream
    states = {}
    spec, table = _grid(window=5, states=states)
    assert set(states) == ends.kept(table) == {0, 1}
    fresh = converge.rerun(spec, table, 3.0, "grid")
    on = converge.rerun(spec, table, 3.0, "grid", states=states)
    pd.testing.assert_frame_equal(on, fresh, check_exact=True)
    # it trains on from the states: other moments in one, another rerun of that model
    bent = {**states, 0: dataclasses.replace(states[0], m=states[0].m * 2)}
    other = converge.rerun(spec, table, 3.0, "grid", states=bent)
    assert other.long_loss.ne(fresh.long_loss).tolist() == [True, False]
    # factor 1 leaves no step to go on: the model is retrained from its seeds, the same one
    assert converge.rerun(spec, table, 1.0, "grid", states=bent)["drop"].eq(0).all()
    with pytest.raises(ValueError, match="the states are not this table's"):
        converge.rerun(spec, table.assign(steps=table.steps + 5), 3.0, "grid", states=states)


def test_a_model_stopped_early_fails_and_one_at_its_minimum_passes():
    spec, early = _grid(window=5)              # a window of 5 steps stops on noise
    longer = converge.rerun(spec, early, 4.0, "grid")
    assert (longer.long_steps == 4 * early.steps).all()
    assert (longer["drop"] > 0.02).all(), longer
    assert (longer.long_lyapunov != early.lyapunov).all()      # other weights, another Λ
    assert not converge.passing(longer, 0.02).any()
    spec, settled = _grid(window=600)          # stopped after a flat 600-step window
    again = converge.rerun(spec, settled, 2.0, "grid")
    assert converge.passing(again, 0.02).all(), again
    # the tolerance is a bound on the drop: at it, a pass; just above it, a fail
    at = again["drop"].max()
    assert converge.passing(again, at).all() and not converge.passing(again, at * 0.999).all()


def test_capped_models_are_retrained_only_with_capped_and_judged_like_stopped_ones():
    spec, capped = _grid(window=5000, max_steps=60)   # the rule never fires: both at the cap
    assert not capped.stopped.any() and (capped.steps == 60).all()
    assert converge.rerun(spec, capped, 2.0, "grid").empty
    early = converge.rerun(spec, capped, 2.0, "grid", capped=True)
    assert early.steps.tolist() == [60, 60] and (early.long_steps == 120).all()
    assert not converge.passing(early, 0.02).any(), early       # 60 steps: far from settled
    spec, late = _grid(window=5000, max_steps=1000)
    settled = converge.rerun(spec, late, 2.0, "grid", capped=True)
    assert converge.passing(settled, 0.02).all(), settled


def test_the_floor_lifts_a_short_rerun_to_min_steps():
    assert [converge.long_steps(s, 2.0, 500) for s in (100, 250, 251, 900)] == [500, 500, 502,
                                                                                1800]
    spec, early = _grid(window=5)              # stopped on noise, long before convergence
    floor = 4 * int(early.steps.max())
    checks = converge.rerun(spec, early, 1.0, "grid", min_steps=floor)
    assert (checks.long_steps == floor).all()
    assert (checks["drop"] > 0.02).all(), checks   # factor 1 alone reruns the same model: drop 0


def test_seeds_off_the_grid_rule_are_refused_before_any_training():
    spec, table = _grid(window=10)
    with pytest.raises(ValueError, match="do not share one base seed"):
        converge.rerun(spec, table.assign(data_seed=table.data_seed + 1), 2.0, "grid")


def test_a_rerun_that_diverges_fails_its_check():
    spec, table = _grid(window=10)
    wild = dataclasses.replace(spec, sched=dataclasses.replace(spec.sched, diverge_factor=1.01))
    checks = converge.rerun(wild, table.assign(lr=10.0), 4.0, "grid")   # lr 10: it blows up
    assert checks.long_loss.isna().all() and checks["drop"].isna().all()
    assert not converge.passing(checks, 0.02).any()
