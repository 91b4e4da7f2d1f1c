import numpy as np
import pandas as pd
import pytest

from tms.persian_rug import cells, fits, rug, stats


def test_statistics_by_hand_on_a_small_matrix():
    # W = W_out W_in = [[2, 1, 0], [1, 2, -2], [0, 1, 1]] with n_d = 3 (full rank)
    W = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, -2.0], [0.0, 1.0, 1.0]])
    s = stats.weight_statistics(np.eye(3), W, np.array([-0.1, -0.3, -0.2]), p=0.5)
    var_x = (4 * 0.5 - 3 * 0.25) / 12
    off2 = np.array([1.0, 5.0, 1.0])              # Σ_{j≠i} W_ij²
    off3 = np.array([1.0, 9.0, 1.0])              # Σ_{j≠i} |W_ij|³
    assert s["diag_var"] == pytest.approx(np.var([2, 2, 1]))
    assert s["bias_var"] == pytest.approx(np.var([-0.1, -0.3, -0.2]))
    assert s["dvar_nu"] == pytest.approx(np.var(var_x * off2))
    assert s["mean_var_nu"] == pytest.approx(np.mean(var_x * off2))
    assert s["dvar_nu_authors"] == pytest.approx(np.var(var_x * (off2 + [4, 4, 1])))
    assert s["lyapunov"] == pytest.approx(max(off3 / off2 ** 1.5))
    assert s["lyapunov_authors"] == pytest.approx(max(off3 / off2))
    assert s["var_nu_normalised"] == pytest.approx(np.mean(var_x * off2 / np.array([4, 4, 1])))


def test_lyapunov_of_gaussian_rows_falls_like_inverse_sqrt_n():
    rng = np.random.default_rng(0)
    values = []
    for n in (64, 256, 1024, 4096):
        g = rng.normal(size=(1, n))
        W_out = np.zeros((n, 1))
        W_out[0, 0] = 1.0                          # W has one non-zero row: g
        g[0, 0] = 0.0
        values.append(stats.weight_statistics(g, W_out, np.zeros(n), 0.1)["lyapunov"])
    slope = np.polyfit(np.log([64, 256, 1024, 4096]), np.log(values), 1)[0]
    assert slope == pytest.approx(-0.5, abs=0.05)
    # E|g|³ / (E g²)^{3/2} = 2·sqrt(2/π)
    assert values[-1] * np.sqrt(4096) == pytest.approx(2 * np.sqrt(2 / np.pi), rel=0.1)


def test_variance_bound_equality_for_the_rug_and_strict_for_random_low_rank():
    for n_s, n_d in ((64, 16), (256, 40)):
        W_in, W_out = rug.rug_weights(n_s, rug.choose_rows(n_s, n_d, 1))
        s = stats.weight_statistics(W_in, W_out, np.zeros(n_s), 0.2)
        assert s["bound_ratio"] == pytest.approx(1.0, abs=1e-9)
    rng = np.random.default_rng(3)
    B = rng.normal(size=(128, 32))
    s = stats.weight_statistics(B.T.copy(), B, np.zeros(128), 0.2)    # W = B Bᵀ, rank 32
    assert s["bound_ratio"] > 1.05
    for seed in range(20):                   # non-symmetric, some diagonals negative: still ≥ 1
        rng = np.random.default_rng(seed)
        W_in, W_out = rng.normal(size=(8, 48)), rng.normal(size=(48, 8))
        assert np.any(np.einsum("ik,ki->i", W_out, W_in) < 0)
        s = stats.weight_statistics(W_in, W_out, np.zeros(48), 0.3)
        assert s["bound_ratio"] >= 1.0


def test_power_law_fit_recovers_known_exponents_with_noise():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.001, 0.05, 200)
    r = rng.uniform(0.05, 0.5, 200)
    y = 0.7 * p ** 2 / r * np.exp(rng.normal(0, 0.05, 200))
    fit = fits.power_law(y, {"p": p, "r": r}, n_boot=500, seed=1).set_index("term")
    for term, truth in (("p", 2.0), ("r", -1.0), ("const", np.log(0.7))):
        row = fit.loc[term]
        assert row.low < truth < row.high
        assert abs(row.estimate - truth) < 0.05
    assert fit.loc["p", "high"] - fit.loc["p", "low"] < 0.1


def test_power_law_rejects_non_positive_values():
    with pytest.raises(ValueError, match="positive"):
        fits.power_law(np.array([1.0, 0.0, 2.0, 3.0]), {"p": np.ones(4)})


def test_over_seeds_gives_mean_and_standard_error_by_hand():
    t = pd.DataFrame({"model": "relu", "n_s": 8, "n_d": [2, 2, 2, 4], "ratio": [.25, .25, .25, .5],
                      "p": 0.1, "seed_index": [0, 1, 2, 0], "loss": [1.0, 2.0, 4.0, 3.0]})
    out = cells.over_seeds(t, ["loss"]).set_index("n_d")
    assert out.loc[2, "loss"] == pytest.approx(7 / 3)
    assert out.loc[2, "loss_se"] == pytest.approx(np.std([1, 2, 4], ddof=1) / np.sqrt(3))
    assert out.loc[2, "seeds"] == 3
    assert np.isnan(out.loc[4, "loss_se"]) and out.loc[4, "seeds"] == 1


def test_with_keys_puts_each_row_of_statistics_beside_its_model():
    trained = pd.DataFrame({c: 0 for c in stats.KEY_COLUMNS}, index=[5, 9])
    trained["instance"], trained["n_d"] = [7, 3], [4, 2]
    rows = [{c: k + 0.5 for c in stats.STAT_COLUMNS} for k in range(2)]
    table = stats.with_keys(trained, rows)
    assert list(table.columns) == stats.KEY_COLUMNS + stats.STAT_COLUMNS
    assert table.instance.tolist() == [7, 3] and table.antipodal.tolist() == [0.5, 1.5]
    with pytest.raises(ValueError, match="2 table rows but 1 rows of statistics"):
        stats.with_keys(trained, rows[:1])


