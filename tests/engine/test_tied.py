import numpy as np
import pytest
import torch

from tms.engine import optim, tied
from tms.engine.sampler import generators


def _fourth(W):
    """The fourth norms Σ_k W_ik⁴ of every encoding (I, n): the statistic the tests record."""
    return (W ** 4).sum(-1)


def _reference(W, lam, xi):
    W = W.clone().requires_grad_(True)
    H = W if xi is None else W + xi[:, None, :]
    y = torch.relu(torch.bmm(H, W.transpose(1, 2)))
    eye = torch.eye(W.shape[1])
    loss = (y - eye).pow(2).sum((1, 2)) + lam * W.abs().sum((1, 2))
    loss.sum().backward()
    return loss.detach(), W.grad


@pytest.mark.parametrize("noisy", [False, True])
def test_hand_written_gradient_matches_autograd(noisy):
    torch.manual_seed(0)
    W = tied.init_weights(6, 10, generators([1, 2, 3]))
    lam = torch.tensor([0.0, 1e-2, 0.3])
    xi = 0.2 * torch.randn(3, 10) if noisy else None
    ref_loss, ref_grad = _reference(W, lam, xi)
    loss, grad = tied.loss_and_grad(W, lam, xi)
    torch.testing.assert_close(loss, ref_loss)
    torch.testing.assert_close(grad, ref_grad, rtol=1e-5, atol=1e-6)
    # bfloat16 products: the same to about bfloat16's precision (8 bits), but not the same
    loss16, grad16 = tied.loss_and_grad(W, lam, xi, matmul_dtype=torch.bfloat16)
    assert grad16.dtype == torch.float32 and not torch.equal(grad16, grad)
    torch.testing.assert_close(loss16, ref_loss, rtol=3e-2, atol=1e-3)
    torch.testing.assert_close(grad16, ref_grad, rtol=0, atol=3e-2 * float(ref_grad.abs().max()))


@pytest.mark.parametrize("n, m", [(7, 12), (8, 12), (3, 70), (8, 70), (1, 4)])
def test_gram_is_w_w_transposed_and_exactly_symmetric(n, m):
    # (3, 70) and (8, 70): shapes where a CPU product of a block with itself is not symmetric
    W = tied.init_weights(n, m, generators([4, 5]))
    Z = tied.gram(W)
    ref = torch.einsum("ink,ijk->inj", W.double(), W.double())
    torch.testing.assert_close(Z.double(), ref, rtol=1e-6, atol=1e-7)
    assert torch.equal(Z, Z.transpose(1, 2))
    out = torch.full((2, n, n), float("nan"))
    assert tied.gram(W, out=out) is out and torch.equal(out, Z)


@pytest.mark.parametrize("noisy", [False, True])
def test_a_kept_workspace_gives_the_same_bytes_as_fresh_tensors(noisy):
    W = tied.init_weights(6, 10, generators([1, 2]))
    lam, work = torch.tensor([0.0, 0.1]), tied.Workspace(W)
    for step in range(3):              # the buffers reused: stale contents must not leak in
        xi = 0.2 * torch.randn(2, 10, generator=torch.Generator().manual_seed(step)) \
            if noisy else None
        fresh = tied.loss_and_grad(W, lam, xi)
        kept = tied.loss_and_grad(W, lam, xi, work=work)
        assert torch.equal(fresh[0], kept[0]) and torch.equal(fresh[1], kept[1])
        W = W - 0.01 * kept[1]


def test_tf32_is_refused_off_cuda_and_an_unknown_precision_anywhere():
    with pytest.raises(ValueError, match="tf32.*CUDA"):
        tied.train(tied.TiedSpec(4, 2, tied.Optim("adam", 1e-3), 2, 1, precision="tf32"),
                   [tied.Setting(0)], _fourth)
    with pytest.raises(ValueError, match="precision must be one of"):
        tied.train(tied.TiedSpec(4, 2, tied.Optim("adam", 1e-3), 2, 1, precision="fp16"),
                   [tied.Setting(0)], _fourth)


def test_loss_of_a_perfect_monosemantic_solution_is_its_l1_penalty():
    W = torch.zeros(2, 3, 5)
    W[:, [0, 1, 2], [4, 0, 2]] = torch.tensor([1.0, -1.0, 1.0])
    loss, grad = tied.loss_and_grad(W, torch.tensor([0.0, 0.1]))
    torch.testing.assert_close(loss, torch.tensor([0.0, 0.3]))
    assert torch.all(grad[0] == 0)


def test_init_has_variance_one_over_m():
    W = tied.init_weights(64, 256, generators([0]))
    assert W.var().item() == pytest.approx(1 / 256, rel=0.02)


def test_unknown_noise_and_negative_sigma_are_rejected():
    with pytest.raises(ValueError, match="noise"):
        tied.train(tied.TiedSpec(2, 4, tied.Optim("sgd", 0.1), 1, 1),
                   [tied.Setting(0, sigma=0.1, noise="uniform")], _fourth)
    with pytest.raises(ValueError, match="sigma"):
        tied.train(tied.TiedSpec(2, 4, tied.Optim("sgd", 0.1), 1, 1),
                   [tied.Setting(0, sigma=-0.1)], _fourth)


