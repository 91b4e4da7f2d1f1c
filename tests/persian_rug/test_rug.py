"""Tests of the Persian rug model (Persian Rug paper, section 4.2.2, fig. 1, fig. 2, eq. 6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.optimize
import torch

from tms.engine.sampler import heldout_uniform, sparse_from_uniform
from tms.persian_rug.readout import fit_scale_bias
from tms.persian_rug.rug import (
    RugSamples,
    choose_rows,
    fwht,
    hadamard,
    rug_apply,
    rug_losses,
    rug_matrix,
    rug_weights,
)


def _popcount(v: np.ndarray) -> np.ndarray:
    return np.array([bin(int(t)).count("1") for t in v.ravel()]).reshape(v.shape)


def _relu_loss(z, x, a, b):
    return float(np.mean((x - np.maximum(a * (z + b), 0.0)) ** 2))


# ------------------------------------------------------------------------------ Hadamard


@pytest.mark.parametrize("n_s", [1, 2, 16, 64])
def test_hadamard_is_popcount_of_and(n_s):
    i = np.arange(n_s)
    expected = (-1) ** _popcount(i[:, None] & i[None, :])
    h = hadamard(n_s)
    np.testing.assert_array_equal(h, expected)
    np.testing.assert_array_equal(h @ h, n_s * np.eye(n_s, dtype=h.dtype))


@pytest.mark.parametrize("n_s", [16, 64])
def test_xor_literal_definition_is_rank_one(n_s):
    """The paper's parity(bin(i) XOR bin(j)) is rank 1 (erratum); the AND matrix is full rank."""
    i = np.arange(n_s)
    h_xor = ((-1) ** _popcount(i[:, None] ^ i[None, :])).astype(float)
    assert np.linalg.matrix_rank(h_xor) == 1
    assert np.linalg.matrix_rank(hadamard(n_s).astype(float)) == n_s


@pytest.mark.parametrize("bad", [0, 3, 12, 96, -4])
def test_hadamard_rejects_non_powers_of_two(bad):
    with pytest.raises(ValueError, match=str(bad)):
        hadamard(bad)


def test_hadamard_rejects_non_integers():
    with pytest.raises(ValueError):
        hadamard(16.0)


# ------------------------------------------------------------------------------ rows, W


def test_choose_rows():
    rows = choose_rows(256, 40, seed=3)
    assert rows.shape == (40,)
    assert np.all(np.diff(rows) > 0)
    assert rows.min() >= 0 and rows.max() < 256
    np.testing.assert_array_equal(rows, choose_rows(256, 40, seed=3))
    assert not np.array_equal(rows, choose_rows(256, 40, seed=4))
    np.testing.assert_array_equal(choose_rows(16, 16, seed=0), np.arange(16))
    for bad in (0, 257, -1):
        with pytest.raises(ValueError):
            choose_rows(256, bad, seed=0)


@pytest.mark.parametrize("n_s,n_d", [(16, 1), (16, 5), (64, 20), (256, 40), (256, 256)])
def test_rug_matrix_properties(n_s, n_d):
    rows = choose_rows(n_s, n_d, seed=n_d)
    w_in, w_out = rug_weights(n_s, rows)
    assert w_in.shape == (n_d, n_s) and w_out.shape == (n_s, n_d)
    np.testing.assert_array_equal(w_out, w_in.T / n_d)
    w = rug_matrix(n_s, rows)
    assert w.shape == (n_s, n_s)
    np.testing.assert_allclose(np.diag(w), 1.0, atol=1e-12)
    np.testing.assert_allclose(w, w.T, atol=1e-12)
    assert np.linalg.matrix_rank(w) == n_d
    np.testing.assert_allclose(w @ w, (n_s / n_d) * w, atol=1e-10)
    off = (w ** 2).sum(axis=1) - np.diag(w) ** 2
    np.testing.assert_allclose(off, n_s / n_d - 1.0, atol=1e-10)   # equality in eq. 6


def test_rug_weights_rejects_bad_rows():
    with pytest.raises(ValueError):
        rug_weights(16, [1, 1, 2])
    with pytest.raises(ValueError):
        rug_weights(16, [0, 16])
    with pytest.raises(ValueError):
        rug_weights(16, [])
    with pytest.raises(ValueError):
        rug_weights(12, [0, 1])


