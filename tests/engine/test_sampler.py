import numpy as np
import torch

from tms.engine import sampler


def test_sampler_moments_within_monte_carlo_error():
    p = torch.tensor([0.02, 0.1, 0.5, 1.0])
    x = sampler.sparse_features(p, 20000, 64, sampler.generators([1, 2, 3, 4])).double()
    n = x.shape[1] * x.shape[2]
    for k, q in enumerate(p.tolist()):
        xs = x[k].flatten()
        # E x = p/2, E x² = p/3; Var x = p/3 − p²/4, Var x² = p/5 − p²/9
        se1 = np.sqrt((q / 3 - q * q / 4) / n)
        se2 = np.sqrt((q / 5 - q * q / 9) / n)
        assert abs(xs.mean().item() - q / 2) < 5 * se1
        assert abs(xs.pow(2).mean().item() - q / 3) < 5 * se2
        active = xs[xs > 0]
        assert abs(len(active) / n - q) < 5 * np.sqrt(q * (1 - q) / n) + 1e-12
        # active values are U[0, 1]: mean 1/2, max ≤ 1
        assert abs(active.mean().item() - 0.5) < 5 * np.sqrt(1 / 12 / len(active))
        assert active.max().item() <= 1.0


def test_sparse_from_uniform_is_v_over_p_where_v_below_p_and_plus_zero_elsewhere():
    v = torch.rand(200, 16, generator=sampler.generators([7])[0])
    v[0, :3] = torch.tensor([0.0, 0.25, 0.2500001])       # the boundary: v = p is inactive
    for p, x in [(0.25, sampler.sparse_from_uniform(v, 0.25)),
                 (0.5, sampler.sparse_from_uniform(v, torch.tensor([0.5, 0.25]))[0])]:
        assert torch.equal(x, torch.where(v < p, v / p, torch.zeros(())))
        assert not torch.signbit(x).any()                  # zeros are +0
    assert sampler.sparse_from_uniform(v, 0.25)[0, :3].tolist() == [0.0, 0.0, 0.0]


def test_seeded_and_independent_per_instance():
    a = sampler.sparse_features(torch.tensor([0.3, 0.3]), 10, 8, sampler.generators([5, 6]))
    b = sampler.sparse_features(torch.tensor([0.3, 0.3]), 10, 8, sampler.generators([5, 6]))
    c = sampler.sparse_features(torch.tensor([0.3]), 10, 8, sampler.generators([6]))
    assert torch.equal(a, b)
    assert not torch.equal(a[0], a[1])
    assert torch.equal(a[1], c[0])          # an instance draws the same wherever it sits


def test_heldout_is_fixed_and_chunk_independent():
    one = torch.cat(list(sampler.heldout_uniform(3, 1000, 16, chunk=1000)))
    again = torch.cat(list(sampler.heldout_uniform(3, 1000, 16, chunk=1000)))
    assert one.shape == (1000, 16) and torch.equal(one, again)
    assert not torch.equal(one, torch.cat(list(sampler.heldout_uniform(4, 1000, 16, chunk=1000))))


def test_negative_seed_rejected():
    import pytest
    with pytest.raises(ValueError, match="seed"):
        sampler.generators([-1])


def test_the_smallest_p_the_params_allow_is_drawn_within_one_percent():
    # torch's float32 uniforms are multiples of 2^-24, each equally likely: fed every one of
    # them once, the sampler's share of active features is the exact rate it draws
    from tms.persian_rug.params import MIN_P

    every = torch.arange(2**24, dtype=torch.float32).div_(2**24).reshape(1, -1)
    g = torch.Generator().manual_seed(0)
    assert (torch.rand(2**20, generator=g).double() * 2**24).frac().eq(0).all()  # the grid

    def rate(p: float) -> float:
        p32 = torch.tensor([p], dtype=torch.float32)
        return sampler.sparse_from_uniform(every, p32).gt(0).sum().item() / 2**24

    for p in [MIN_P, MIN_P * 1.005, MIN_P * 1.37, 1e-5, 1e-4, 1e-3]:   # nonzero: 0 < v < p
        assert abs(rate(p) / p - 1) <= 0.01 + 1e-12, p
    assert abs(rate(MIN_P / 2 * 1.015) / (MIN_P / 2 * 1.015) - 1) > 0.01     # below: not so
    assert rate(1e-300) == 0                                  # what p 1e-300 once trained on
