"""Figs. 4–7, eq. 6 and section 4.3: heat maps (tms.persian_rug.figures) and claims
(tms.persian_rug.claims)."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import LogNorm, Normalize

from tms.persian_rug import claims, figures, scaling


def _stats(factor_by_n_s, seeds=2):
    """Synthetic statistics tables: every statistic = base · factor[n_s] (+ seed jitter)."""
    rows = []
    for n_s, f in factor_by_n_s.items():
        for r in (0.25, 0.5):
            for p in (0.01, 0.1, 0.5):
                for s in range(seeds):
                    v = f * (1 + 10 * p) * (1 + 0.01 * s)
                    rows.append({"model": "relu", "n_s": n_s, "ratio_target": r, "ratio": r,
                                 "p": p, "seed_index": s, "diag_var": v, "bias_var": v,
                                 "dvar_nu": v, "lyapunov": v, "bound_ratio": 1 + v,
                                 "bound_ratio_live": 1 + v, "variance_bound": p,
                                 "var_nu_normalised": p * (1 + v)})
    return pd.DataFrame(rows)


def test_heatmaps_share_one_colour_scale_log_when_spanning_decades():
    t = _stats({64: 1.0, 256: 0.01})
    fig = figures.heatmaps(t, "diag_var", "x")
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 2
    assert all(im.norm is images[0].norm for im in images)
    assert isinstance(images[0].norm, LogNorm)
    cell = images[1].get_array()[0, 0]           # n_s = 256, ratio 0.25, p 0.01: seed mean
    assert cell == pytest.approx(0.01 * 1.1 * 1.005)
    narrow = figures.heatmaps(_stats({64: 1.0, 256: 0.9}), "diag_var", "x")
    norm = [ax.images[0].norm for ax in narrow.axes if ax.images][0]
    assert type(norm) is Normalize


def test_symmetry_claims_follow_the_medians():
    rug = pd.DataFrame({"bound_ratio": [1.0, 1.0 + 1e-12]})
    falling = claims.symmetry(_stats({32: 1.0, 64: 0.5, 128: 0.2}), rug)
    assert (falling.verdict == "reproduced").all()
    assert "100% of 6 cells" in falling.ours.iloc[0]
    rising = claims.symmetry(_stats({32: 0.2, 64: 0.5, 128: 1.0}), rug)
    assert (rising.verdict.iloc[:4] == "not reproduced").all()
    bad_rug = claims.symmetry(_stats({32: 1.0, 64: 0.5}), pd.DataFrame({"bound_ratio": [1.01]}))
    assert bad_rug.verdict.iloc[-1] == "not reproduced"


def test_scaling_claims_on_the_theory_and_a_source_without_points():
    th = scaling.theory_grid([0.001, 0.005, 0.02], np.linspace(0.1, 0.9, 5))
    few = pd.DataFrame({"p": [0.5], "ratio": [0.5], "loss": [0.01]})
    fits = pd.concat([scaling.fit_laws(th, "theory", 0.25, 200, 0),
                      scaling.fit_laws(few, "trained (n_s = 16)", 0.25, 200, 0)])
    rows = claims.scaling(fits, th, 0.25).set_index("claim")
    assert rows.loc["L0(p) ≥ p/3 − p²/9 (loss as ratio → 0)", "verdict"] == "erratum"
    assert rows.loc["C·p²/r < L < O(p²/r · log 1/p) for p/r ≪ 1", "verdict"] == "reproduced"
    beta_prime = rows.loc["L ∝ (n_s/n_d − 1) at fixed p (theory; the exact σ²)"]
    assert beta_prime.verdict == "reproduced"
    assert rows.loc["L ∝ 1/r at fixed p (theory, the paper's form)", "verdict"] == "not reproduced"
    trained = rows.loc["the same law for the trained (n_s = 16)"]
    assert trained.verdict == "not computed" and "0 points in the regime" in trained.ours


def test_medians_by_n_s_take_seed_means_then_the_median_over_the_grid():
    t = _stats({32: 1.0, 128: 0.5})
    t.loc[t.seed_index == 1, "bound_ratio"] = 9.0       # a column outside SYMMETRY
    t = pd.concat([t, t.assign(model="linear", diag_var=1e6)])   # linear rows are left out
    med = claims.medians_by_n_s(t, ["diag_var", "bound_ratio"])
    assert list(med.columns) == ["diag_var", "bound_ratio"] and list(med.index) == [32, 128]
    # six cells (2 ratios × 3 p), seed mean f·(1 + 10p)·1.005: the median of p ∈ {0.01, 0.1,
    # 0.5} twice is the mean of the two middle values, both at p = 0.1
    assert med.loc[128, "diag_var"] == pytest.approx(0.5 * 2 * 1.005)
    assert med.loc[32, "bound_ratio"] == pytest.approx((1 + 2 * 1.0 + 9.0) / 2)
    assert list(claims.medians_by_n_s(t).columns) == list(claims.SYMMETRY)
    with pytest.raises(KeyError):
        claims.medians_by_n_s(t, ["no_such_statistic"])


def test_claims_of_models_that_all_diverged_read_not_computed():
    stats = pd.DataFrame(columns=["model", "n_s", "p", "ratio_target", "seed_index",
                                  *claims.SYMMETRY, "bound_ratio"])
    rug = pd.DataFrame({"bound_ratio": [1.0, 1.0]})
    sym = claims.symmetry(stats, rug)
    assert (sym.verdict.iloc[:5] == "not computed").all()
    assert sym.ours.iloc[0] == "not computed: every trained model diverged"
    assert sym.verdict.iloc[5] == "reproduced"                  # the rug's own claim stands
    fig3 = pd.DataFrame({"diverged": [True], "diag_mean": [np.nan]})
    gap = claims.rug_vs_theory(pd.DataFrame({"n_s": [64], "n_d": [16], "ratio": [0.25],
                                             "p": [0.5], "loss": [0.05]}))
    rows = claims.persian_rug(fig3, gap)
    assert rows.verdict.iloc[:3].tolist() == ["not computed"] * 3
    assert rows.verdict.iloc[4:].tolist() == ["erratum", "erratum"]
