import dataclasses

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tms.engine import models, sampler
from tms.engine.grid import Instance, Schedule, StackSpec, plan_chunks, stack_bytes
from tms.engine.models import forward, init_stack
from tms.engine.threads import torch_threads
from tms.engine.train import (
    heldout_loss,
    stack_of,
    train_chunks,
    train_grid,
    window_drop,
    window_says_stop,
)
from tms.persian_rug import theory


def test_stopping_rule_fires_exactly_when_the_window_condition_holds():
    w = 5
    falling = np.linspace(1.0, 0.5, 11)                       # 2w + 1 losses, still falling
    assert not window_says_stop(falling[:2 * w], w)           # needs more than 2w losses
    assert not window_says_stop(falling, w)
    # previous window mean above the last: keep going
    assert not window_says_stop(np.concatenate([np.ones(w + 1), np.full(w, 0.9)]), w)
    # equal means: log10 difference 0 <= 0, stop
    assert window_says_stop(np.concatenate([np.ones(1), np.full(2 * w, 0.7)]), w)
    # last window worse: stop
    assert window_says_stop(np.concatenate([np.ones(1), np.full(w, 0.7), np.full(w, 0.8)]), w)
    # only the last 2w losses matter
    assert window_says_stop(np.concatenate([np.full(50, 9.0), np.full(2 * w, 0.7)]), w)
    # windows of empty minibatches (loss 0, tiny p): no log of 0; zero after a loss still falls,
    # zero beside zero stops, a loss after zeros stops
    zeros, some = np.zeros(w), np.full(w, 1e-3)
    assert window_drop(np.concatenate([[1.0], some, zeros]), w) == np.inf
    assert window_says_stop(np.concatenate([[1.0], zeros, zeros]), w)
    assert window_drop(np.concatenate([[1.0], zeros, some]), w) == -np.inf


def test_trainer_stops_at_the_first_check_where_the_rule_holds():
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=20, check_every=7, max_steps=600)
    res = train_grid(StackSpec(16, sched), [Instance(0.3, 4, 0, 3e-2)])[0]
    losses = res.train_losses
    assert len(losses) == res.steps
    checks = [t for t in range(sched.check_every, res.steps + 1, sched.check_every)]
    fired = [t for t in checks if window_says_stop(losses[:t], sched.window)]
    if res.stopped:
        assert fired and fired[0] == res.steps
    else:
        assert not fired and res.steps == sched.max_steps


def test_linear_twin_reaches_the_exact_linear_optimum():
    n_s, n_d, p = 32, 8, 0.5
    sched = Schedule(batch_size=1024, adam_eps=1e-7, window=100, check_every=30, max_steps=1500)
    res = train_grid(StackSpec(n_s, sched, relu=False), [Instance(p, n_d, 1, 1e-2)])
    loss = heldout_loss(stack_of(res, n_s, relu=False), torch.tensor([p]), 0, 65536)[0]
    optimum = theory.optimal_linear_loss(p, n_d / n_s)
    assert abs(loss / optimum - 1) < 0.02


