import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import poisson

from tms.incidental import stats


def test_polysemantic_count_on_a_hand_built_W():
    W = np.zeros((2, 5, 6))
    # instance 0: neuron 0 holds features 0 and 1 (opposite signs), neuron 2 holds 2 and 3 but
    # feature 3 is outside the band (0.7), neuron 4 holds 4 alone, neuron 5 holds 0 (1.2) and 4
    # (−0.8): the band is inclusive.
    W[0, 0, 0], W[0, 1, 0] = 1.0, -0.95
    W[0, 2, 2], W[0, 3, 2] = 1.1, -0.7
    W[0, 4, 4] = 1.0
    W[0, 0, 5], W[0, 4, 5] = 1.2, -0.8
    # instance 1: three features on neuron 3 count once; a large weight (1.5) does not count.
    W[1, :3, 3] = [1.0, -1.0, 0.9]
    W[1, 3, 1], W[1, 4, 1] = 1.5, 1.0
    assert stats.polysemantic_neurons(W).tolist() == [2, 1]
    assert stats.polysemantic_neurons(W[0]) == 2


def test_benign_pairs_need_the_same_top_neuron_and_opposite_signs():
    W = np.array([[0.9, 0.1, 0.0],
                  [-0.8, 0.2, 0.1],        # top neuron 0, opposite to feature 0: benign
                  [0.7, 0.0, 0.1],         # top neuron 0, same sign as 0, opposite to 1
                  [0.0, 0.5, -0.1]])       # alone on neuron 1
    assert stats.benign_pairs(W) == 2          # (0, 1) and (1, 2)
    assert stats.benign_pairs(np.stack([W, -W])).tolist() == [2, 2]


def test_polysemantic_from_init_needs_two_features_largest_there_at_init():
    W = np.zeros((4, 3))
    W[[0, 1, 2], 0] = [1.0, -1.0, 0.9]        # neuron 0: features 0, 1, 2
    W[3, 1], W[0, 1] = 1.1, -0.85              # neuron 1: features 0, 3
    W0 = np.array([[0.5, 0.2, 0.0],            # feature 0: largest on neuron 0
                   [-0.4, 0.1, 0.0],           # feature 1: largest on neuron 0
                   [-0.1, 0.0, 0.3],           # feature 2: largest on neuron 2
                   [0.0, -0.3, 0.1]])          # feature 3: largest on neuron 1, but 0 is not
    assert stats.polysemantic_from_init(W, W0) == 1                     # neuron 0 only
    W0[0] = [0.2, 0.5, 0.0]                                             # 0 now largest on 1
    assert stats.polysemantic_from_init(W, W0) == 1                     # neuron 1 only
    assert stats.polysemantic_from_init(np.zeros((4, 3)), W0) == 0


def test_winner_ranks_are_the_init_ranks_of_the_neurons_that_hold_each_represented_feature():
    W = np.zeros((4, 3))
    W[0, 2], W[1, 0], W[3, 1] = 1.0, -0.9, 1.1        # features 0, 1, 3 represented
    W[2, [0, 1]] = [1.0, 0.95]                         # feature 2: two weights in the band
    W0 = np.array([[0.3, -0.1, 0.2],                   # neuron 2 second largest: rank 2
                   [-0.5, 0.4, 0.1],                   # neuron 0 largest: rank 1
                   [0.1, 0.2, 0.3],
                   [0.1, -0.05, -0.2]])                # neuron 1 smallest: rank 3
    assert stats.winner_ranks(W, W0).tolist() == [2, 1, 3]
    rng = np.random.default_rng(0)                     # against a sort, on random weights
    W0 = rng.normal(size=(50, 20))
    win = rng.integers(0, 20, size=50)
    W = np.where(np.arange(20) == win[:, None], 1.0, 0.0) * rng.choice([-1, 1], size=(50, 1))
    order = np.argsort(-np.abs(W0), axis=1)
    assert stats.winner_ranks(W, W0).tolist() == [
        int(np.flatnonzero(order[i] == win[i])[0]) + 1 for i in range(50)]


def test_fourth_norms():
    W = np.array([[[1.0, 0.0], [0.5, -0.5]]])
    np.testing.assert_allclose(stats.fourth_norms(W), [[1.0, 0.125]])


def test_stuck_encoding_is_found_on_a_hand_built_W():
    n, m = 4, 6
    W = np.zeros((2, n, m))
    for i, k in enumerate([0, 1, 2]):
        W[:, i, k] = 1.0
    W[0, 3, :3] = -0.55            # spread over the neurons of encodings 0, 1, 2, opposite signs
    W[0, 3, 3] = 0.1
    W[1, 3, 3] = 1.0               # instance 1: encoding 3 took its own neuron
    stuck = stats.stuck_encodings(W, 0.5)
    assert len(stuck) == 1
    row = stuck.iloc[0]
    assert (row.instance, row.feature, row.coords, row.owned_by_others, row.opposite_sign) == \
        (0, 3, 3, 3, 3)
    assert row.fourth == pytest.approx(3 * 0.55 ** 4 + 0.1 ** 4)
    assert row.others_fourth == 1.0                     # encodings 0, 1, 2 are one-hot
    W[0, 3, :3] = 0.55             # same signs as the owners
    assert stats.stuck_encodings(W, 0.5).iloc[0].opposite_sign == 0


