"""A diverging model is flagged per instance at the next check and leaves its stack without
touching the others (tms.engine.train)."""

import dataclasses

import numpy as np
import pytest

from tms.engine.grid import Instance, Schedule, StackSpec
from tms.engine.train import diverged, train_grid

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
    alone = train_grid(StackSpec(16, sched, relu=relu), good)
    mixed = train_grid(StackSpec(16, sched, relu=relu), good[:2] + [bad] + good[2:])
    flagged = mixed.pop(2)
    assert flagged.diverged and not flagged.stopped and flagged.steps < sched.max_steps
    assert flagged.steps % sched.check_every == 0            # caught at the first check after
    assert not any(r.diverged for r in mixed)
    for a, b in zip(alone, mixed):
        assert (a.steps, a.stopped) == (b.steps, b.stopped)
        for name in ("W_in", "W_out", "b", "train_losses"):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes()
