"""A diverging model is flagged per instance, leaves its stack without touching the others,
and is kept out of fits, claims and figures with a warning (tms.engine.train,
tms.engine.divergence)."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from tms.engine import divergence
from tms.engine.train import Instance, Schedule, diverged, train_grid
from tms.persian_rug import training

SCHED = Schedule(batch_size=64, adam_eps=1e-7, window=20, check_every=5, max_steps=120,
                 diverge_factor=100.0)


def test_divergence_rule():
    first = np.array([1.0, 1.0, 1.0, 2.0, 1.0])
    block = np.array([[0.5, np.nan, 0.5, 150.0, 0.5],
                      [0.4, 0.3, np.inf, 150.0, 101.0]])
    assert diverged(block, first, 100.0).tolist() == [False, True, True, False, True]
    assert diverged(block, first, np.inf).tolist() == [False, True, True, False, False]


@pytest.mark.parametrize("data_seed", [None, 0], ids=["own data", "shared data stream"])
@pytest.mark.parametrize("relu, lr, factor", [(True, 1e3, 100.0), (False, 1e38, np.inf)],
                         ids=["above the bound", "non-finite"])
def test_a_diverging_instance_leaves_the_others_bit_identical(relu, lr, factor, data_seed):
    sched = dataclasses.replace(SCHED, diverge_factor=factor)
    good = [Instance(0.3, 4 + k % 2, k, 3e-2, data_seed) for k in range(4)]
    bad = Instance(0.3, 4, 7, lr, data_seed)
    alone = train_grid(16, good, sched, relu=relu)
    mixed = train_grid(16, good[:2] + [bad] + good[2:], sched, relu=relu)
    flagged = mixed.pop(2)
    assert flagged.diverged and not flagged.stopped and flagged.steps < sched.max_steps
    assert flagged.steps % sched.check_every == 0            # caught at the first check after
    assert not any(r.diverged for r in mixed)
    for a, b in zip(alone, mixed):
        assert (a.steps, a.stopped) == (b.steps, b.stopped)
        for name in ("W_in", "W_out", "b", "train_losses"):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes()


def test_the_row_of_a_diverged_model_says_so_and_split_keeps_the_others():
    points = [training.Point(k, 0.3, 0.25, 4, 0) for k in range(3)]
    table, _ = training.train_and_score(16, points, 0, 3e-2, SCHED, True, 1, 65536)
    assert list(table.columns) == list(training.TRAIN_COLUMNS) and not table.diverged.any()
    assert divergence.split(table)[1] is None
    bad_table, _ = training.train_and_score(16, points[:1], 0, 1e3, SCHED, True, 1, 65536)
    assert bad_table.diverged.tolist() == [True]
    both = pd.concat([table, bad_table.assign(instance=3)], ignore_index=True)
    kept, warning = divergence.split(both, "Persian Rug models")
    pd.testing.assert_frame_equal(kept, table)
    assert warning.startswith("**Warning: 1 of 4 Persian Rug models diverged**")
    assert "instance 3" in warning and "lr 1000.0" in warning


def test_split_of_a_table_without_the_flag_keeps_everything():
    table = pd.DataFrame({"S": [0.5, 0.9], "loss": [0.1, 0.2]})
    kept, warning = divergence.split(table)
    pd.testing.assert_frame_equal(kept, table)
    assert warning is None
