"""Scaling-law fits of section 4.3 (tms.persian_rug.scaling) on synthetic and theory losses."""

import numpy as np
import pandas as pd
import pytest

from tms.persian_rug import scaling


def _synthetic(law, noise=0.03, seed=0):
    rng = np.random.default_rng(seed)
    p, r = np.meshgrid([0.001, 0.002, 0.005, 0.01, 0.02], np.linspace(0.1, 0.9, 9))
    p, r = p.ravel(), r.ravel()
    return pd.DataFrame({"p": p, "ratio": r,
                         "loss": law(p, r) * np.exp(rng.normal(0, noise, p.size))})


def test_fit_recovers_the_exact_sigma_law_and_shows_the_one_minus_r_factor():
    t = _synthetic(lambda p, r: 0.3 * p ** 2 * (1 / r - 1))
    fit = scaling.fit_laws(t, "synthetic", 0.25, 500, 0).set_index(["law", "term"])
    exact = fit.loc[("p, n_s/n_d − 1", "n_s/n_d − 1")]
    assert exact.low <= 1.0 <= exact.high and abs(exact.estimate - 1) < 0.05
    assert fit.loc[("p, n_s/n_d − 1", "p")].estimate == pytest.approx(2, abs=0.05)
    # the paper's form fitted to the same data: β is steeper than −1 by the (1 − r) factor
    assert fit.loc[("p, r", "r")].high < -1.2
    assert set(fit.paper.dropna()) == {2.0, -1.0, 1.0}


def test_regime_selects_small_p_over_r_and_too_few_points_give_no_fit():
    t = pd.DataFrame({"p": [0.01, 0.1, 0.2, 0.01], "ratio": [0.5, 0.2, 0.9, 1.0],
                      "loss": [1e-4, 1e-3, 1e-3, 1e-5]})
    assert scaling.in_regime(t, 0.25).tolist() == [True, False, True, False]
    fit = scaling.fit_laws(t, "few", 0.25, 100, 0)
    assert fit.estimate.isna().all() and (fit.points == 2).all()


def test_theory_exponent_beta_prime_is_within_0_1_of_one():
    th = scaling.theory_grid([0.001, 0.005, 0.02, 0.1], np.linspace(0.05, 0.95, 10))
    assert np.all((th.lower <= th.loss) & (th.loss <= th.upper))
    fit = scaling.fit_laws(th, "theory", 0.25, 200, 0).set_index(["law", "term"])
    assert abs(fit.loc[("p, n_s/n_d − 1", "n_s/n_d − 1")].estimate - 1) <= 0.1


def test_the_papers_form_fitted_at_small_r_only_recovers_minus_one():
    """p²(1/r − 1) is p²/r for r ≪ 1: restricted to r ≤ 0.05 the paper's form gives β within
    0.1 of −1 where the full range up to r = 0.9 does not; the exact law keeps every point."""
    rng = np.random.default_rng(1)
    p, r = np.meshgrid([0.0005, 0.001, 0.002], np.linspace(0.01, 0.9, 90))
    t = pd.DataFrame({"p": p.ravel(), "ratio": r.ravel()})
    t["loss"] = 0.3 * t.p ** 2 * (1 / t.ratio - 1) * np.exp(rng.normal(0, 0.01, len(t)))
    full = scaling.fit_laws(t, "s", 0.25, 200, 0).set_index(["law", "term"])
    small = scaling.fit_laws(t, "s", 0.25, 200, 0, small_r=0.05).set_index(["law", "term"])
    assert full.loc[("p, r", "r")].estimate < -1.5
    assert abs(small.loc[("p, r", "r")].estimate + 1) <= 0.1
    assert small.loc[("p, r", "r")].points < full.loc[("p, r", "r")].points
    assert small.loc[("p, n_s/n_d − 1", "p")].points == full.loc[("p, n_s/n_d − 1", "p")].points


