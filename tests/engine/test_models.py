import pytest
import torch

from tms.engine import models, sampler
from tms.engine.models import forward, init_ragged, init_stack, loss_and_grads
from tms.engine.optim import BatchedAdam
from tms.engine.threads import WorkerPool, torch_threads


def _reference(model, xs):
    """Loss and gradients of every instance of a ragged stack by autograd, one model at a
    time: xs[k] (B, n_s) is the input of instance k."""
    losses, grads = [], []
    for k, x in enumerate(xs):
        W_in, W_out_T, b = (t.detach().clone().requires_grad_(True)
                            for t in (model.W_in(k), model.W_out_T(k), model.b(k)))
        z = x @ W_in.T @ W_out_T + b
        y = torch.relu(z) if model.relu else z
        loss = (y - x).pow(2).mean()
        loss.backward()
        losses.append(loss.detach())
        grads.append((W_in.grad, W_out_T.grad, b.grad if model.bias else torch.zeros_like(b)))
    return torch.stack(losses), grads


def _assert_matches_autograd(model, xs, grad, loss):
    """The hand-written loss (I,) and gradients (like model.flat) against :func:`_reference`."""
    ref_loss, ref_grads = _reference(model, xs)
    torch.testing.assert_close(loss, ref_loss)
    D = model.hidden
    for k, (g_in, g_out_T, g_b) in enumerate(ref_grads):
        o0, o1 = model.offsets[k], model.offsets[k + 1]
        torch.testing.assert_close(grad[o0:o1], g_in, rtol=1e-5, atol=1e-7)
        torch.testing.assert_close(grad[D + o0:D + o1], g_out_T, rtol=1e-5, atol=1e-7)
        torch.testing.assert_close(grad[2 * D + k], g_b, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("relu,bias,sparse", [(True, True, False), (False, True, False),
                                              (True, False, False), (True, True, True),
                                              (True, False, True)])
def test_hand_written_gradients_match_autograd(relu, bias, sparse, monkeypatch):
    # five instances, the first three sharing their inputs (one group), then two alone;
    # sparse: every group's products with x through x as a CSR matrix
    monkeypatch.setattr(models, "sparse_pays", lambda width, p: sparse)
    n_d = [5, 9, 12, 3, 7]
    gens = sampler.generators(range(5))
    model = init_ragged(32, n_d, gens, relu, bias)
    model.flat[-5:].uniform_(-0.5, 0.5, generator=gens[0])      # nonzero b where used
    if not bias:
        model.flat[-5:] = 0
    groups = [(0, 3), (3, 4), (4, 5)]
    xg = [sampler.sparse_from_uniform(torch.rand(64, 32, generator=gens[1]), p)
          for p in (0.1, 0.3, 0.9)]
    grad, loss = torch.full_like(model.flat, float("nan")), torch.empty(5)
    grad2, loss2 = torch.full_like(model.flat, float("nan")), torch.empty(5)
    with torch_threads(1):
        loss_and_grads(model, groups, lambda g, rows, out: out.copy_(xg[g][rows]), 64, grad,
                       loss, density=[0.1, 0.3, 0.9])
        # the groups dealt to two threads: the very same numbers
        with WorkerPool(2) as pool:
            loss_and_grads(model, groups, lambda g, rows, out: out.copy_(xg[g][rows]), 64,
                           grad2, loss2, pool, [0.1, 0.3, 0.9])
    assert torch.equal(grad, grad2) and torch.equal(loss, loss2)
    _assert_matches_autograd(model, [xg[0]] * 3 + xg[1:], grad, loss)


def test_batch_pieces_cover_the_batch_and_grow_with_the_work():
    for width, n_s, batch in [(1, 8, 7), (130, 512, 1024), (870, 256, 1024), (5, 32, 1000)]:
        cuts = models.batch_pieces(width, n_s, batch)
        assert cuts[0].start == 0 and cuts[-1].stop == batch
        assert all(a.stop == b.start for a, b in zip(cuts, cuts[1:]))
        assert len(cuts) <= models.MAX_PIECES
        assert all(c.stop - c.start >= min(batch, models.MIN_PIECE_ROWS) for c in cuts)
    assert len(models.batch_pieces(1, 8, 1024)) == 1
    assert len(models.batch_pieces(870, 256, 1024)) == models.MAX_PIECES


@pytest.mark.parametrize("sparse", [False, True])
def test_a_lone_model_in_pieces_matches_autograd_for_any_number_of_workers(sparse, monkeypatch):
    # tiny pieces forced: one model, one group, its batch of 96 cut in three
    monkeypatch.setattr(models, "sparse_pays", lambda width, p: sparse)
    monkeypatch.setattr(models, "PIECE_FLOPS", 1.0)
    monkeypatch.setattr(models, "MIN_PIECE_ROWS", 32)
    monkeypatch.setattr(models, "MAX_PIECES", 3)
    gens = sampler.generators([4, 5])
    model = init_ragged(24, [6, 9], gens)
    model.flat[-2:].uniform_(-0.5, 0.5, generator=gens[0])
    x = sampler.sparse_from_uniform(torch.rand(96, 24, generator=gens[1]), 0.2)
    assert len(models.batch_pieces(15, 24, 96)) == 3
    out = []
    with torch_threads(1):
        for n in (1, 2, 3):
            grad, loss = torch.full_like(model.flat, float("nan")), torch.empty(2)
            with WorkerPool(n) as pool:
                loss_and_grads(model, [(0, 2)], lambda g, rows, o: o.copy_(x[rows]), 96, grad,
                               loss, pool, [0.2])
            out.append((grad, loss))
    for grad, loss in out[1:]:                   # the same bytes whatever the thread count
        assert torch.equal(grad, out[0][0]) and torch.equal(loss, out[0][1])
    _assert_matches_autograd(model, [x, x], *out[0])


def test_sparse_products_only_for_wide_groups_at_small_p():
    # the bench grid's groups at n_s 512 (width 1737) and p ≤ 0.032; never the default
    # profile's (width ≤ 326) nor the fig. 3 model (n_d 130)
    assert models.sparse_pays(1737, 0.01) and models.sparse_pays(3478, 0.032)
    assert not models.sparse_pays(1737, 0.058) and not models.sparse_pays(866, 0.01)
    assert not models.sparse_pays(326, 0.001) and not models.sparse_pays(130, 0.001)


def test_worker_pool_rejects_no_threads():
    with pytest.raises(ValueError, match="at least one thread"):
        WorkerPool(0)


def test_ragged_stack_holds_the_padded_init_and_selects_instances():
    n_d = [3, 8, 5]
    padded = init_stack(16, n_d, sampler.generators([1, 2, 3]))
    ragged = init_ragged(16, n_d, sampler.generators([1, 2, 3]))
    for k, d in enumerate(n_d):
        torch.testing.assert_close(ragged.W_in(k), padded.W_in[k, :d], rtol=0, atol=0)
        torch.testing.assert_close(ragged.W_out_T(k), padded.W_out[k, :, :d].T, rtol=0, atol=0)
        torch.testing.assert_close(ragged.b(k), padded.b[k], rtol=0, atol=0)
        assert torch.all(padded.W_in[k, d:] == 0) and torch.all(padded.W_out[k, :, d:] == 0)
    sub = ragged.select([2, 0])
    assert sub.n_d == [5, 3] and sub.hidden == 8
    torch.testing.assert_close(sub.W_out_T(0), ragged.W_out_T(2), rtol=0, atol=0)
    torch.testing.assert_close(sub.b(1), ragged.b(0), rtol=0, atol=0)
    x = torch.rand(3, 10, 16)
    torch.testing.assert_close(forward(padded, x)[1][0],
                               torch.relu(x[0] @ ragged.W_in(0).T @ ragged.W_out_T(0)
                                          + ragged.b(0)))


def test_init_rejects_bad_n_d():
    with pytest.raises(ValueError, match="n_d"):
        init_stack(8, [9], sampler.generators([0]))
    with pytest.raises(ValueError, match="n_d"):
        init_ragged(8, [3, 0], sampler.generators([0, 1]))


def test_bias_free_stack_keeps_b_zero_under_adam():
    gens = sampler.generators([1, 2])
    with_bias = init_stack(12, [3, 5], sampler.generators([1, 2]), relu=False)
    model = init_stack(12, [3, 5], gens, relu=False, bias=False)
    # the same weight draws as with a bias; b is exactly zero and not a parameter
    torch.testing.assert_close(model.W_in, with_bias.W_in, rtol=0, atol=0)
    torch.testing.assert_close(model.W_out, with_bias.W_out, rtol=0, atol=0)
    assert len(model.params) == 2 and torch.all(model.b == 0)
    ragged = init_ragged(12, [3, 5], sampler.generators([1, 2]), relu=False, bias=False)
    x = sampler.sparse_from_uniform(torch.rand(64, 12, generator=gens[0]), 0.3)
    opt = BatchedAdam([ragged.flat], torch.full((ragged.flat.shape[0],), 1e-2), 1e-8)
    grad, loss = torch.empty_like(ragged.flat), torch.empty(2)
    for _ in range(10):
        loss_and_grads(ragged, [(0, 2)], lambda g, rows, out: out.copy_(x[rows]), 64, grad, loss)
        opt.step([ragged.flat], [grad])
    assert torch.all(ragged.flat[-2:] == 0) and torch.all(ragged.W_in(1) != 0)


def test_equal_width_runs_are_the_buckets_of_equal_n_d():
    assert models.equal_width_runs([3, 3, 5, 5, 5, 3, 7]) == [(0, 2), (2, 5), (5, 6), (6, 7)]
    assert models.equal_width_runs([]) == []


@pytest.mark.parametrize("relu,bias", [(True, True), (False, True), (True, False)])
def test_bucketed_gradients_match_autograd(relu, bias):
    # three buckets (n_d 4, 4, 4 | 9 | 6, 6), each instance with its own inputs
    n_d = [4, 4, 4, 9, 6, 6]
    gens = sampler.generators(range(6))
    model = init_ragged(24, n_d, gens, relu, bias)
    if bias:
        model.flat[-6:].uniform_(-0.5, 0.5, generator=gens[0])
    xs = torch.stack([sampler.sparse_from_uniform(torch.rand(48, 24, generator=g), p)
                      for g, p in zip(gens, (0.1, 0.2, 0.3, 0.5, 0.7, 0.9))])
    buckets = models.equal_width_runs(n_d)
    grad, loss = torch.full_like(model.flat, float("nan")), torch.empty(6)
    models.bucketed_loss_and_grads(model, buckets, lambda j: xs[slice(*buckets[j])], 48, grad,
                                   loss)
    _assert_matches_autograd(model, list(xs), grad, loss)
    # bfloat16 products: the same loss to about bfloat16's precision (8 bits)
    grad16, loss16 = torch.empty_like(grad), torch.empty(6)
    models.bucketed_loss_and_grads(model, buckets, lambda j: xs[slice(*buckets[j])], 48, grad16,
                                   loss16, torch.bfloat16)
    torch.testing.assert_close(loss16, loss, rtol=2e-2, atol=0)
    assert not torch.equal(loss16, loss)
