"""Models of the notes on toy autoencoding trained by the engine (tms.notes.training)."""

import math

import numpy as np
import pytest
import torch

from tms.engine.grid import Schedule
from tms.engine.threads import torch_threads
from tms.notes import data, theory, training


def test_trained_linear_autoencoders_reach_the_pca_projection():
    # Proposition 1 / Corollary 2: loss within 1% of tr Σ − Σ_{i≤d} λ_i, and (distinct
    # eigenvalues) col(A) within 5° of the top-d eigenvectors; on the degenerate data u_1 ∈ col(A)
    D, S = 6, 0.5
    sched = Schedule(batch_size=512, adam_eps=1e-7, window=1000, check_every=50, max_steps=1)
    run = training.Run(seed=0, lr=0.02, sched=sched, eval_seed=5, n_eval=65536)
    t = training.linear_table(D, [1, 2], [S], [20, 600], 0.25, run)
    assert len(t) == 2 * 2 * 2 and list(t.columns) == list(training.LINEAR_COLUMNS)
    assert (t.steps == t.steps_cap).all()
    final = t[t.steps_cap == 600]
    assert final.gap.max() < 0.01 and (final.gap > -1e-12).all()
    assert final[final.spectrum == "scaled"].angle_top_deg.max() < 5
    assert final.angle_u1_deg.max() < 5 and final.commutator.max() < 0.05
    assert t[t.steps_cap == 20].gap.max() > final.gap.max()
    # the minimum is the closed form (D − d)·Var(x)/D on the sparse data
    sparse = final[final.spectrum == "sparse"]
    var = theory.sparse_spectrum(S, D)[1]
    np.testing.assert_allclose(sparse.loss_min, (D - sparse.d) * var / D, rtol=1e-12)
    # the engine's Monte Carlo score agrees with the exact loss of the same weights (2%)
    np.testing.assert_allclose(t.loss_heldout, t.loss, rtol=0.02)
    with pytest.raises(ValueError, match="every d"):
        training.linear_table(D, [6], [S], [10], 0.25, run)


def test_diverged_linear_autoencoders_are_flagged_without_statistics():
    sched = Schedule(batch_size=64, adam_eps=1e-7, window=1000, check_every=5, max_steps=1)
    t = training.linear_table(6, [1, 2], [0.5], [30], 0.25,
                              training.Run(seed=0, lr=1e30, sched=sched, eval_seed=5, n_eval=65536))
    assert t.diverged.all() and (t.steps < 30).all()
    assert t[["loss", "gap", "angle_top_deg", "commutator"]].isna().all().all()


def test_relu_tables_split_the_loss_consistently():
    D, d, S_values = 6, 2, [0.5, 0.9]
    sched = Schedule(batch_size=256, adam_eps=1e-7, window=20, check_every=10, max_steps=200)
    run = training.Run(seed=0, lr=0.02, sched=sched, eval_seed=3, n_eval=65536)
    table, strata = training.relu_tables(D, d, S_values, 1, run, 2000, 4)
    assert list(table.columns) == list(training.RELU_COLUMNS) and len(table) == 2
    assert len(strata) == 2 * (D + 1)
    for (S, r), (_, s) in zip(table.groupby("S"), strata.groupby("S")):
        assert s.contribution.sum() == pytest.approx(1.0, abs=1e-12)
        assert r.share_ge2.iloc[0] == pytest.approx(s[s.l >= 2].contribution.sum(), abs=1e-12)
        np.testing.assert_allclose(s.mu, data.skeleton_mass(S, D), rtol=1e-12)
        assert r.mass_ge2.iloc[0] == pytest.approx(data.mass_ge2(S, D))
    # strata loss against the engine's held-out loss (plain Monte Carlo, 65536 vectors, whose
    # per-vector variance Σ_l μ_l(sd_l² + m_l²) − loss² comes from the strata), 4 errors each
    for S, r in table.groupby("S"):
        s = strata[strata.S == S]
        total = float((s.mu * s.m).sum())
        var = float((s.mu * (s.se**2 * 2000 + s.m**2)).sum()) - total**2
        se_held = math.sqrt(var / 65536) / D
        assert total / D == pytest.approx(r.loss.iloc[0], rel=1e-12)
        assert abs(r.loss.iloc[0] - r.loss_heldout.iloc[0]) <= 4 * (
            r.loss_ci.iloc[0] / data.Z95 + se_held)
    with pytest.raises(ValueError, match="d < D"):
        training.relu_tables(D, D, S_values, 1, run, 100, 4)


def test_single_thread_restores_the_thread_count():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with torch_threads(1):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