def test_collision_constant_is_the_poisson_maximum_likelihood():
    rng = np.random.default_rng(0)
    n, m = 32, np.repeat([32, 64, 128, 256], 8)
    counts = rng.poisson(0.2 * n * n / m)
    fit = stats.collision_constant(counts, n, m)
    nll = lambda c: -poisson.logpmf(counts, c * n * n / m).sum()
    best = minimize_scalar(nll, bounds=(1e-3, 2.0), method="bounded", options={"xatol": 1e-10})
    assert fit["c"] == pytest.approx(best.x, rel=1e-6)
    assert fit["lo"] < fit["c"] < fit["hi"]


def test_collision_constant_interval_covers_at_the_nominal_rate():
    rng = np.random.default_rng(1)
    n, m = 32, np.repeat([32, 64, 128, 256, 512], 16)
    hits = 0
    reps = 400
    for _ in range(reps):
        fit = stats.collision_constant(rng.poisson(0.25 * n * n / m), n, m, level=0.9)
        hits += fit["lo"] <= 0.25 <= fit["hi"]
    assert 0.86 <= hits / reps <= 0.95          # binomial s.e. of the rate ≈ 0.015


def test_collision_constant_widens_for_overdispersed_counts():
    n, m = 16, np.repeat([16, 32], 20)
    mean = n * n / m / 4                        # 4 and 2: c = 1/4 exactly
    calm = mean.astype(int)
    wild = np.where(np.arange(40) % 2 == 0, 0, 2 * mean).astype(int)
    a, b = stats.collision_constant(calm, n, m), stats.collision_constant(wild, n, m)
    assert a["c"] == b["c"] == 0.25
    assert a["dispersion"] == 1.0 and b["dispersion"] > 2.0
    assert b["hi"] - b["lo"] > 1.4 * (a["hi"] - a["lo"])
    with pytest.raises(ValueError):
        stats.collision_constant([1], n, [16])


def test_m_exponent_is_exact_on_noiseless_counts_and_matches_a_second_method():
    m = np.repeat([32.0, 64.0, 128.0, 256.0], 4)
    exact = stats.m_exponent(0.25 * 64 * 64 / m, m)            # counts ∝ 1/m, no noise
    assert exact["beta"] == pytest.approx(-1.0, abs=1e-6) and exact["dispersion"] == 1.0
    rng = np.random.default_rng(2)
    counts = rng.poisson(300.0 * m ** -0.7)
    fit = stats.m_exponent(counts, m)
    # the Poisson likelihood maximised over (log A, β) by a grid search on β (A in closed form)
    grid = np.linspace(-1.5, 0.0, 15001)
    nll = [-poisson.logpmf(counts, counts.sum() / (m ** b).sum() * m ** b).sum() for b in grid]
    assert fit["beta"] == pytest.approx(grid[int(np.argmin(nll))], abs=2e-4)
    assert fit["lo"] < fit["beta"] < fit["hi"]


def test_m_exponent_interval_covers_at_the_nominal_rate_and_rejects_bad_input():
    rng = np.random.default_rng(3)
    m = np.repeat([32.0, 64.0, 128.0, 256.0, 512.0], 16)
    reps, hits = 300, 0
    for _ in range(reps):
        fit = stats.m_exponent(rng.poisson(256.0 / m), m, level=0.9)
        hits += fit["lo"] <= -1.0 <= fit["hi"]
    assert 0.85 <= hits / reps <= 0.95          # binomial s.e. of the rate ≈ 0.017
    for counts, ms in (([1, 2], [16, 16]), ([0, 0], [16, 32]), ([-1, 2], [16, 32])):
        with pytest.raises(ValueError):
            stats.m_exponent(counts, ms)


def test_encoding_shape_is_a_mean_of_per_encoding_ratios():
    # one weight (1), four equal weights (1/4), a zero encoding left out
    W = np.zeros((3, 3, 4))
    W[0, 0, 0], W[0, 1] = 0.5, 0.5
    # two one-weight encodings of unequal length: 1 each, where the ratio of the means,
    # mean ‖W_i‖₄⁴ / (mean ‖W_i‖²)² = 0.50005 / 0.505², is 1.96
    W[2, 0, 0], W[2, 1, 1] = 1.0, 0.1
    np.testing.assert_allclose(stats.encoding_shape(W), [0.625, np.nan, 1.0])
    # random directions of R^m: E‖u‖₄⁴ = 3/(m + 2) (tms.incidental.theory.random_unit_fourth_norm)
    g = np.random.default_rng(0).standard_normal((1, 20000, 16))
    assert stats.encoding_shape(g)[0] == pytest.approx(3 / 18, rel=0.01)