def test_one_logarithmic_factor_moves_the_fitted_exponent_by_its_shift():
    """log_factor_shift against a second method, for each law and term: the estimates of
    fit_laws for L and for L·log(scale) on the same points (the fit is linear in log L, so
    their difference is the shift, whatever L is); the larger of the two factors sets it."""
    t = _synthetic(lambda p, r: 0.3 * p ** 2 * (1 / r - 1))
    t = pd.concat([t, t.assign(ratio=t.ratio / 10)], ignore_index=True)   # r ≤ 0.05 too
    plain = scaling.fit_laws(t, "s", 0.25, 10, 0, 0.05).set_index(["law", "term"])
    moved = {name: scaling.fit_laws(t.assign(loss=t.loss * np.log(f(t.p, t.ratio))), "s",
                                    0.25, 10, 0, 0.05).set_index(["law", "term"])
             for name, f in scaling.LOG_FACTORS.items()}
    for law, terms in (("p, r", ("p", "r")), ("p, n_s/n_d − 1", ("p", "n_s/n_d − 1"))):
        pts = scaling.law_points(t, law, 0.25, small_r=0.05)
        for term in terms:
            shift = {name: abs(m.loc[(law, term)].estimate - plain.loc[(law, term)].estimate)
                     for name, m in moved.items()}
            tol, factor = scaling.log_factor_shift(pts, law, term)
            assert tol == pytest.approx(max(shift.values()), rel=1e-9)
            assert factor == max(shift, key=shift.get)
            assert tol > 0.05                     # a log factor is not negligible on these


def test_the_shift_of_a_log_factor_by_hand():
    """Four points where the normal equations solve by hand: p = 1/e², 1/e⁴ at r = 0.5 and
    0.25, the law p, r. log log(1/p) = log 2 and log 4 against log p = −2 and −4, whatever r:
    the p exponent moves by (log 4 − log 2)/(−4 + 2) = −log(2)/2 and the r exponent not at all;
    log log(r/p) moves both, and whichever moves p's more sets p's tolerance."""
    p = np.array([np.exp(-2), np.exp(-4)] * 2)
    r = np.array([0.5, 0.5, 0.25, 0.25])
    pts = pd.DataFrame({"p": p, "ratio": r, "loss": 1.0})
    X = np.column_stack([np.log(p), np.log(r), np.ones(4)])
    normal = lambda y: np.linalg.solve(X.T @ X, X.T @ y)         # noqa: E731
    by_hand = {"log(1/p)": normal(np.log(np.log(1 / p))), "log(r/p)": normal(np.log(np.log(r / p)))}
    assert by_hand["log(1/p)"][0] == pytest.approx(-np.log(2) / 2)
    assert by_hand["log(1/p)"][1] == pytest.approx(0, abs=1e-12)
    for k, term in enumerate(("p", "r")):
        tol, factor = scaling.log_factor_shift(pts, "p, r", term)
        top = max(by_hand, key=lambda f: abs(by_hand[f][k]))
        assert (tol, factor) == (pytest.approx(abs(by_hand[top][k])), top)


def test_a_log_factor_needs_its_scale_above_one_and_enough_points():
    pts = pd.DataFrame({"p": [0.01, 0.02, 0.05, 0.5], "ratio": [0.1, 0.2, 0.5, 0.5]})
    with pytest.raises(ValueError, match="log\\(r/p\\) needs its scale > 1 .*max_p_over_r"):
        scaling.log_factor_shift(pts, "p, r", "r")                # p = r at the last point
    with pytest.raises(ValueError, match="too few"):
        scaling.log_factor_shift(pts.iloc[:3], "p, r", "r")
    with pytest.raises(KeyError):
        scaling.log_factor_shift(pts.iloc[:3], "p, q", "r")


def test_trained_means_leave_out_diverged_and_linear_models_and_average_seeds():
    t = pd.DataFrame({"model": ["relu", "relu", "relu", "linear", "relu"],
                      "n_s": 64, "n_d": 16, "ratio": 0.25, "p": [0.01, 0.01, 0.01, 0.01, 0.02],
                      "seed_index": [0, 1, 2, 0, 0], "diverged": [False, False, True, False, False],
                      "loss": [1.0, 3.0, 100.0, 50.0, 7.0]})
    means = scaling.trained_means(t).set_index("p")
    assert means.loss.to_dict() == {0.01: 2.0, 0.02: 7.0}      # seeds 0 and 1; not 2, not linear
    assert means.seeds.to_dict() == {0.01: 2, 0.02: 1}