def test_chunk_of_a_grid_trains_as_in_the_whole_grid():
    # own streams (no data_seed) and a shared stream: an instance's data and training depend
    # on its own params only, never on which other instances share the stack
    sched = Schedule(batch_size=32, adam_eps=1e-7, window=10, check_every=5, max_steps=40)
    insts = [Instance(0.2, 4, 0, 1e-2), Instance(0.5, 6, 1, 1e-2), Instance(0.1, 5, 2, 3e-3),
             Instance(0.2, 3, 3, 1e-2, 7), Instance(0.2, 6, 4, 1e-2, 7),
             Instance(0.4, 2, 5, 1e-2, 7)]
    whole = train_grid(StackSpec(12, sched), insts)
    for chunk in ([1], [3, 4], [5, 0]):        # whole input groups: the very same numbers
        part = train_grid(StackSpec(12, sched), [insts[k] for k in chunk])
        for k, res in zip(chunk, part):
            np.testing.assert_array_equal(whole[k].W_in, res.W_in)
            np.testing.assert_array_equal(whole[k].W_out, res.W_out)
            np.testing.assert_array_equal(whole[k].train_losses, res.train_losses)
            assert whole[k].steps == res.steps
    # a group split apart: its W_in x is no longer one matmul, equal up to rounding
    part = train_grid(StackSpec(12, sched), insts[4:5])[0]
    np.testing.assert_allclose(whole[4].W_in, part.W_in, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bucketed", [False, True])
@pytest.mark.parametrize("window", [100, 3])        # the rule off (longer than the run), and on
def test_an_instance_leaves_its_stack_at_its_own_cap_as_if_trained_alone_to_it(bucketed, window):
    sched = Schedule(batch_size=32, adam_eps=1e-7, window=window, check_every=10, max_steps=60)
    insts = [Instance(0.2, 4, 0, 1e-2, None, 23), Instance(0.5, 6, 1, 1e-2),
             Instance(0.3, 5, 2, 1e-2, None, 40), Instance(0.4, 6, 3, 1e-2, None, 19)]
    spec = StackSpec(12, sched, bucketed=bucketed)
    stack = train_grid(spec, insts)
    if window == 100:                            # 23, 19: between two checks, yet exactly there
        assert [r.steps for r in stack] == [23, 60, 40, 19] and not any(r.stopped for r in stack)
    for inst, res in zip(insts, stack):          # the others' caps change nothing
        alone = train_grid(spec, [inst])[0]
        assert (alone.steps, alone.stopped) == (res.steps, res.stopped)
        np.testing.assert_allclose(alone.W_in, res.W_in, rtol=1e-5, atol=1e-6)
        if not bucketed:                          # the CPU path: the very same numbers
            np.testing.assert_array_equal(alone.W_in, res.W_in)
            np.testing.assert_array_equal(alone.train_losses, res.train_losses)
    with pytest.raises(ValueError, match="max_steps must be >= 1"):
        Instance(0.2, 4, 0, 1e-2, None, 0)


@pytest.mark.parametrize("bucketed", [False, True])
def test_a_model_trained_on_from_its_kept_state_goes_on_as_if_it_had_never_stopped(bucketed):
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=400, check_every=10, max_steps=150)
    insts = [Instance(p, d, 10 + k, 1e-2, 5) for k, (p, d) in    # one shared stream, then its own
             enumerate([(0.1, 4), (0.1, 9), (0.3, 6), (0.05, 3)])] + [Instance(0.2, 5, 20, 1e-2)]
    spec = StackSpec(16, sched, bucketed=bucketed)
    whole = train_grid(spec, insts)                     # the rule off: each to the cap, 150
    stops = [40, 70, 23, 150, 60]
    kept = train_grid(dataclasses.replace(spec, keep_state=True),
                      [dataclasses.replace(i, max_steps=s) for i, s in zip(insts, stops)])
    assert [r.state.steps for r in kept] == stops and whole[0].state is None
    # on from there, beside a model that starts afresh: the last has no step left to train
    on = train_grid(spec, [dataclasses.replace(i, start=r.state) for i, r in
                           zip(insts[:3] + insts[4:], kept[:3] + kept[4:])] + [insts[3]])
    for a, b, s in zip(whole[:3] + whole[4:] + whole[3:4], on, stops[:3] + stops[4:] + [0]):
        assert b.steps == a.steps == 150 and len(b.train_losses) == 150 - s
        np.testing.assert_allclose(b.W_in, a.W_in, rtol=1e-4, atol=1e-6)
        if not bucketed:                                 # the CPU path: the very same numbers
            for x, y in [(a.W_in, b.W_in), (a.W_out, b.W_out), (a.b, b.b),
                         (a.train_losses[s:], b.train_losses)]:
                np.testing.assert_array_equal(x, y)
    for cap in (150, None):                              # its own cap, or the schedule's
        with pytest.raises(ValueError, match="a start at step 150 leaves no step"):
            train_grid(spec, [dataclasses.replace(insts[3], max_steps=cap, start=kept[3].state)])
    with pytest.raises(ValueError, match="a start of 9 rows"):
        dataclasses.replace(insts[1], start=kept[0].state)


