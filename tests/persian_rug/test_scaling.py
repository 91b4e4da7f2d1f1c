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
    """log_factor_shift against a second method: the bootstrap fit of L and of L·log(scale)
    on the same points (exact without noise), for each law and term; the larger of the two
    factors sets it, on the points fit_laws fits (law_points)."""
    t = _synthetic(lambda p, r: 0.3 * p ** 2 * (1 / r - 1), noise=0.0)
    t = pd.concat([t, t.assign(ratio=t.ratio / 10)], ignore_index=True)   # r ≤ 0.05 too
    for law, terms in (("p, r", ("p", "r")), ("p, n_s/n_d − 1", ("p", "n_s/n_d − 1"))):
        pts = scaling.law_points(t, law, 0.25, small_r=0.05)
        plain = scaling.fit_laws(t, "s", 0.25, 10, 0, 0.05).set_index(["law", "term"])
        assert len(pts) == plain.loc[(law, "p")].points
        moved = {name: scaling.fit_laws(t.assign(loss=t.loss * np.log(f(t.p, t.ratio))), "s",
                                        0.25, 10, 0, 0.05).set_index(["law", "term"])
                 for name, f in scaling.LOG_FACTORS.items()}
        for term in terms:
            shift = {name: abs(m.loc[(law, term)].estimate - plain.loc[(law, term)].estimate)
                     for name, m in moved.items()}
            tol, factor = scaling.log_factor_shift(pts, law, term)
            assert tol == pytest.approx(max(shift.values()), rel=1e-9)
            assert factor == max(shift, key=shift.get)
            assert tol > 0.05                     # a log factor is not negligible on these
    with pytest.raises(ValueError, match="too few"):
        scaling.log_factor_shift(t.iloc[:3], "p, r", "r")
