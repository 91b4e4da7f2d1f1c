"""Diverged models are kept out of fits, claims and figures with a warning
(tms.core.divergence)."""

import pandas as pd

from tms.core import divergence
from tms.engine.grid import Schedule
from tms.persian_rug import training

SCHED = Schedule(batch_size=64, adam_eps=1e-7, window=20, check_every=5, max_steps=120,
                 diverge_factor=100.0)


def test_the_row_of_a_diverged_model_says_so_and_split_keeps_the_others():
    points = [training.Point(k, 0.3, 0.25, 4, 0) for k in range(3)]
    table, _ = training.train_and_score(training.GridSpec(16, 0, 3e-2, SCHED, 1, 65536), points,
                                        True)
    assert list(table.columns) == list(training.TRAIN_COLUMNS) and not table.diverged.any()
    assert divergence.split(table)[1] is None
    bad_table, _ = training.train_and_score(training.GridSpec(16, 0, 1e3, SCHED, 1, 65536),
                                            points[:1], True)
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