def test_first_loss_is_the_init_model_on_its_stream():
    # step 1 records the loss of the initial model on the first batch: for a data_seed, the
    # first draw of tms.engine.sampler.stream_generator(data_seed); without one, the draw that
    # follows the init draws on the instance's own generator
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=10, check_every=1, max_steps=1)
    insts = [Instance(0.3, 4, 0, 1e-2, 5), Instance(0.6, 8, 1, 3e-3, 5),
             Instance(0.3, 8, 2, 3e-3, 6), Instance(0.3, 3, 3, 3e-3)]
    res = train_grid(StackSpec(8, sched), insts)
    for inst, r in zip(insts, res):
        gen = sampler.generators([inst.seed])[0]
        model = init_stack(8, [inst.n_d], [gen])
        stream = gen if inst.data_seed is None else sampler.stream_generator(inst.data_seed)
        x = sampler.sparse_from_uniform(torch.rand(64, 8, generator=stream), inst.p)
        expected = (forward(model, x[None])[1][0] - x).pow(2).mean()
        np.testing.assert_allclose(r.train_losses[0], expected.item(), rtol=1e-5)


def test_empty_grid_rejected():
    with pytest.raises(ValueError, match="empty"):
        train_grid(StackSpec(8, Schedule(8, 1e-7, 10, 5, 10)), [])


def test_bias_free_linear_reaches_the_linear_optimum_with_b_zero():
    # x ↦ W_out W_in x without bias: the optimum is still Var(x)(1 − n_d/n_s) per feature
    # (the top eigenvector of E[x xᵀ] carries the mean), within 2%.
    n_s, n_d, p = 16, 4, 0.5
    sched = Schedule(batch_size=1024, adam_eps=1e-7, window=1000, check_every=50, max_steps=1000)
    res = train_grid(StackSpec(n_s, sched, relu=False, bias=False), [Instance(p, n_d, 3, 1e-2)])
    assert np.all(res[0].b == 0)
    loss = heldout_loss(stack_of(res, n_s, relu=False, bias=False), torch.tensor([p]), 0, 65536)[0]
    assert abs(loss / theory.optimal_linear_loss(p, n_d / n_s) - 1) < 0.02


def test_scale_multiplies_the_data_in_training_and_scoring():
    sched = Schedule(batch_size=32, adam_eps=1e-7, window=10, check_every=5, max_steps=20)
    insts = [Instance(0.3, 3, 0, 1e-2)]
    plain = train_grid(StackSpec(8, sched, relu=False, bias=False), insts)
    ones = train_grid(StackSpec(8, sched, relu=False, bias=False, scale=[1.0] * 8), insts)
    np.testing.assert_array_equal(plain[0].W_in, ones[0].W_in)
    # held-out loss of fixed weights on s ⊙ x against the exact expectation
    # tr((I − AB) Σ_s (I − AB)ᵀ)/n_s, Σ_s = diag(s) E[x xᵀ] diag(s); Monte Carlo error < 2%
    s = np.geomspace(1.0, 0.2, 8)
    model = stack_of(plain, 8, relu=False, bias=False)
    A, B = plain[0].W_out.astype(float), plain[0].W_in.astype(float)
    second = np.full((8, 8), 0.3**2 / 4)
    np.fill_diagonal(second, 0.3 / 3)
    R = np.eye(8) - A @ B
    exact = np.trace(R @ (second * np.outer(s, s)) @ R.T) / 8
    got = heldout_loss(model, torch.tensor([0.3]), 5, 262144, scale=s)[0]
    assert abs(got / exact - 1) < 0.02
    assert abs(heldout_loss(model, torch.tensor([0.3]), 5, 262144)[0] / exact - 1) > 0.1
    with pytest.raises(ValueError, match="scale"):
        train_grid(StackSpec(8, sched, scale=[1.0] * 7), insts)
    with pytest.raises(ValueError, match="scale"):
        heldout_loss(model, torch.tensor([0.3]), 5, 1000, scale=[1.0] * 7 + [-1.0])


