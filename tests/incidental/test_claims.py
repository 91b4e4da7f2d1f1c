import numpy as np
import pandas as pd
import pytest

from tms.incidental import claims, sparsification
from tms.pipeline import claim_rows


def _trajectory(m=10000, lam=1e-3):
    t = np.concatenate([[0.0], np.geomspace(1e-2, 1 / lam, 30)])
    l1 = sparsification.theory_l1(t, m, lam) * np.linspace(1.0, 1.5, len(t))
    k = np.maximum(np.round(l1 ** 2), 1).astype(int)
    k[-1] = 1
    relvar = np.full(len(t), 0.8)
    return pd.DataFrame({"m": m, "lam": lam, "t": t, "m_prime": k, "l1": l1, "l2sq": 1.0,
                         "relvar": relvar, "relvar_lo": 0.7, "relvar_hi": 0.9,
                         "ideal_lo": 0.7, "ideal_hi": 0.9})


def _euler(first_order=True):
    rows = []
    for dt in (0.5, 0.25, 0.125):
        err = 0.01 * dt if first_order else 0.001
        rows += [[dt, t, 10, 1.0 + err * t / 10, 1.0, 10, 1.0, 1.0] for t in (0.0, 5.0, 10.0)]
    return pd.DataFrame(rows, columns=["dt", "t", "m_prime", "l1", "l2sq", "exact_m_prime",
                                       "exact_l1", "exact_l2sq"])


def test_sparsification_summary_reads_the_tables():
    traj = _trajectory()
    traj.loc[5, "relvar"] = 0.95                               # one time outside the bounds
    s = claims.sparsification_summary(traj, _euler())
    assert s["ratio"][10000] == pytest.approx((1.0 * 1.0 + 0.5 / 30, 1.5), rel=0.02)
    assert s["lam_t_end"][10000] == pytest.approx(1.0)
    n_two = int((traj.m_prime >= 2).sum())
    assert s["inside"][10000] == pytest.approx(1 - 1 / n_two)
    assert s["euler_error"] == pytest.approx({0.5: 0.005, 0.25: 0.0025, 0.125: 0.00125})


def test_noise_summary_final_average_and_random_ratio():
    noise = pd.DataFrame({"instance": [0, 1, 2], "noise": ["bipolar", "bipolar", "normal"],
                          "sigma": [0.1, 0.1, 0.1]})
    fourth = np.array([[0.2, 0.4, 0.6], [0.2, 0.6, 1.0], [0.15, 0.15, 0.15]])
    s = claims.noise_summary(noise, fourth, 4).set_index("noise")
    assert s.loc["bipolar", "final"] == pytest.approx(0.8)
    kept = noise.drop(index=0).reset_index(drop=True)        # instance 0 left out (diverged)
    assert claims.noise_summary(kept, fourth, 4).set_index("noise").loc[
        "bipolar", "final"] == pytest.approx(1.0)
    assert s.loc["bipolar", "average"] == pytest.approx(0.5)
    assert s.loc["normal", "final_vs_random"] == pytest.approx(0.15 / 0.5)


def _inputs(first_order=True, fit=(0.24, 0.2, 0.3), bipolar_final=0.8):
    checks = pd.DataFrame({
        "check": ["collision probability", "interference at init",
                  "random unit vector fourth norm", "E(w·ξ)⁴, bipolar noise",
                  "‖W_i‖₄⁴ coefficient of the next-step loss, bipolar noise",
                  "E(w·ξ)⁴, normal noise",
                  "‖W_i‖₄⁴ coefficient of the next-step loss, normal noise",
                  "interference decay: numerical W_i·W_j / exact solution − 1 (max)",
                  "interference decay: rate −d ln(W_i·W_j)/dt / (‖W_i‖² + ‖W_j‖²) − 1 (max)"],
        "estimate": [0.0316, 0.5, 0.2, 1.0, -0.0032, 1.0, 0.0, 1e-8, 1e-7],
        "se": [1e-4, 1e-3, 1e-3, 1e-3, 0.0, 1e-3, 0.0, 0.0, 0.0],
        "closed_form": [0.03125, 0.5, 0.2, 1.0, -0.0032, 1.0, 0.0, 0.0, 0.0]})
    collisions = pd.DataFrame({"n": 32, "m": [32, 64], "polysemantic": [8, 4],
                               "benign_pairs_init": [8, 4]})
    noise = pd.DataFrame({"instance": [0, 1, 2, 3], "noise": ["bipolar", "normal"] * 2,
                          "sigma": [0.1, 0.1, 0.2, 0.2]})
    fourth = np.array([[0.2, 0.5], [0.17, 0.17], [0.2, bipolar_final], [0.17, 0.16]])
    sweep = pd.DataFrame({"kind": ["baseline", "l1", "l1", "l1", "noise", "noise", "noise"],
                          "lam": [0, 1e-5, 1e-2, 1.0, 0, 0, 0],
                          "sigma": [0, 0, 0, 0, 0.01, 0.1, 0.5],
                          "fourth": [0.16, 0.2, 0.9, 0.4, 0.17, 0.8, 0.1],
                          "l2sq": [1, 1, 1, 0.5, 1, 1, 0.7]})
    stuck = pd.DataFrame({"instance": [1], "feature": [3], "fourth": [0.13], "coords": [7],
                          "owned_by_others": [7], "opposite_sign": [7]})
    c, lo, hi = fit
    return (checks, _trajectory(), _euler(first_order), collisions,
            {"c": c, "lo": lo, "hi": hi}, {"c": 0.24, "lo": 0.2, "hi": 0.3}, noise, fourth, 4,
            sweep, stuck, 4, 0.95)