def test_noise_is_bipolar_or_normal_with_the_given_scale():
    noise = tied.HiddenNoise(generators([0, 1]), 64, torch.tensor([0.3, 0.3]),
                             torch.tensor([True, False]))
    xi = torch.stack([noise() for _ in range(600)])            # (steps, I, m)
    assert torch.all(xi[:, 0].abs() == torch.tensor(0.3))
    assert xi[:, 0].mean().item() == pytest.approx(0.0, abs=0.01)
    normal = xi[:, 1].flatten()
    assert normal.std().item() == pytest.approx(0.3, rel=0.02)
    kurt = (normal ** 4).mean() / normal.var() ** 2 - 3
    assert abs(kurt.item()) < 0.1
    assert not torch.equal(xi[:256], xi[256:512])              # a fresh block every 256 steps


def test_an_instance_trains_the_same_alone_or_in_a_stack_and_is_reproducible():
    settings = [tied.Setting(5, sigma=0.1), tied.Setting(6, lam=1e-2),
                tied.Setting(7, sigma=0.2, noise="normal")]
    opt = tied.Optim("sgd", 0.02)
    stack = tied.train(tied.TiedSpec(4, 8, opt, 300, 100), settings, _fourth)
    again = tied.train(tied.TiedSpec(4, 8, opt, 300, 100), settings, _fourth)
    alone = tied.train(tied.TiedSpec(4, 8, opt, 300, 100), settings[2:], _fourth)
    assert np.array_equal(stack.W, again.W)
    np.testing.assert_allclose(alone.W[0], stack.W[2], rtol=1e-5, atol=1e-6)
    assert stack.steps.tolist() == [0, 100, 200, 300]
    assert stack.recorded.shape == (3, 4, 4) and stack.loss.shape == (3,)
    np.testing.assert_allclose(stack.recorded[:, -1], (stack.W ** 4).sum(-1), rtol=1e-6)


def test_a_diverging_instance_is_flagged_and_leaves_the_others_as_they_were():
    settings = [tied.Setting(5, sigma=0.1), tied.Setting(6, lam=1e-2)]
    alone = tied.train(tied.TiedSpec(4, 8, tied.Optim("sgd", 0.02), 200, 100), settings, _fourth)
    assert not alone.diverged.any()
    # the same two, and a third whose SGD step overflows: one stack, one learning rate, so
    # the blow-up comes from its huge initial weights' scale of noise (σ = 1e18)
    mixed = tied.train(tied.TiedSpec(4, 8, tied.Optim("sgd", 0.02), 200, 100),
                       [*settings, tied.Setting(7, sigma=1e18)], _fourth)
    assert mixed.diverged.tolist() == [False, False, True]
    assert np.array_equal(mixed.W[:2], alone.W) and np.array_equal(mixed.loss[:2], alone.loss)
    first = torch.tensor([1.0, 1.0, 1.0, 0.001])
    W = torch.zeros(4, 2, 2)                          # n = 2: the loss of W = 0 is 2
    W[1, 0, 0] = float("nan")
    last = torch.tensor([150.0, 1.0, 201.0, 2.0])     # the last: shrunk to W = 0, healthy
    assert tied.diverged(W, first, last).tolist() == [False, True, True, False]


def test_l1_training_makes_encodings_sparse():
    trace = tied.train(tied.TiedSpec(4, 32, tied.Optim("adamw", 1e-2, 0.01), 1500, 1500),
                       [tied.Setting(k, lam=1e-2) for k in range(3)], _fourth)
    assert trace.recorded[:, 0].mean() < 0.2                    # dense at init (≈ 3/m)
    assert trace.recorded[:, -1].mean() > 0.8                   # one weight ≈ 1 per encoding


def test_the_stacks_sgd_is_torchs_sgd_to_the_bit():
    # the same update as torch.optim.SGD (no momentum, no weight decay), byte for byte, over
    # many steps of a stack; lr·g rounded before it is subtracted, or lr 1% off, is told apart
    torch.manual_seed(3)
    grads = [torch.randn(5, 8, 16) for _ in range(50)]
    start = torch.randn(5, 8, 16)
    ref = start.clone().requires_grad_(True)
    sgd = torch.optim.SGD([ref], lr=0.02)
    ours, rounded, off = start.clone(), start.clone(), start.clone()
    plain, slightly = optim.PlainSgd(0.02), optim.PlainSgd(0.0202)
    for g in grads:
        ref.grad = g.clone()
        sgd.step()
        plain.step([ours], [g])
        slightly.step([off], [g])
        rounded.sub_(0.02 * g)
    assert torch.equal(ours, ref.detach())
    assert not torch.equal(rounded, ref.detach()) and not torch.equal(off, ref.detach())
    assert (ours - start).abs().max() > 0.1
