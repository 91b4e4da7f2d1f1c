import pytest
import torch

from tms import data
from tms.models import BatchedAdam, forward, init_stack, loss_and_grads


def _reference_loss(model, x):
    W_in, W_out, b = (t.clone().requires_grad_(True) for t in (model.W_in, model.W_out, model.b))
    z = torch.bmm(torch.bmm(x, W_in.transpose(1, 2)), W_out.transpose(1, 2)) + b[:, None]
    y = torch.relu(z) if model.relu else z
    loss = (y - x).pow(2).mean(dim=(1, 2))
    loss.sum().backward()
    return loss.detach(), [W_in.grad, W_out.grad, b.grad]


@pytest.mark.parametrize("relu", [True, False])
def test_hand_written_gradients_match_autograd(relu):
    torch.manual_seed(0)
    gens = data.generators([1, 2, 3])
    model = init_stack(32, [5, 9, 12], gens, relu)
    x = data.sparse_features(torch.tensor([0.1, 0.3, 0.9]), 64, 32, gens)
    ref_loss, ref_grads = _reference_loss(model, x)
    loss, grads = loss_and_grads(model, x)
    torch.testing.assert_close(loss, ref_loss)
    for g, r in zip(grads, ref_grads):
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-7)


def test_padding_stays_zero_and_does_not_change_outputs():
    gens = data.generators([1, 2])
    model = init_stack(16, [3, 8], gens)
    x = data.sparse_features(torch.tensor([0.2, 0.2]), 32, 16, gens)
    opt = BatchedAdam(model.params, torch.tensor([1e-2, 1e-2]), 1e-8)
    for _ in range(20):
        _, grads = loss_and_grads(model, x)
        opt.step(model.params, grads)
    assert torch.all(model.W_in[0, 3:] == 0) and torch.all(model.W_out[0, :, 3:] == 0)
    alone = init_stack(16, [3], data.generators([1]))
    alone.W_in, alone.W_out, alone.b = (model.W_in[:1, :3].clone(),
                                        model.W_out[:1, :, :3].clone(), model.b[:1].clone())
    torch.testing.assert_close(forward(alone, x[:1])[1], forward(model, x)[1][:1])


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


def test_init_rejects_bad_n_d():
    with pytest.raises(ValueError, match="n_d"):
        init_stack(8, [9], data.generators([0]))


def test_bias_free_stack_keeps_b_zero_and_matches_autograd():
    gens = data.generators([1, 2])
    with_bias = init_stack(12, [3, 5], data.generators([1, 2]), relu=False)
    model = init_stack(12, [3, 5], gens, relu=False, bias=False)
    # the same weight draws as with a bias; b is exactly zero and not a parameter
    torch.testing.assert_close(model.W_in, with_bias.W_in, rtol=0, atol=0)
    torch.testing.assert_close(model.W_out, with_bias.W_out, rtol=0, atol=0)
    assert len(model.params) == 2 and torch.all(model.b == 0)
    x = data.sparse_features(torch.tensor([0.3, 0.6]), 64, 12, gens)
    ref_loss, ref_grads = _reference_loss(model, x)
    loss, grads = loss_and_grads(model, x)
    assert len(grads) == 2
    torch.testing.assert_close(loss, ref_loss)
    for g, r in zip(grads, ref_grads[:2]):
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-7)
    opt = BatchedAdam(model.params, torch.tensor([1e-2, 1e-2]), 1e-8)
    for _ in range(10):
        opt.step(model.params, loss_and_grads(model, x)[1])
    assert torch.all(model.b == 0) and not model.select(torch.tensor([1])).bias