# ------------------------------------------------------------------------------ transforms


@pytest.mark.parametrize("n_s", [1, 2, 8, 256, 512])
def test_fwht_equals_dense_product(n_s):
    g = torch.Generator().manual_seed(n_s)
    x = torch.randn(3, 4, n_s, generator=g, dtype=torch.float64)
    h = torch.as_tensor(hadamard(n_s), dtype=torch.float64)
    y = fwht(x)
    assert y.shape == x.shape and y.dtype == torch.float64
    torch.testing.assert_close(y, x @ h, atol=1e-10, rtol=1e-12)
    torch.testing.assert_close(fwht(y), n_s * x, atol=1e-9, rtol=1e-12)
    y32 = fwht(x.float())
    assert y32.dtype == torch.float32
    torch.testing.assert_close(y32.double(), x @ h, atol=1e-3 * np.sqrt(n_s), rtol=1e-4)


def test_fwht_errors():
    with pytest.raises(ValueError):
        fwht(torch.zeros(2, 12))
    with pytest.raises(TypeError):
        fwht(torch.zeros(2, 8, dtype=torch.int64))


@pytest.mark.parametrize("n_s,n_d", [(2, 1), (8, 3), (256, 40), (512, 130), (512, 512)])
def test_rug_apply_equals_dense_product(n_s, n_d):
    rows = choose_rows(n_s, n_d, seed=7)
    w = torch.as_tensor(rug_matrix(n_s, rows))
    g = torch.Generator().manual_seed(1)
    x = torch.rand(2, 5, n_s, generator=g, dtype=torch.float64)
    z = rug_apply(x, rows)
    assert z.shape == x.shape
    torch.testing.assert_close(z, x @ w.T, atol=1e-12, rtol=1e-12)


# ------------------------------------------------------------------------------ fitting


@pytest.mark.parametrize("n", [20_000, 300_000])          # exact scan / subsample + window
@pytest.mark.parametrize("a,b", [(1.3, -0.4), (0.7, 1.5), (2.0, -2.5)])
def test_fit_recovers_known_scale_and_bias(n, a, b):
    rng = np.random.default_rng(int(10 * a) + n)
    z = 1.5 * rng.standard_normal(n) + 0.2
    x = np.maximum(a * (z + b), 0.0) + 0.01 * rng.standard_normal(n)
    a_hat, b_hat = fit_scale_bias(z, x)
    assert a_hat == pytest.approx(a, rel=5e-3)
    assert b_hat == pytest.approx(b, abs=5e-3)
    a_t, b_t = fit_scale_bias(torch.as_tensor(z), torch.as_tensor(x))   # torch input
    assert (a_t, b_t) == (a_hat, b_hat)


@pytest.mark.parametrize("n", [5_000, 200_000])
def test_fit_is_global_optimum(n):
    """Rug-like pairs: no grid point and no local optimiser run beats the fitted (a, b)."""
    rng = np.random.default_rng(n)
    p = 0.1
    x = np.where(rng.random(n) < p, rng.random(n), 0.0)
    z = x + 0.3 * rng.standard_normal(n) + 0.05
    a_hat, b_hat = fit_scale_bias(z, x)
    best = _relu_loss(z, x, a_hat, b_hat)
    assert best < p / 3 * 0.9          # better than the zero output
    grid_a = np.linspace(0.05, 3.0, 60)
    grid_b = np.linspace(-1.5, 1.0, 60)
    grid = min(_relu_loss(z, x, ga, gb) for ga in grid_a for gb in grid_b)
    assert best <= grid + 1e-12
    for start in [(1.0, 0.0), (0.5, -0.5), (2.0, -1.0), (1.0, 0.5)]:
        res = scipy.optimize.minimize(lambda t: _relu_loss(z, x, t[0], t[1]), start,
                                      method="Nelder-Mead",
                                      options={"xatol": 1e-9, "fatol": 1e-14, "maxiter": 4000})
        assert best <= res.fun + 1e-12


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_fit_window_search_matches_full_scan(seed, monkeypatch):
    """A tiny, noisy locating subsample forces window widening; the answer must not move."""
    import tms.persian_rug.readout

    rng = np.random.default_rng(seed)
    n, p = 60_000, 0.02
    x = np.where(rng.random(n) < p, rng.random(n), 0.0)
    z = x + 0.3 * rng.standard_normal(n) - 0.1
    monkeypatch.setattr(tms.persian_rug.readout, "_SCAN_MAX", 1 << 20)  # exact scan of all pairs
    exact = fit_scale_bias(z, x)
    monkeypatch.setattr(tms.persian_rug.readout, "_SCAN_MAX", 128)      # ~3 signal pairs to locate with
    windowed = fit_scale_bias(z, x)
    assert _relu_loss(z, x, *windowed) == pytest.approx(_relu_loss(z, x, *exact), rel=1e-12)
    assert windowed == pytest.approx(exact, rel=1e-9, abs=1e-12)