def test_weight_statistics_rejects_bad_input():
    with pytest.raises(ValueError, match="shapes"):
        stats.weight_statistics(np.ones((2, 4)), np.ones((4, 3)), np.zeros(4), 0.1)
    with pytest.raises(ValueError, match="p must be"):
        stats.weight_statistics(np.ones((2, 4)), np.ones((4, 2)), np.zeros(4), 1.5)


def test_random_weights_match_pytorchs_default_initialisation():
    import torch

    W_in, W_out, b = stats.random_weights(256, 64, seed=3)
    assert (W_in.shape, W_out.shape, b.shape) == ((64, 256), (256, 64), (256,))
    assert all(w.dtype == np.float32 for w in (W_in, W_out, b))
    torch.manual_seed(0)
    ref_in = torch.nn.Linear(256, 64, bias=False).weight.detach().numpy()     # (n_d, n_s)
    ref_out = torch.nn.Linear(64, 256).weight.detach().numpy()                # (n_s, n_d)
    for ours, ref in ((W_in, ref_in), (W_out, ref_out)):
        assert np.abs(ours).max() <= np.abs(ref).max() * 1.01
        assert ours.var() == pytest.approx(ref.var(), rel=0.05)     # a²/3, 16k draws each
    again = stats.random_weights(256, 64, seed=3)
    assert all(np.array_equal(x, y) for x, y in zip(again, (W_in, W_out, b)))
    assert not np.array_equal(stats.random_weights(256, 64, seed=4)[0], W_in)


def test_baseline_statistics_are_those_of_the_random_weights_row_by_row():
    trained = pd.DataFrame({"instance": [0, 1], "model": "relu", "n_s": 32, "n_d": [8, 16],
                            "ratio": [0.25, 0.5], "ratio_target": [0.25, 0.5], "p": [0.1, 0.3],
                            "seed_index": 0, "seed": [5, 6], "diverged": False, "loss": 0.0,
                            "diag_mean": 0.0, "bias_mean": 0.0})
    table = stats.baseline_statistics(trained)
    assert list(table.columns) == stats.KEY_COLUMNS + stats.STAT_COLUMNS
    for (_, row), n_d, seed, p in zip(table.iterrows(), (8, 16), (5, 6), (0.1, 0.3)):
        expect = stats.weight_statistics(*stats.random_weights(32, n_d, seed), p)
        assert all(row[c] == pytest.approx(expect[c]) for c in stats.STAT_COLUMNS)


def test_antipodal_share_counts_live_features_with_an_opposite_partner():
    """Features 0 and 1 embedded at cosine −0.95, 2 alone, 3 opposite 2 but dead: of the three
    live features two have a partner; a dead one is no partner. Checked against a direct
    double loop, and blockwise (block 1) the same."""
    u = np.array([1.0, 0.0])
    v = np.array([-0.95, np.sqrt(1 - 0.95 ** 2)])
    W_in = np.stack([u, 2 * v, np.array([0.0, 1.0]), np.array([0.0, -0.01])], axis=1)
    live = np.array([True, True, True, False])
    assert stats.antipodal_share(W_in, live) == pytest.approx(2 / 3)
    assert stats.antipodal_share(W_in, live, block=1) == pytest.approx(2 / 3)
    assert stats.antipodal_share(W_in, np.ones(4, bool)) == pytest.approx(1.0)
    assert np.isnan(stats.antipodal_share(W_in, np.array([True, False, False, False])))
    rng = np.random.default_rng(0)
    W = rng.normal(size=(5, 40))
    U = W / np.linalg.norm(W, axis=0)
    cos = U.T @ U
    direct = np.mean([any(cos[i, j] <= stats.ANTIPODAL_COS for j in range(40) if j != i)
                      for i in range(40)])
    assert stats.antipodal_share(W, np.ones(40, bool), block=7) == pytest.approx(direct)
    assert "antipodal" in stats.weight_statistics(W, W.T, np.zeros(40), 0.1)


def test_lyapunov_of_the_rug_lies_between_equal_terms_and_untrained_weights():
    # a row of m equal-sized terms gives 1/√m, the least Λ (power means); independent terms
    # ≈ 1.6/√m; the rug's structured rows sit a little below untrained weights, not at 1/√m
    n = 257
    signs = np.where(np.random.default_rng(1).random((1, n)) < 0.5, -0.3, 0.3)
    signs[0, 0] = 0.0                              # the diagonal, left out of the row
    W_out = np.zeros((n, 1))
    W_out[0, 0] = 1.0                              # W has one non-zero row: the signs
    equal = stats.weight_statistics(signs, W_out, np.zeros(n), 0.1)["lyapunov"]
    assert equal == pytest.approx(1 / np.sqrt(n - 1))
    for n_s, n_d in ((256, 40), (1024, 128)):
        W_in, W_out = rug.rug_weights(n_s, rug.choose_rows(n_s, n_d, 1))
        rugged = stats.weight_statistics(W_in, W_out, np.zeros(n_s), 0.2)["lyapunov"]
        untrained = stats.weight_statistics(*stats.random_weights(n_s, n_d, 0), 0.2)["lyapunov"]
        assert 1.4 / np.sqrt(n_s - 1) < rugged < untrained < 2 / np.sqrt(n_s - 1)
        assert rugged / untrained == pytest.approx(0.93, abs=0.05)
