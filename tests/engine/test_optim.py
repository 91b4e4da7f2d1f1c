"""The stacks' optimisers against torch's, instance by instance, and Adam's work sharing
(tms.engine.optim)."""

import io

import pytest
import torch

from tms.engine import optim
from tms.engine.optim import BatchedAdam
from tms.engine.threads import WorkerPool, torch_threads


def test_batched_adam_matches_torch_adam_per_instance():
    torch.manual_seed(0)
    lrs = [1e-2, 3e-3]
    params = [torch.randn(2, 4, 3), torch.randn(2, 3)]
    ref = [[p[k].clone().requires_grad_(True) for p in params] for k in range(2)]
    opts = [torch.optim.Adam(ref[k], lr=lrs[k], eps=1e-7) for k in range(2)]
    ours = BatchedAdam(params, torch.tensor(lrs), 1e-7)
    for step in range(5):
        grads = [torch.randn_like(p) for p in params]
        ours.step(params, grads)
        for k in range(2):
            for r, g in zip(ref[k], grads):
                r.grad = g[k].clone()
            opts[k].step()
    for k in range(2):
        for p, r in zip(params, ref[k]):
            torch.testing.assert_close(p[k], r.detach(), rtol=1e-6, atol=1e-7)


def test_batched_adam_rows_shared_by_threads_give_the_same_bytes(monkeypatch):
    monkeypatch.setattr(optim, "ADAM_BLOCK", 1)       # share even these tiny tensors
    torch.manual_seed(1)
    flat = [torch.randn(7, 5)]
    flat.append(flat[0].clone())
    opts = [BatchedAdam([f], torch.linspace(1e-3, 1e-2, 7), 1e-7) for f in flat]
    with torch_threads(1):
        for _ in range(4):
            g = torch.randn(7, 5)
            opts[0].step([flat[0]], [g])
            with WorkerPool(3) as pool:
                opts[1].step([flat[1]], [g], pool)
    assert torch.equal(flat[0], flat[1])


@pytest.mark.parametrize("threads, window", [(1, 512), (3, 512), (1, 5)])
def test_rows_resumed_at_their_own_step_counts_go_on_as_if_never_stopped(threads, window,
                                                                         monkeypatch):
    monkeypatch.setattr(optim, "ADAM_BLOCK", 1)       # the rows shared among the threads
    monkeypatch.setattr(optim, "CORRECTION_STEPS", window)    # 5: the corrections made again
    torch.manual_seed(2)
    begun, after = [0, 3, 3, 17, 0, 25], 12
    lr, grads = torch.linspace(1e-3, 1e-2, 6), [torch.randn(6, 5) for _ in range(25 + 12)]
    p = torch.randn(6, 5)
    ref = BatchedAdam([p], lr, 1e-7)
    history = [(p.clone(), torch.zeros(6, 5), torch.zeros(6, 5))]   # after 0, 1, 2, ... steps
    for g in grads:
        ref.step([p], [g])
        history.append((p.clone(), ref.m[0].clone(), ref.v[0].clone()))

    def rows_at(steps, part):                  # row r of the run after steps[r] steps
        return torch.stack([history[s][part][r] for r, s in enumerate(steps)])

    def resumed(begun_rows):
        flat = rows_at(begun, 0)
        ours = BatchedAdam([flat], lr, 1e-7, begun=begun_rows)
        ours.m[0].copy_(rows_at(begun, 1))
        ours.v[0].copy_(rows_at(begun, 2))
        with torch_threads(1), WorkerPool(threads) as pool:
            for j in range(after):             # each row the gradients after its own stop
                ours.step([flat], [torch.stack([grads[s + j][r] for r, s in enumerate(begun)])],
                          pool)
        return flat

    want = rows_at([s + after for s in begun], 0)
    assert torch.equal(resumed(torch.tensor(begun)), want)
    # counted from 1 again, the resumed rows' bias corrections are wrong: other numbers
    restarted = resumed(None)
    assert [torch.equal(restarted[r], want[r]) for r in range(6)] == [s == 0 for s in begun]


def test_batched_adam_shares_a_tensor_in_blocks_of_at_least_adam_block(monkeypatch):
    class Recorder(WorkerPool):                      # four workers in name, the caller's thread
        def map(self, fn, items):
            self.blocks.append(len(items))
            return [fn(item) for item in items]

    flat = torch.randn(10, 100)
    opt = BatchedAdam([flat], torch.full((10,), 1e-3), 1e-7)
    with Recorder(1) as pool:
        pool.n, pool.blocks = 4, []
        opt.step([flat], [torch.randn(10, 100)], pool)       # 1000 < ADAM_BLOCK: one block
        monkeypatch.setattr(optim, "ADAM_BLOCK", 300)
        opt.step([flat], [torch.randn(10, 100)], pool)       # 1000 // 300 = 3 blocks
        monkeypatch.setattr(optim, "ADAM_BLOCK", 1)
        opt.step([flat], [torch.randn(10, 100)], pool)       # at most one per worker
    assert pool.blocks == [1, 3, 4]


def test_batched_adam_checkpoints_its_state_not_its_scratch():
    torch.manual_seed(2)
    p = [torch.randn(3, 1000)]
    opt = BatchedAdam(p, torch.tensor([1e-3, 2e-3, 3e-3]), 1e-7)
    opt.step(p, [torch.randn(3, 1000)])
    saved = io.BytesIO()
    torch.save((p[0].clone(), opt), saved)
    assert saved.tell() < 3.5 * p[0].numel() * 4       # W, m and v; not the scratch as well
    saved.seek(0)
    q, restored = torch.load(saved, weights_only=False)
    g = torch.randn(3, 1000)
    opt.step(p, [g])
    restored.step([q], [g])
    assert torch.equal(p[0], q)


def _torch_reference(opt_cls, lr, steps, **kw):
    torch.manual_seed(0)
    p = torch.randn(2, 4, 3)
    grads = [torch.randn(2, 4, 3) for _ in range(steps)]
    ref = [p[k].clone().requires_grad_(True) for k in range(2)]
    opts = [opt_cls([ref[k]], lr=lr, **kw) for k in range(2)]
    for g in grads:
        for k in range(2):
            ref[k].grad = g[k].clone()
            opts[k].step()
    return p, grads, torch.stack([r.detach() for r in ref])


@pytest.mark.parametrize("name, cls, kw", [
    ("sgd", torch.optim.SGD, {}),
    ("adam", torch.optim.Adam, {"eps": optim.ADAM_EPS}),
    ("adamw", torch.optim.AdamW, {"eps": optim.ADAM_EPS, "weight_decay": 0.05}),
])
def test_stack_optimisers_match_torch_per_instance(name, cls, kw):
    # the stack's update (fused for Adam and AdamW) is each instance's own torch update, the
    # reference op by op: equal up to rounding, and far from the untouched weights
    p, grads, ref = _torch_reference(cls, 1e-2, 6, **kw)
    start = p.clone()
    opt = optim.make_optimizer(name, [p], 1e-2, kw.get("weight_decay", 0.0))
    for g in grads:
        opt.step([p], [g])
    torch.testing.assert_close(p, ref, rtol=1e-6, atol=1e-7)
    assert (p - start).abs().max() > 1e-2


def test_unknown_optimiser_is_rejected():
    with pytest.raises(ValueError, match="optimizer"):
        optim.make_optimizer("rmsprop", [torch.zeros(1, 2)], 1.0)