def _grid_of_groups():
    """Two seed indices × three p × two widths: six groups of equal inputs, plus one model
    on its own stream."""
    insts = [Instance(p, d, 10 * s + k, 1e-2, s) for s in (0, 1)
             for k, (p, d) in enumerate([(p, d) for p in (0.1, 0.3, 0.6) for d in (3, 6)])]
    return insts + [Instance(0.3, 5, 99, 3e-3)]


def test_memory_budgeted_chunks_give_byte_equal_weights():
    sched = Schedule(batch_size=32, adam_eps=1e-7, window=10, check_every=5, max_steps=40)
    insts = _grid_of_groups()
    whole = train_grid(StackSpec(12, sched), insts)
    # a budget that holds any one group but not the whole grid
    group = stack_bytes(12, [3, 6], 9, 1, 32, 40)
    budget = 1.5 * group / 2 ** 20
    chunks = plan_chunks(12, insts, sched, budget)
    assert len(chunks) >= 3 and sorted(k for c in chunks for k in c) == list(range(len(insts)))
    chunked = train_grid(StackSpec(12, sched), insts, memory_budget_mb=budget)
    for a, b in zip(whole, chunked):
        for name in ("W_in", "W_out", "b", "train_losses"):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes()
        assert (a.steps, a.stopped) == (b.steps, b.stopped)


def test_chunks_train_one_at_a_time_as_asked_for_each_reduced_where_it_trained():
    sched = Schedule(batch_size=32, adam_eps=1e-7, window=10, check_every=5, max_steps=40)
    insts = _grid_of_groups()
    whole = train_grid(StackSpec(12, sched), insts)
    budget = 1.5 * stack_bytes(12, [3, 6], 9, 1, 32, 40) / 2 ** 20
    chunks = plan_chunks(12, insts, sched, budget)
    seen = []

    def reduce(chunk_insts, results):
        seen.append(list(chunk_insts))
        return [(r.steps, float(r.W_in.sum())) for r in results]

    it = train_chunks(StackSpec(12, sched), insts, memory_budget_mb=budget, reduce=reduce)
    assert seen == []                                  # nothing trains before it is asked for
    for n, (chunk, items) in enumerate(it, start=1):
        assert len(seen) == n and chunk == chunks[n - 1]
        assert seen[-1] == [insts[k] for k in chunk]
        assert items == [(whole[k].steps, float(whole[k].W_in.sum())) for k in chunk]
    assert len(seen) == len(chunks) >= 3
    with pytest.raises(ValueError, match="reduce returned 1 items for 2 instances"):
        train_grid(StackSpec(12, sched), insts[:2], reduce=lambda i, r: r[:1])


def test_plan_rejects_a_budget_below_one_model():
    sched = Schedule(batch_size=32, adam_eps=1e-7, window=10, check_every=5, max_steps=40)
    one = stack_bytes(12, [6], 6, 1, 32, 40) / 2 ** 20
    with pytest.raises(ValueError, match="too small for one model of n_s = 12"):
        plan_chunks(12, _grid_of_groups(), sched, 0.9 * one)
    # a group too wide for the budget is cut between its models
    assert len(plan_chunks(12, [Instance(0.3, 6, 0, 1e-2, 0)] * 3, sched, 1.1 * one)) == 3