def test_fit_start_is_never_worse_and_zero_fallback():
    rng = np.random.default_rng(0)
    z = rng.standard_normal(1000)
    x = np.maximum(z - 0.5, 0.0)
    a_hat, b_hat = fit_scale_bias(z, x, start=(1.0, -0.5))
    assert _relu_loss(z, x, a_hat, b_hat) <= _relu_loss(z, x, 1.0, -0.5) + 1e-15
    assert fit_scale_bias(z, x, start=(0.1, 3.0)) == fit_scale_bias(z, x)   # bad start unused
    assert fit_scale_bias(z, np.zeros_like(z)) == (0.0, 0.0)


def test_fit_rejects_bad_input():
    with pytest.raises(ValueError):
        fit_scale_bias(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError):
        fit_scale_bias(np.zeros(0), np.zeros(0))
    with pytest.raises(ValueError):
        fit_scale_bias(np.array([0.0, np.nan]), np.zeros(2))
    with pytest.raises(ValueError):
        fit_scale_bias(np.zeros((2, 2)), np.zeros((2, 2)))


# ------------------------------------------------------------------------------ rug losses

_ARGS = dict(n_s=256, n_ds=[16, 64, 128], ps=[0.05, 0.2], seed=0,
             samples=RugSamples(fit_seed=1, n_fit=512, eval_seed=2, n_eval=4096))


@pytest.fixture(scope="module")
def frame():
    return rug_losses(**_ARGS)


def test_rug_losses_deterministic(frame):
    again = rug_losses(**_ARGS)
    pd.testing.assert_frame_equal(frame, again, check_exact=True)


def test_rug_losses_sane(frame):
    assert list(frame.columns) == ["n_s", "n_d", "ratio", "p", "a", "b", "loss"]
    assert len(frame) == 6
    np.testing.assert_allclose(frame["ratio"], frame["n_d"] / 256)
    assert (frame["a"] > 0).all()
    for p, grp in frame.groupby("p"):
        losses = grp.sort_values("n_d")["loss"].to_numpy()
        assert np.all(np.diff(losses) < 0), (p, losses)      # more dims, less loss
        assert np.all(losses > 0)
        assert np.all(losses <= p / 3)                       # the zero output's loss


def test_rug_losses_match_dense_computation(frame):
    """Row rule S = choose_rows(n_s, n_d, seed + n_d) and the loss, checked densely."""
    n_s, n_d, p = 256, 64, 0.2
    row = frame[(frame["n_d"] == n_d) & (frame["p"] == p)].iloc[0]
    w = torch.as_tensor(rug_matrix(n_s, choose_rows(n_s, n_d, _ARGS["seed"] + n_d)))
    total = 0.0
    for v in heldout_uniform(_ARGS["samples"].eval_seed, _ARGS["samples"].n_eval, n_s):
        x = sparse_from_uniform(v, torch.tensor([p]))[0].double()
        out = torch.relu(row["a"] * (x @ w.T + row["b"]))
        total += float(((x - out) ** 2).sum())
    assert row["loss"] == pytest.approx(total / (_ARGS["samples"].n_eval * n_s), rel=1e-5)


def test_rug_losses_rejects_bad_arguments():
    base = dict(_ARGS, samples=RugSamples(fit_seed=1, n_fit=8, eval_seed=2, n_eval=8))
    with pytest.raises(ValueError):
        rug_losses(**dict(base, ps=[0.0]))
    with pytest.raises(ValueError):
        rug_losses(**dict(base, n_ds=[257]))
    with pytest.raises(ValueError):
        rug_losses(**dict(base, n_s=100, n_ds=[10]))
