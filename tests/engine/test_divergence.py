"""A diverging model is flagged per instance at the next check and leaves its stack without
touching the others (tms.engine.train)."""

import dataclasses

import numpy as np
import pytest

from tms.engine.grid import Instance, Schedule, StackSpec
from tms.engine.train import diverged, loss_scale, train_grid

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


def test_the_bound_is_the_zero_outputs_loss_when_the_first_minibatch_is_empty():
    # p 1e-4 on 6 features and 8 vectors: the first minibatch holds no active feature, loss 0;
    # against it, any later loss would read as divergence (factor × 0 = 0)
    first = np.zeros(3, dtype=np.float32)
    p = np.array([1e-4, 1e-4, 0.3])
    reference = loss_scale(first, p, None, 10**9)
    np.testing.assert_allclose(reference, p / 3, rtol=1e-6)
    assert reference.dtype == np.float32
    block = np.array([[0.0, 2e-3, 5.0]], dtype=np.float32)      # a later active feature; a blow-up
    assert diverged(block, reference, 100.0).tolist() == [False, False, False]
    assert diverged(block, first, 100.0).tolist() == [False, True, True]   # the old rule
    assert loss_scale(np.array([0.5], dtype=np.float32), [0.3], None, 10**9)[0] == 0.5
    np.testing.assert_allclose(loss_scale(first[:1], [0.3], [1.0, 3.0], 10**9), [0.1 * 5.0])
    sched = Schedule(batch_size=8, adam_eps=1e-7, window=20, check_every=5, max_steps=60,
                     diverge_factor=100.0)
    # bias-free linear models (the notes' kind) on nearly empty data: an empty first minibatch
    # has loss 0 exactly, a later one with an active feature does not (the old rule flagged it)
    results = train_grid(StackSpec(6, sched, relu=False, bias=False),
                         [Instance(2e-3, 2, k, 1e-2, 0) for k in range(4)])
    first = np.array([r.train_losses[0] for r in results])
    assert (first == 0).all() and all(r.train_losses.max() > 0 for r in results)
    assert not any(r.diverged for r in results)


def test_a_minibatch_holding_one_active_feature_is_not_divergence():
    # p 1e-4, D 6, batch 64 (384 values a minibatch): most minibatches hold no active feature,
    # some one, whose zero-output loss x²/384 is up to 78 times E x² = p/3: against p/3 alone a
    # model's loss on such a minibatch (a random init's, twice the zero output's) read as
    # divergence; the bound counts one active feature at its largest, max(s²)/384
    reference = loss_scale(np.zeros(2, dtype=np.float32), [1e-4, 1e-4], [1.0] * 5 + [2.0], 384)
    np.testing.assert_allclose(reference, 4.0 / 384, rtol=1e-6)
    block = np.array([[2 * (2 * 0.9) ** 2 / 384, 5.0]], dtype=np.float32)  # one feature; blow-up
    assert diverged(block, reference, 100.0).tolist() == [False, True]
    assert diverged(block, np.float32(1e-4 / 3 * 1.5) * np.ones(2, np.float32),
                    100.0).tolist() == [True, True]                   # against E x² alone
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=20, check_every=5, max_steps=200,
                     diverge_factor=100.0)
    results = train_grid(StackSpec(6, sched, relu=False, bias=False),
                         [Instance(1e-4, 2, k, 1e-2, k) for k in range(8)])
    assert any(r.train_losses[0] == 0 and r.train_losses.max() > 0 for r in results)
    assert not any(r.diverged for r in results)