@pytest.mark.parametrize("sparse", [False, True])
def test_groups_in_batch_pieces_train_alike_on_any_thread_count_and_chunking(sparse,
                                                                            monkeypatch):
    # every group cut into four pieces of its batch, its products with x dense or sparse:
    # the trained bytes depend neither on the number of worker threads nor on the chunking
    monkeypatch.setattr(models, "sparse_pays", lambda width, p: sparse)
    monkeypatch.setattr(models, "PIECE_FLOPS", 1.0)
    monkeypatch.setattr(models, "MIN_PIECE_ROWS", 8)
    monkeypatch.setattr(models, "MAX_PIECES", 4)
    sched = Schedule(batch_size=32, adam_eps=1e-7, window=10, check_every=5, max_steps=30)
    insts = _grid_of_groups()
    budget = 1.5 * stack_bytes(12, [3, 6], 9, 1, 32, 30) / 2 ** 20     # a group per chunk
    runs = []
    for threads, mb in [(1, None), (2, None), (3, None), (2, budget)]:
        with torch_threads(threads):
            runs.append(train_grid(StackSpec(12, sched), insts, memory_budget_mb=mb))
    for run in runs[1:]:
        for a, b in zip(runs[0], run):
            for name in ("W_in", "W_out", "b", "train_losses"):
                assert getattr(a, name).tobytes() == getattr(b, name).tobytes()
    # and the pieces are not a no-op: the unsplit sums differ in rounding only
    monkeypatch.setattr(models, "PIECE_FLOPS", 1e30)
    whole = train_grid(StackSpec(12, sched), insts)
    assert any(a.W_in.tobytes() != b.W_in.tobytes() for a, b in zip(runs[0], whole))
    for a, b in zip(runs[0], whole):
        np.testing.assert_allclose(a.W_in, b.W_in, rtol=1e-4, atol=1e-5)


def test_gpu_path_trains_as_the_cpu_path_up_to_rounding():
    # buckets of equal n_d across streams and p; own streams too
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=100, check_every=10, max_steps=60)
    insts = [Instance(0.2, 4, 0, 1e-2, 7), Instance(0.5, 6, 1, 1e-2, 7),
             Instance(0.1, 4, 2, 3e-3, 8), Instance(0.2, 6, 3, 1e-2), Instance(0.3, 4, 4, 1e-2)]
    cpu = train_grid(StackSpec(12, sched, bucketed=False), insts)
    gpu = train_grid(StackSpec(12, sched, bucketed=True), insts)
    for a, b in zip(cpu, gpu):
        assert a.steps == b.steps == 60
        np.testing.assert_allclose(a.train_losses, b.train_losses, rtol=1e-4)
        for x, y in ((a.W_in, b.W_in), (a.W_out, b.W_out), (a.b, b.b)):
            np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-6)


class _CountOps(TorchDispatchMode):
    """Counts the torch operations dispatched inside the block (each a kernel launch on CUDA)."""

    def __enter__(self):
        self.count = 0
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def _ops_per_step(models_in_bucket: int, bucketed: bool) -> int:
    """The operations of one training step (the run of 3 steps less the run of 2) of a stack of
    ``models_in_bucket`` models of one n_d on one data stream, each with its own p."""
    insts = [Instance(0.05 + 0.1 * k, 8, k, 1e-2, 0) for k in range(models_in_bucket)]
    counts = []
    for steps in (2, 3):
        sched = Schedule(batch_size=32, adam_eps=1e-7, window=100, check_every=100,
                         max_steps=steps)
        with torch_threads(1), _CountOps() as ops:       # every operation in this thread
            train_grid(StackSpec(16, sched, bucketed=bucketed), insts)
        counts.append(ops.count)
    return counts[1] - counts[0]


def test_gpu_path_step_dispatches_as_many_operations_for_2_as_for_12_models():
    per_step = {m: _ops_per_step(m, bucketed=True) for m in (2, 12)}
    assert per_step[2] == per_step[12] and 0 < per_step[2] < 100, per_step   # views included
    # the CPU path, one loop per model, could have failed this test
    assert _ops_per_step(12, bucketed=False) > _ops_per_step(2, bucketed=False) + 50
