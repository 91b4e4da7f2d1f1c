import numpy as np
import pytest

from tms.persian_rug import paired, theory


def _x(rng, p, n):
    return (rng.random(n) < p) * rng.random(n)


def test_a_pair_read_out_as_it_is_loses_only_when_both_are_on():
    for p in (0.05, 0.3, 1.0):
        assert paired.pair_loss(1.0, 0.0, p) == pytest.approx(p * p / 6, rel=1e-12)


@pytest.mark.parametrize("a, b, p", [(0.8, -0.1, 0.2), (1.3, 0.2, 0.5), (0.5, 0.05, 0.05)])
def test_the_pair_loss_is_its_monte_carlo_expectation(a, b, p):
    rng, n = np.random.default_rng(1), 2_000_000
    xi, xj = _x(rng, p, n), _x(rng, p, n)
    err = (xi - np.maximum(a * (xi - xj) + b, 0.0)) ** 2
    assert abs(paired.pair_loss(a, b, p) - err.mean()) < 4 * err.std() / np.sqrt(n)


def test_the_optimal_pair_is_a_minimum_below_the_plain_read_out():
    for p in (0.01, 0.2, 0.6):
        best = paired.optimal_pair(p)
        assert best["loss"] <= p * p / 6
        for da, db in [(1e-3, 0), (-1e-3, 0), (0, 1e-4), (0, -1e-4)]:
            assert paired.pair_loss(best["a"] + da, best["b"] + db, p) >= best["loss"] - 1e-15


@pytest.mark.parametrize("n_s, n_d, p", [(40, 12, 0.2), (40, 28, 0.1), (30, 15, 0.4)])
def test_the_construction_built_as_a_model_has_the_construction_loss(n_s, n_d, p):
    """Its weights through the paper's model ReLU(W_out W_in x + b), by Monte Carlo."""
    W_in, W_out, b = paired.construction_weights(n_s, n_d, p)
    rng, n = np.random.default_rng(2), 200_000
    x = (rng.random((n, n_s)) < p) * rng.random((n, n_s))
    err = ((np.maximum(x @ W_in.T @ W_out.T + b, 0.0) - x) ** 2).mean(1)   # per vector
    expect = paired.construction_loss(p, n_d / n_s)
    assert abs(expect - err.mean()) < 4 * err.std() / np.sqrt(n)
    assert np.linalg.matrix_rank(W_out @ W_in) <= n_d


def test_the_construction_has_no_n_s_and_its_limits():
    p = 0.2
    assert paired.construction_loss(p, 1.0) == 0.0
    assert paired.construction_loss(p, 1e-9) == pytest.approx(float(theory.var_x(p)), rel=1e-6)
    pair = paired.optimal_pair(p)["loss"]
    assert paired.construction_loss(p, 0.5) == pytest.approx(pair)
    assert paired.construction_loss(p, 0.25) == pytest.approx(0.5 * pair + 0.5 * theory.var_x(p))
    with pytest.raises(ValueError, match="ratio must lie in"):
        paired.construction_loss(p, 0.0)
    with pytest.raises(ValueError, match="n_d <= n_s"):
        paired.construction_weights(4, 5, p)


def test_the_construction_table_holds_every_point():
    table = paired.construction_table([0.1, 0.4], [0.2, 0.5, 0.9])
    assert len(table) == 6 and table.p.tolist() == [0.1] * 3 + [0.4] * 3
    assert table.paired.tolist() == pytest.approx([0.4, 1.0, 0.2] * 2)
    assert (table.loss_pair <= table.p ** 2 / 6).all()