def test_claims_rows_and_verdicts():
    table = claims.incidental_polysemanticity(*_inputs()).set_index("claim")
    assert list(table.columns) == claim_rows.COLUMNS[1:]
    collision = table.loc["benign collision probability 1/(2m)"]
    assert collision.verdict == "not reproduced"               # 3.5 standard errors off
    fig3 = table.filter(like="polysemantic neurons ≈", axis=0).iloc[0]
    assert fig3.verdict == "reproduced" and "[0.200, 0.300]" in fig3.ours
    euler = table.filter(like="Euler", axis=0).iloc[0]
    assert euler.verdict == "reproduced" and "0.50% (dt 0.5)" in euler.ours
    contrast = table.loc["bipolar noise sparsifies, normal does not (σ = 0.2)"]
    assert contrast.verdict == "reproduced" and "0.800 vs 0.160" in contrast.ours
    assert table.filter(like="stuck", axis=0).verdict.iloc[0] == "reproduced"
    assert (table.filter(like="very large", axis=0).verdict == "reproduced").all()
    assert "0.400 at λ = 1 (peak 0.900)" in table.loc[
        "very large λ: fourth norm drops as ‖W_i‖ shrinks"].ours


def test_claims_fail_when_the_numbers_do():
    table = claims.incidental_polysemanticity(
        *_inputs(first_order=False, fit=(0.19, 0.16, 0.22), bipolar_final=0.3)).set_index("claim")
    assert table.filter(like="polysemantic neurons ≈", axis=0).verdict.iloc[0] == "not reproduced"
    assert table.filter(like="Euler", axis=0).verdict.iloc[0] == "not reproduced"
    assert table.loc["bipolar noise sparsifies, normal does not (σ = 0.2)"].verdict == \
        "not reproduced"


def test_claims_of_experiments_whose_models_all_diverged_read_not_computed():
    (checks, traj, euler, collisions, fit, fit_init, noise, fourth, m, sweep, stuck, _,
     level) = _inputs()
    table = claims.incidental_polysemanticity(
        checks, traj, euler, collisions.iloc[:0], None, None, noise.iloc[:0], fourth, m,
        sweep[sweep.kind != "baseline"], stuck.iloc[:0], 0, level).set_index("claim")
    gone = table[table.verdict == "not computed"]
    assert len(gone) == 2 + 3 + 4 + 1            # fig. 3, fig. 4, fig. 5, fig. 6
    assert gone.ours.str.startswith("not computed: ").all()
    assert "every fig. 6 candidate diverged" in gone.filter(like="stuck", axis=0).ours.iloc[0]
    checks_rows = table[table.ours.str.contains("Monte Carlo|closed form")]   # need no model
    assert len(checks_rows) >= 6 and (checks_rows.verdict != "not computed").all()
    # one noise kind left: its own claims are computed from the rows that remain
    bipolar = noise[noise.noise == "bipolar"].reset_index(drop=True)    # as split leaves it
    partial = claims.incidental_polysemanticity(
        checks, traj, euler, collisions, fit, fit_init, bipolar, fourth, m, sweep, stuck, 4,
        level).set_index("claim")
    faster = partial.loc["the larger σ, the faster bipolar noise sparsifies"]
    assert faster.verdict == "reproduced" and "0.500 (σ 0.2)" in faster.ours    # rows 0 and 2
    assert partial.loc["normal noise: no effect on sparsity (fourth norm stays at a random "
                       "vector's)", "verdict"] == "not computed"
