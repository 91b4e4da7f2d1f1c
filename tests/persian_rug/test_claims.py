"""Figs. 4–7, eq. 6 and section 4.3: heat maps (tms.persian_rug.figures) and claims
(tms.persian_rug.claims)."""

import functools
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import LogNorm, Normalize

from tms.persian_rug import (
    anatomy_claims,
    bounds,
    claims,
    compare,
    converge,
    evidence,
    figures,
    ladder,
    scaling,
    theory,
)


def _stats(factor_by_n_s, seeds=2):
    """Synthetic statistics tables: every statistic = base · factor[n_s] (+ seed jitter)."""
    rows = []
    for n_s, f in factor_by_n_s.items():
        for r in (0.25, 0.5):
            for p in (0.01, 0.1, 0.5):
                for s in range(seeds):
                    v = f * (1 + 10 * p) * (1 + 0.01 * s)
                    rows.append({"model": "relu", "n_s": n_s, "n_d": int(n_s * r),
                                 "ratio_target": r, "ratio": r,
                                 "p": p, "seed_index": s, "diag_var": v, "bias_var": v,
                                 "dvar_nu": v, "mean_var_nu": 100.0, "lyapunov": v,
                                 "bound_ratio": 1 + v,
                                 "bound_ratio_live": 1 + v, "variance_bound": p,
                                 "var_nu_normalised": p * (1 + v), "antipodal": 0.0})
    return pd.DataFrame(rows)


def test_heatmaps_share_one_colour_scale_log_when_spanning_decades():
    t = _stats({64: 1.0, 256: 0.01})
    fig = figures.heatmaps(t, "diag_var", "x")
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 4                      # values, then their uncertainty (2 seeds)
    values, spread = images[:2], images[2:]
    assert all(im.norm is values[0].norm for im in values)
    assert isinstance(values[0].norm, LogNorm)
    cell = values[1].get_array()[0, 0]           # n_s = 256, ratio 0.25, p 0.01: seed mean
    assert cell == pytest.approx(0.01 * 1.1 * 1.005)
    # seeds differ by 1%: standard error (ddof 1) 0.005·v over the mean 1.005·v
    assert spread[1].get_array()[0, 0] == pytest.approx(0.005 / 1.005)
    assert spread[0].norm is spread[1].norm and type(spread[0].norm) is Normalize
    labels = [t.get_text() for t in fig.axes[1].get_yticklabels()]
    assert labels == ["0.25 ($n_d$ 64)", "0.50 ($n_d$ 128)"]     # the realised n_d of n_s 256
    narrow = figures.heatmaps(_stats({64: 1.0, 256: 0.9}, seeds=1), "diag_var", "x")
    norms = [ax.images[0].norm for ax in narrow.axes if ax.images]
    assert len(norms) == 2 and type(norms[0]) is Normalize      # one seed: no uncertainty row


N_S = (1024, 2048)


def _inputs():
    """Outputs on which each Persian Rug claim has a verdict: the trained models on the theory
    curve, converged, at the paper's n_s; the rug on the theory."""
    stats = _stats({1024: 1.0, 2048: 0.5})
    cells = stats[["p", "ratio"]].drop_duplicates()
    th = {(p, r): theory.optimal_symmetric(p, r)["loss"] for p, r in zip(cells.p, cells.ratio)}
    stats["loss"] = [th[(p, r)] * (1.04 if n == 1024 else 1.01)
                     for p, r, n in zip(stats.p, stats.ratio, stats.n_s)]
    trained = stats[evidence.MODEL_KEYS + ["ratio", "n_d", "loss"]].assign(
        stopped=True, diverged=False, steps=900)
    fig3 = pd.DataFrame({"model": "relu", "n_s": [512], "n_d": [130], "p": [0.044],
                         "ratio_target": 130 / 512, "ratio": 130 / 512, "seed_index": 0,
                         "loss": theory.optimal_symmetric(0.044, 130 / 512)["loss"] * 1.03,
                         "steps": [5000],
                         "stopped": [True], "diverged": [False], "diag_mean": [1.29],
                         "diag_std": [0.01], "diag_live_mean": [1.29], "diag_live_std": [0.01],
                         "dead_fraction": [0.0], "bias_mean": [-0.18], "bias_std": [0.01]})
    rug = pd.DataFrame([(p, r) for r in (0.25, 0.5) for p in (0.01, 0.05, 0.1, 0.2)],
                       columns=["p", "ratio"]).assign(n_s=1024)
    rug["n_d"] = (rug.ratio * rug.n_s).astype(int)
    rug["loss"] = [theory.optimal_symmetric(p, r)["loss"] * 1.01 for p, r in zip(rug.p, rug.ratio)]
    rug["bound_ratio"] = 1.0
    theory_t = pd.DataFrame({"p": [0.1, 0.1], "ratio": [0.25, 0.5]})
    theory_t["loss_linear"] = theory.optimal_linear_loss(theory_t.p, theory_t.ratio)
    th_grid = scaling.theory_grid([0.001, 0.005, 0.02], [0.02, 0.05, *np.linspace(0.1, 0.9, 5)])
    fits = pd.DataFrame(
        [[src, law, term, est, est - 0.01, est + 0.01, None, 30]
         for src in ("theory", "Persian rug (n_s = 1024)", "trained (n_s = 1024)",
                     "trained (n_s = 2048)")
         for law, term, est in (("p, n_s/n_d − 1", "n_s/n_d − 1", 1.02),
                                ("p, n_s/n_d − 1", "p", 1.95), ("p, r", "r", -1.03))],
        columns=scaling.FIT_COLUMNS)
    W = np.eye(64) * 1.29 + np.random.default_rng(0).normal(0, 0.05, (64, 64))   # noise-like
    baseline = _stats({1024: 0.2, 2048: 0.15})          # untrained: smaller, falling slower
    # Λ falls to 2% above untrained weights' (independent terms) at the largest n_s
    stats["lyapunov"] = baseline.lyapunov * np.where(baseline.n_s == 1024, 2.0, 1.02)
    checks = pd.concat([trained, fig3])[["n_s", "p", "steps"]].drop_duplicates(["n_s", "p"])
    checks = checks.assign(long_steps=4 * checks.steps, drop=0.001,   # steady when trained longer
                           source=["grid"] * (len(checks) - 1) + ["fig3"]
                           ).reindex(columns=list(converge.COLUMNS))   # the rest not measured
    # p/r ≤ 0.4: 4 cells of each trained grid in the fits' regime, enough for a fit
    # the fig. 3 model's loss what Gaussian interference of its variances gives, within 1%
    fig3_anatomy = fig3.assign(gauss_loss=fig3.loss * 1.01, theory_loss=fig3.loss / 1.03,
                               negative_energy=0.05)
    o = evidence.Outputs(fig3=fig3, fig3_W=W, theory=theory_t, rug=rug, stats=stats,
                         trained=trained, baseline=baseline, fits=fits, theory_grid=th_grid,
                         fig1_n_s=8, fig2_n_s=128, max_p_over_r=0.4, small_r=0.05,
                         converge=checks, tolerance=0.02, fig3_anatomy=fig3_anatomy)
    # each fit counts the points it was fitted to, as stage pr_scaling writes it
    return replace(o, fits=fits.assign(points=[len(o.fit_points(s, law))
                                               for s, law in zip(fits.source, fits.law)]))


def _rows(i):
    return {r["id"]: r for r in claims.CLAIMS.rows(i)}


def _row(i, cid):
    """The row of claim ``cid`` alone (its check only: the others' cost nothing)."""
    return claims.CLAIMS.row(cid, i)


def _set(i, key, **columns):
    """i with columns of table ``key`` replaced (a callable gets the table)."""
    t = getattr(i, key).copy()
    for col, v in columns.items():
        t[col] = v(t) if callable(v) else v
    return replace(i, **{key: t})


def _n_s_times(i, factor):
    """i with every trained grid (models, statistics, untrained weights, convergence checks)
    moved to ``factor``× its n_s."""
    return replace(i, **{k: getattr(i, k).assign(n_s=lambda t: t.n_s * factor)
                         for k in ("stats", "trained", "baseline", "converge")})


def _fit(i, source, term, estimate):
    f = i.fits.copy()
    f.loc[(f.source == source) & (f.term == term), "estimate"] = estimate
    return replace(i, fits=f)


def _falls_for(column, rising):
    def change(t):
        v = t[column].copy()
        v[t.n_s == 2048] = v[t.n_s == 2048] * (4.0 if rising else 1.0)
        return v
    return change


def _beats(i):
    """i with the p = 0.01 cells at half the theory's loss: trained models beat it there."""
    return _set(i, "stats", loss=lambda t: t.loss * np.where(t.p == 0.01, 0.5, 1.0))


def _below(i, p, n_s):
    """i with the trained models at ``p`` and ``n_s`` at a fifth of their loss: below appendix
    D's bound."""
    return _set(i, "stats", loss=lambda t: t.loss * np.where((t.p == p) & (t.n_s == n_s),
                                                             0.2, 1.0))


def _gap(i, by_n_s):
    """i with trained/theory = 1 + by_n_s[n_s] in every cell."""
    th = {(p, r): theory.optimal_symmetric(p, r)["loss"]
          for p, r in zip(i.stats.p, i.stats.ratio)}
    return _set(i, "stats", loss=lambda t: [th[(p, r)] * (1 + by_n_s[n])
                                            for p, r, n in zip(t.p, t.ratio, t.n_s)])


def test_the_trend_is_judged_on_the_gap_its_line_leaves_at_the_paper_n_s():
    base = _inputs()                   # 4% at n_s 1024, 1% at 2048: crosses 0 before 8192
    row = _row(base, "fig2.trained_trend")
    assert row["verdict"] == "reproduced" and row["value"] == 0.0, row["ours"]
    # a steady gap: 1% at the paper's n_s holds, 3% (1.5× the tolerance) breaks it
    for gap, verdict in ((0.01, "reproduced"), (0.03, "not reproduced")):
        row = _row(_gap(base, {1024: gap, 2048: gap}), "fig2.trained_trend")
        assert row["verdict"] == verdict and row["value"] == pytest.approx(gap, abs=1e-9)
    # closing, but too slowly: 10% → 8% over one doubling reaches 4% at 8192 (two more)
    slow = _row(_gap(base, {1024: 0.10, 2048: 0.08}), "fig2.trained_trend")
    assert slow["verdict"] == "not reproduced" and slow["value"] == pytest.approx(0.04)
    assert "median -0.029" in slow["ours"] and "n_s 8192: median gap 0.040" in slow["ours"]
    # half the cells close, half stay at 5%: the interval spans the tolerance
    th = {(p, r): theory.optimal_symmetric(p, r)["loss"]
          for p, r in zip(base.stats.p, base.stats.ratio)}
    split = _set(base, "stats", loss=lambda t: [
        th[(p, r)] * (1.05 if p == 0.5 or (p == 0.1 and r == 0.5) else 1.0)
        for p, r in zip(t.p, t.ratio)])
    row = _row(split, "fig2.trained_trend")
    assert row["verdict"] == "inconclusive at this scale", row["ours"]
    assert row["direction"] == "fails"                 # the median of 3 cells at 5%, 3 at 0%
    assert row["inconclusive"].startswith("the 95% interval [0.000, 0.050] of the gap at n_s "
                                          "8192 contains 0.02"), row["inconclusive"]


def test_a_trend_needs_cells_converged_at_the_largest_n_s_and_a_smaller_one():
    base = _inputs()
    # no cell converged at n_s 1024 (their checks still fall): none has two n_s
    alone = _set(base, "converge", drop=lambda t: t["drop"].where(t.n_s != 1024, 0.05))
    rows = _rows(alone)
    row = rows["fig2.trained_trend"]
    assert row["verdict"] == "not computed"
    assert "at its largest n_s (2048) and at a smaller" in row["ours"], row["ours"]
    for cid in ("sym.diag_var", "sym.bias_var", "sym.dvar_nu", "sym.lyapunov"):   # no ladder
        assert rows[cid]["ours"] == "not computed: the converged cells are at one n_s: no ladder"
    assert rows["fig2.trained_theory"]["verdict"] == "reproduced"     # a level needs no ladder


def test_the_bound_fails_only_for_a_cell_below_it_inside_the_theorys_regime():
    base = _inputs()
    row = _row(base, "scaling.trained_bound")
    assert row["verdict"] == "reproduced" and row["value"] > 1
    few = _row(_below(base, 0.01, 1024), "scaling.trained_bound")      # p·n_s 10.24: outside
    assert few["verdict"] == "reproduced" and "p·n_s 10.24" in few["ours"], few["ours"]
    assert "Outside the regime 2 of " in few["ours"]
    for many in (_below(base, 0.01, 2048), _below(base, 0.1, 1024)):  # p·n_s 20.48, 102.4
        row = _row(many, "scaling.trained_bound")
        assert row["verdict"] == "not reproduced" and row["value"] < 1
    # the boundary: the lowest in-regime cell put at 0.99× the bound, then at 1.01×
    cells = base.converged_cells[base.converged_cells.in_regime]
    at = cells.loc[(cells.loss / [bounds.lower_bound(p, r) for p, r in
                                 zip(cells.p, cells.ratio)]).idxmin()]
    factor = bounds.lower_bound(at.p, at.ratio) / at.loss
    for times, verdict in ((0.99, "not reproduced"), (1.01, "reproduced")):
        moved = _set(base, "stats", loss=lambda t, f=factor * times: t.loss * np.where(
            (t.n_s == at.n_s) & (t.p == at.p) & (t.ratio == at.ratio), f, 1.0))
        assert _row(moved, "scaling.trained_bound")["verdict"] == verdict


def _antipodal_at_p(i, p=0.01, share=0.8):
    return _set(i, "stats", antipodal=lambda t: np.where(t.p == p, share, 0.0))


#: One perturbation of the inputs per claim that must change its verdict.
PERTURB = {
    "fig1.hadamard_xor": lambda i: replace(i, fig1_n_s=1),     # at n = 1 XOR gives H = [[1]]
    "fig2.linear_optimum": lambda i: _set(
        i, "theory", loss_linear=lambda t: (128 - t.ratio * 128 - 1) * t.p / (3 * 128)),
    "fig2.rug_theory": lambda i: _set(i, "rug", loss=lambda t: t.loss * 1.3),
    "fig2.trained_theory": lambda i: _set(i, "stats", loss=lambda t: t.loss * 1.5),
    "fig2.trained_trend": lambda i: _set(
        i, "stats", loss=lambda t: t.loss * np.where(t.n_s == 2048, 1.06 / 1.01, 1.0)),
    "fig3.diagonal": lambda i: _set(i, "fig3", diag_std=0.25),
    "fig3.diagonal_live": lambda i: _set(i, "fig3", diag_live_mean=1.4),
    "fig3.bias": lambda i: _set(i, "fig3", bias_mean=0.05),
    "fig3.off_diagonal": lambda i: _set(                   # Gaussianised 3% above: a caveat
        i, "fig3_anatomy", gauss_loss=lambda t: t.loss * 1.03),
    **{f"sym.{col}": (lambda c: lambda i: _set(i, "stats", **{c: _falls_for(c, True)}))(col)
       for col in compare.SYMMETRY},
    "sym.identical_variances": lambda i: _n_s_times(i, 4),          # at 4096 and 8192
    "sym.variance_bound": lambda i: _set(i, "stats", bound_ratio=0.9),
    "sym.rug_attains_bound": lambda i: _set(i, "rug", bound_ratio=1.01),
    "finding.faster_than_untrained": lambda i: replace(        # untrained falling 3×: −1.58
        i, baseline=_stats({1024: 0.3, 2048: 0.1})),
    "scaling.initial_loss": lambda i: _set(i, "theory_grid", L0=lambda t: t.p),
    "scaling.bounds_ordered": lambda i: _set(i, "theory_grid", lower=lambda t: t.loss * 2),
    "scaling.constant_factor": lambda i: _set(                     # grows as log(1/p)^2.7
        i, "theory_grid", lower=lambda t: t.lower / np.log(1 / t.p) ** 2),
    "scaling.trained_bound": lambda i: _below(i, 0.1, 2048),
    "scaling.beta_prime": lambda i: _fit(i, "theory", "n_s/n_d − 1", 1.3),
    "scaling.beta": lambda i: _fit(i, "theory", "r", -2.0),
    "scaling.alpha": lambda i: _fit(i, "theory", "p", 1.5),
    "scaling.rug": lambda i: _fit(i, "Persian rug (n_s = 1024)", "n_s/n_d − 1", 1.5),
    "scaling.trained": lambda i: _fit(i, "trained (n_s = 2048)", "n_s/n_d − 1", 1.5),
    "finding.beats_theory": _beats,
    "finding.antipodal": lambda i: _antipodal_at_p(_beats_at(i, 0.5), p=0.5),   # base: none
}


def _beats_at(i, p):
    """i with the cells of ``p`` at half the theory's loss: trained models beat it there."""
    return _set(i, "stats", loss=lambda t: t.loss * np.where(t.p == p, 0.5, 1.0))


def test_antipodal_finding_needs_most_live_features_paired_where_large_p_beats_the_theory(
        monkeypatch):
    monkeypatch.setattr(anatomy_claims, "MIN_CELLS", 2)     # the fixture has 2 ratios per p
    i = _beats_at(_inputs(), 0.5)
    found = _antipodal_at_p(i, p=0.5, share=0.8)
    r = claims.CLAIMS.result("finding.antipodal", found)
    assert (r.ok, r.value, r.numbers["top"], r.numbers["cells"]) == (True, 0.8, 2048, 2)
    assert _row(found, "finding.antipodal")["verdict"] == "finding"
    for fails in (_antipodal_at_p(i, p=0.5, share=0.49),             # not most
                  _set(found, "baseline", antipodal=0.5)):           # half pair by chance
        assert _row(fails, "finding.antipodal")["verdict"] == "not found"
    # pairs where small p beats the theory are not the large-p mechanism; said beside it
    small = _antipodal_at_p(_beats_at(i, 0.01), p=0.01, share=0.8)
    r = claims.CLAIMS.result("finding.antipodal", small)
    assert not r.ok and r.numbers["small"] == "0.80 (n_s 1024), 0.80 (n_s 2048)"
    # judged at the largest n_s: pairs at n_s 1024 alone are not found
    early = _set(i, "stats", antipodal=lambda t: np.where((t.p == 0.5) & (t.n_s == 1024),
                                                          0.8, 0.0))
    r = claims.CLAIMS.result("finding.antipodal", early)
    assert not r.ok and r.numbers["per"] == "0.80 (n_s 1024), 0.00 (n_s 2048)"
    # only small p beats it: nothing to judge
    assert _row(_antipodal_at_p(_beats(_inputs())), "finding.antipodal")["verdict"] == (
        "not computed")


def test_every_claim_is_present_and_its_verdict_can_flip(monkeypatch):
    monkeypatch.setattr(anatomy_claims, "MIN_CELLS", 2)     # the fixture has 2 ratios per p
    base = _rows(_inputs())
    assert {c for c, r in base.items() if r["central"]} == {        # those of parts included
        "fig2.rug_theory", "fig2.trained_theory", "fig2.trained_trend", "sym.diag_var",
        "sym.bias_var", "sym.lyapunov"}
    # in the report's order; the anatomy's findings: tests/persian_rug/test_anatomy_claims.py
    assert list(base) == list(PERTURB) + list(anatomy_claims.PART) == list(claims.CLAIMS)
    assert base["fig3.diagonal"]["verdict"] == "reproduced"
    assert base["sym.variance_bound"]["verdict"] == "sanity check"
    assert base["fig1.hadamard_xor"]["verdict"] == "erratum"
    for cid in anatomy_claims.PART:                # no anatomy here: no weights kept
        assert base[cid]["verdict"] == "not computed"
    for cid, perturb in PERTURB.items():
        changed = _row(perturb(_inputs()), cid)["verdict"]
        assert changed != base[cid]["verdict"], (cid, changed)


def test_trained_claims_below_the_paper_scale_or_unconverged_are_inconclusive():
    i = _inputs()
    good = _rows(i)
    assert good["sym.diag_var"]["verdict"] == "reproduced"
    assert good["fig2.trained_theory"]["verdict"] == "reproduced"
    small = replace(i, stats=i.stats.assign(n_s=i.stats.n_s // 16),       # n_s 64, 128
                    trained=i.trained.assign(n_s=i.trained.n_s // 16),
                    baseline=i.baseline.assign(n_s=i.baseline.n_s // 16),
                    converge=i.converge.assign(n_s=i.converge.n_s.where(
                        i.converge.n_s < 1024, i.converge.n_s // 16)))    # not fig. 3's 512
    rows = _rows(small)
    for cid in ("sym.diag_var", "fig2.trained_theory", "fig2.trained_trend"):
        assert rows[cid]["verdict"] == "inconclusive at this scale"
        assert rows[cid]["inconclusive"].endswith(" < 1024")   # 512: the fig. 3 models
    # and which way each points: the fig. 3 model (n_s 512, 3% above) is the largest n_s
    assert [rows[c]["direction"] for c in ("sym.diag_var", "fig2.trained_trend",
                                           "fig2.trained_theory")] == ["holds", "holds", "fails"]
    # falling, but more slowly than untrained weights do: the paper's "falls" holds; our
    # control, a row of its own, is not found
    slower = _rows(replace(i, baseline=_stats({1024: 0.3, 2048: 0.1})))
    assert slower["sym.diag_var"]["verdict"] == "reproduced"
    assert slower["finding.faster_than_untrained"]["verdict"] == "not found"
    assert slower["finding.faster_than_untrained"]["value"] == pytest.approx(np.log2(3) - 1)
    assert "log-log slope: median -1.00 [-1.00, -1.00] over 5 cells" in good["sym.diag_var"][
        "ours"]                                                         # halves over 2×
    assert "slope -0.42" in good["sym.diag_var"]["ours"]                  # 0.2 → 0.15
    # a cell whose models stopped at the step cap is left out; too few left: inconclusive
    capped = _set(i, "trained", stopped=lambda t: ~((t.n_s == 2048) & (t.p == 0.5)))
    assert "4 of 6 at n_s 2048" in capped.convergence()
    assert "over 4 cells converged" in _row(capped, "sym.lyapunov")["ours"]
    # so is a cell whose (n_s, p) still loses more than the tolerance when trained longer
    falling = _set(i, "converge", drop=lambda t: t["drop"].where(
        (t.n_s != 2048) | (t.p != 0.5), 0.021))
    assert "4 of 6 at n_s 2048" in falling.convergence(), falling.convergence()
    assert "2 still falling" in falling.convergence()
    assert ("the loss of 6 of 7 (n_s, p) falls by at most 2%, the largest fall 2.1%"
            in falling.convergence())
    assert "over 4 cells converged" in _row(falling, "sym.lyapunov")["ours"]
    # the row says why the others did not converge and what deciding needs
    assert _row(falling, "sym.diag_var")["inconclusive"].startswith(
        "4 converged cells at n_s 2048, fewer than 5 (of the other 2, 2 still falling: their "
        "convergence checks lose up to 2.1% more at "), _row(falling, "sym.diag_var")
    at_tolerance = _set(i, "converge", drop=0.02)
    assert at_tolerance.converged_cells.shape == i.converged_cells.shape
    few = _rows(_set(i, "trained", stopped=lambda t: (t.n_s == 1024) | (t.p == 0.1)))
    assert few["sym.lyapunov"]["verdict"] == "inconclusive at this scale"
    assert few["sym.lyapunov"]["inconclusive"].startswith(
        "2 converged cells at n_s 2048, fewer than 5 (of the other 4, 4 at the step cap; deciding "
        "needs them trained until their checks pass: persian_rug.train.max_steps and "
        "persian_rug.converge.min_steps (with persian_rug.converge.capped, a check of the capped "
        "models)); no converged cell at n_s 2048 for p 0.01")
    # a sanity check is never made inconclusive, nor counted as reproduced
    assert few["sym.variance_bound"]["verdict"] == "sanity check"
    # every row names the scale it ran at, and the paper's
    assert all(r["scale"] and r["paper_scale"] for r in rows.values())


def test_a_capped_cell_counts_only_where_its_check_retrained_a_capped_model_as_long():
    i = _inputs()
    cap = (i.trained.n_s == 2048) & (i.trained.p == 0.5)          # 2 cells, 2 seeds each
    capped = _set(i, "trained", stopped=~cap, steps=np.where(cap, 4000, 900))
    assert "4 of 6 at n_s 2048" in capped.convergence()           # the check: a stopped model
    # the check of (2048, 0.5) retrains one of the capped models, as long: its cells count
    model = capped.trained[cap].iloc[-1]
    row = (capped.converge.n_s == 2048) & (capped.converge.p == 0.5)
    reran = capped.converge.copy()
    reran.loc[row, ["ratio_target", "seed_index", "steps"]] = [model.ratio_target,
                                                                model.seed_index, 4000]
    checked = replace(capped, converge=reran)
    words = checked.convergence()
    assert "6 of 6 at n_s 2048" in words and "0 cells stopped at the step cap" in words, words
    assert "or by the step cap where a check trained a model as long" in words
    # a check of a stopped model with as many steps does not count for capped cells (it settled
    # by then; they had not), nor does a capped model trained fewer steps than theirs
    for changed in ({"steps": 3999}, {"seed_index": 9}):
        c = reran.copy()
        c.loc[row, list(changed)] = list(changed.values())
        assert "4 of 6 at n_s 2048" in replace(capped, converge=c).convergence()
    # nor a check that fails
    failing = replace(checked, converge=reran.assign(drop=np.where(row, 0.03, reran["drop"])))
    assert "4 of 6 at n_s 2048" in failing.convergence()
    # the fig. 3 models at their cap: undecided, unless their check retrained one of them
    fig3 = _set(i, "fig3", stopped=False)
    assert fig3.fig3_model[2] == "the model stopped at the step cap, not converged"
    assert _row(fig3, "fig3.bias")["verdict"] == "inconclusive at this scale"
    own = fig3.converge.source == "fig3"
    c = fig3.converge.copy()
    c.loc[own, ["ratio_target", "seed_index"]] = [130 / 512, 0]
    assert replace(fig3, converge=c).fig3_model[2] is None
    assert _row(replace(fig3, converge=c), "fig3.bias")["verdict"] == "reproduced"


def test_the_central_claim_uses_the_fig3_models_and_fails_when_the_gap_stays():
    i = _inputs()
    row = _row(i, "fig2.trained_theory")
    assert row["value"] == pytest.approx(1.01)              # the median at the largest n_s
    assert "fig. 3 models included" in row["scale"]
    cells = i.cells
    assert ((cells.n_s == 512) & (cells.p == 0.044)).sum() == 1       # the fig. 3 model's cell
    # a gap of 3% at the largest n_s (1.5× the tolerance) breaks it, naming the scale
    wide = _set(i, "stats", loss=lambda t: t.loss * np.where(t.n_s == 2048, 1.03 / 1.01, 1.0))
    broken = _row(wide, "fig2.trained_theory")
    assert broken["verdict"] == "not reproduced"
    assert "Not reproduced at n_s ≤ 2048" in broken["ours"]
    # a model worse than the optimal linear map failed to optimise: its cell is left out
    worse = _set(i, "stats", loss=lambda t: np.where(
        (t.n_s == 2048) & (t.p == 0.5) & (t.ratio == 0.5), 10 * t.loss, t.loss))
    assert worse.cells.worse_than_linear.sum() == 2            # and the p 0.5, r 0.25 cell at 1024
    assert _row(worse, "fig2.trained_theory")["verdict"] == "reproduced"


def test_cells_below_the_theory_count_converged_or_not_and_those_at_it_only_converged():
    i = _inputs()
    # the p 0.01 and 0.1 cells at the largest n_s 10% below the theory, still falling when
    # trained longer: they decide against "precisely matches" (training only lowers a loss)
    low = _set(_set(i, "stats", loss=lambda t: t.loss * np.where(
        (t.n_s == 2048) & (t.p < 0.5), 0.9 / 1.01, 1.0)),
        "converge", drop=lambda t: t["drop"].where((t.n_s != 2048) | (t.p == 0.5), 0.05))
    assert not low.converged_cells[low.converged_cells.n_s == 2048].p.lt(0.5).any()
    row = _row(low, "fig2.trained_theory")
    assert row["verdict"] == "not reproduced" and row["value"] == pytest.approx(0.9), row["ours"]
    beats = _row(low, "finding.beats_theory")
    assert beats["verdict"] == "caveat" and "0 of them converged" in beats["ours"], beats["ours"]
    # the same cells 10% above the theory and still falling are left out: undecided
    high = _set(low, "stats", loss=lambda t: t.loss * np.where(
        (t.n_s == 2048) & (t.p < 0.5), 1.1 / 0.9, 1.0))
    kept = _row(high, "fig2.trained_theory")
    assert kept["value"] == pytest.approx(1.01) and "4 in-regime cells did not converge" in kept[
        "ours"], kept["ours"]


def test_a_cell_its_check_takes_below_the_theory_counts_at_the_lower_value(monkeypatch):
    i = _inputs()
    # at the largest n_s the checks of p 0.01 and 0.1 fail: their model (ratio 0.25, seed 0),
    # at the theory where the rule stopped it, ends 30% below it when trained longer
    th = {p: theory.optimal_symmetric(p, 0.25)["loss"] for p in (0.01, 0.1)}
    failing = (i.converge.source == "grid") & (i.converge.n_s == 2048) & (i.converge.p < 0.5)
    c = i.converge.assign(ratio_target=0.25, seed_index=0, long_loss=np.nan)
    c.loc[failing, "long_loss"] = [0.7 * th[p] for p in c.p[failing]]
    c.loc[failing, "drop"] = 1 - 0.7 / 1.01
    longer = replace(i, converge=c)
    row = _row(longer, "fig2.trained_theory")
    # judged: the 2 converged p 0.5 cells at 1.01 and the 2 checked cells at (0.7 + 1.01) / 2
    assert row["value"] == pytest.approx((1.01 + 0.855) / 2), row["ours"]
    assert "n_s 2048: 0.933 (0.85–1.01, 4)" in row["ours"], row["ours"]
    assert row["verdict"] == "inconclusive at this scale"      # 4 cells, fewer than 5
    # and the 2 left out at 1.01 hold the median over every cell at its lowest value up: 1.01
    assert "hold it up" in row["inconclusive"] and "median 1.010" in row["ours"], row
    beats = _row(longer, "finding.beats_theory")
    assert beats["verdict"] == "caveat" and beats["ours"].startswith("2 of"), beats["ours"]
    assert beats["value"] == pytest.approx(0.855)           # the lowest measured: stop's 1.01
    # long_loss as objects, None where no check reran (as a column with gaps can arrive): the
    # same rows; a missing rerun never hides the loss at the rule's stop
    objects = replace(i, converge=c.assign(
        long_loss=c.long_loss.astype(object).where(c.long_loss.notna(), None)))
    assert _row(objects, "fig2.trained_theory")["value"] == row["value"]
    assert _row(objects, "finding.beats_theory")["value"] == beats["value"]
    # with 4 cells enough to decide, the cells left out alone keep it open, pointing to fails
    monkeypatch.setattr(evidence, "MIN_CELLS", 4)
    held = _row(longer, "fig2.trained_theory")
    assert held["verdict"] == "inconclusive at this scale" and held["direction"] == "fails"
    assert held["inconclusive"].startswith("the judged cells' median 0.933"), held
    assert "Not reproduced" not in held["ours"]
    # the same checks failing without going below: their cells are left out, as before
    level = replace(i, converge=c.assign(long_loss=c.long_loss / 0.7 * 0.99))
    kept = _row(level, "fig2.trained_theory")
    assert kept["value"] == pytest.approx(1.01) and "4 in-regime cells did not converge" in kept[
        "ours"], kept["ours"]


def test_the_bound_holds_for_any_trained_model_converged_or_not():
    i = _inputs()                       # the p 0.1 cells at n_s 1024 stopped by the step cap
    capped = _set(i, "trained", stopped=lambda t: ~((t.n_s == 1024) & (t.p == 0.1)))
    assert _row(capped, "scaling.trained_bound")["verdict"] == "reproduced"
    below = _below(capped, 0.1, 1024)
    assert not below.converged_cells.query("n_s == 1024 and p == 0.1").shape[0]
    assert _row(below, "scaling.trained_bound")["verdict"] == "not reproduced"
    # 2 converged cells at the largest n_s leave it decided: its 6 trained cells decide it
    few = _set(i, "converge", drop=lambda t: t["drop"].where(
        (t.n_s != 2048) | (t.p == 0.5), 0.05))
    assert len(few.converged_cells.query("n_s == 2048")) == 2
    assert _row(few, "scaling.trained_bound")["verdict"] == "reproduced"
    assert _row(few, "fig2.trained_trend")["verdict"] == "inconclusive at this scale"


def _fig3_longer(i, drop, **long):
    """i with the fig. 3 model's convergence check at ``drop`` and the retrained model's
    statistics ``long`` (long_<name>: value)."""
    c = i.converge.copy()
    at = c.source == "fig3"
    c.loc[at, "drop"] = drop
    same = {f"long_{k}": i.fig3[k].iloc[0] for k in converge.SUMMARY}
    for col, v in {**same, "long_off_mean": 0.0, "long_off_std": 0.05, **long}.items():
        c.loc[at, col] = v
    return replace(i, converge=c)


def test_a_fig3_model_still_learning_decides_only_where_the_retrained_model_agrees():
    i = _inputs()
    assert _row(i, "fig3.bias")["verdict"] == "reproduced"
    same = _fig3_longer(i, 0.034, long_bias_mean=-0.185, long_bias_std=0.01)
    row = _row(same, "fig3.bias")
    assert row["verdict"] == "reproduced" and "falls 3.4% more" in row["ours"], row["ours"]
    assert "then -0.185 ± 0.010" in row["ours"]
    turned = _rows(_fig3_longer(i, 0.034, long_bias_mean=-0.25, long_bias_std=0.01))
    assert turned["fig3.bias"]["verdict"] == "inconclusive at this scale"
    assert turned["fig3.bias"]["inconclusive"].startswith("the model is still learning")
    assert turned["fig3.bias"]["direction"] == "holds"
    steady = _rows(_fig3_longer(i, 0.02, long_bias_mean=-0.25, long_bias_std=0.01))
    assert steady["fig3.bias"]["verdict"] == "reproduced"              # at the tolerance: passes


def test_medians_by_n_s_take_seed_means_then_the_median_over_the_grid():
    t = _stats({32: 1.0, 128: 0.5})
    t.loc[t.seed_index == 1, "bound_ratio"] = 9.0       # a column outside SYMMETRY
    t = pd.concat([t, t.assign(model="linear", diag_var=1e6)])   # linear rows are left out
    med = compare.medians_by_n_s(t, ["diag_var", "bound_ratio"])
    assert list(med.columns) == ["diag_var", "bound_ratio"] and list(med.index) == [32, 128]
    # six cells (2 ratios × 3 p), seed mean f·(1 + 10p)·1.005: the median of p ∈ {0.01, 0.1,
    # 0.5} twice is the mean of the two middle values, both at p = 0.1
    assert med.loc[128, "diag_var"] == pytest.approx(0.5 * 2 * 1.005)
    assert med.loc[32, "bound_ratio"] == pytest.approx((1 + 2 * 1.0 + 9.0) / 2)
    assert list(compare.medians_by_n_s(t).columns) == list(compare.SYMMETRY)
    with pytest.raises(KeyError):
        compare.medians_by_n_s(t, ["no_such_statistic"])


def test_claims_of_models_that_all_diverged_read_not_computed():
    i = _inputs()
    i = replace(i, stats=i.stats.iloc[:0], fig3=i.fig3.assign(diverged=True), fig3_W=None)
    assert all(claims.CLAIMS.row(f"sym.{c}", i)["verdict"] == "not computed"
               for c in compare.SYMMETRY)
    assert claims.CLAIMS.row("sym.diag_var", i)["ours"] == (
        "not computed: every trained model diverged")
    rows = _rows(i)
    assert rows["sym.rug_attains_bound"]["verdict"] == "sanity check"   # the rug's own stands
    assert [rows[c]["verdict"] for c in ("fig3.diagonal", "fig3.diagonal_live", "fig3.bias",
                                         "fig3.off_diagonal", "fig2.trained_theory")] == [
        "not computed"] * 5
    assert rows["fig1.hadamard_xor"]["verdict"] == "erratum"


def test_an_exponent_fitted_with_an_interval_wider_than_its_tolerance_is_inconclusive():
    i = _inputs()
    f = i.fits.copy()
    at = (f.source == "theory") & (f.term == "r")
    f.loc[at, "low"], f.loc[at, "high"] = -1.5, -0.6
    row = claims.CLAIMS.row("scaling.beta", replace(i, fits=f))
    assert row["verdict"] == "inconclusive at this scale"
    assert row["inconclusive"] == "the 95% interval of β (±0.45) is wider than the tolerance"
    assert _row(i, "scaling.beta")["verdict"] == "reproduced"


def test_an_exponent_may_differ_from_the_papers_by_one_logarithmic_factor():
    """The tolerance is the shift one logarithmic factor makes on the points fitted: 0.19 for
    β′ on the test's theory grid and 0.49 for the rug's α′ (log(r/p) on both); just inside it
    reproduces, just outside it does not, on either side; the law rows judge α′ as well as β′
    and print the band that breaks it."""
    i = _inputs()
    row = _row(i, "scaling.beta_prime")
    assert row["tolerance"].startswith(
        "β′ within +1 ± 0.19 (multiplying L by log(r/p) moves the fitted β′ 0.19 on these "
        "points, more than the other factor; β′ outside [+0.81, +1.19] breaks it): the law "
        "holds 'up to logarithmic factors' (sec. 4.3.3)"), row["tolerance"]
    tol = scaling.log_factor_shift(i.fit_points("theory", "p, n_s/n_d − 1"), "p, n_s/n_d − 1",
                                   "n_s/n_d − 1")[0]
    assert tol == pytest.approx(0.194, abs=5e-4)
    for est, verdict in ((1 + 0.95 * tol, "reproduced"), (1 + 1.05 * tol, "not reproduced"),
                         (1 - 0.95 * tol, "reproduced"), (1 - 1.05 * tol, "not reproduced")):
        assert _row(_fit(i, "theory", "n_s/n_d − 1", est), "scaling.beta_prime")[
            "verdict"] == verdict, est
    rug = "Persian rug (n_s = 1024)"
    a_tol = scaling.log_factor_shift(i.fit_points(rug, "p, n_s/n_d − 1"), "p, n_s/n_d − 1",
                                     "p")[0]
    assert a_tol == pytest.approx(0.486, abs=5e-4)
    row = _row(_fit(i, rug, "p", 2 - 1.05 * a_tol), "scaling.rug")
    assert row["verdict"] == "not reproduced", row          # β′ as before, α′ too far
    assert "α′ outside [+1.51, +2.49] breaks it" in row["tolerance"]


def test_a_wide_interval_is_undecided_only_where_it_reaches_the_band():
    i = _inputs()
    f = i.fits.copy()
    src, at = "trained (n_s = 2048)", (i.fits.term == "p")
    f.loc[(f.source == src) & at, ["estimate", "low", "high"]] = [1.0, 0.5, 1.6]   # reaches 1.53
    row = _row(replace(i, fits=f), "scaling.trained")
    assert (row["verdict"], row["direction"]) == ("inconclusive at this scale", "fails")
    assert row["inconclusive"] == "the 95% interval of α′ (±0.55) is wider than the tolerance"
    f.loc[(f.source == src) & at, ["estimate", "low", "high"]] = [0.5, 0.0, 1.0]    # wholly out
    assert _row(replace(i, fits=f), "scaling.trained")["verdict"] == "not reproduced"
    # β′ fails outright: a wide α′ cannot make the row undecided
    f.loc[(f.source == src) & at, ["estimate", "low", "high"]] = [2.0, 1.0, 3.0]
    f.loc[(f.source == src) & (f.term == "n_s/n_d − 1"), ["estimate", "low", "high"]] = [
        0.3, 0.29, 0.31]
    row = _row(replace(i, fits=f), "scaling.trained")
    assert (row["verdict"], row["inconclusive"]) == ("not reproduced", None), row


def test_the_claims_count_the_points_the_stage_fitted_diverged_models_left_out():
    """The stage's fits (scaling.fit_laws on scaling.trained_means, as pr_scaling runs them)
    against the points the claims recompute (Outputs.fit_points), with a diverged model among
    the trained ones: every count agrees, so no row raises."""
    i = _inputs()
    trained = i.trained.assign(diverged=(i.trained.n_s == 2048) & (i.trained.p == 0.01)
                               & (i.trained.seed_index == 0) & (i.trained.ratio == 0.25))
    i = replace(i, trained=trained)
    stage = pd.concat([scaling.fit_laws(t, s, i.max_p_over_r, 10, 0, i.small_r) for s, t in (
        ("theory", i.theory_grid), ("Persian rug (n_s = 1024)", i.rug),
        *((scaling.trained_source(n), scaling.trained_means(trained[trained.n_s == n]))
          for n in N_S))], ignore_index=True)
    counts = stage.drop_duplicates(["source", "law"])
    assert [len(i.fit_points(s, law)) for s, law in zip(counts.source, counts.law)] == list(
        counts.points)
    judged = counts[counts.law == "p, n_s/n_d − 1"]              # the law the law rows judge
    assert judged.points.min() >= scaling.MIN_POINTS and judged.estimate.notna().all()
    assert _row(i, "scaling.trained")["verdict"] == "reproduced"


def test_an_exponent_fitted_to_other_points_than_its_inputs_raises():
    i = _inputs()
    stale = replace(i, fits=i.fits.assign(points=i.fits.points + 1))
    with pytest.raises(ValueError, match="points, its inputs .* rerun stage pr_scaling"):
        claims.CLAIMS.row("scaling.beta_prime", stale)


def test_the_rug_against_the_theory_is_decided_from_n_s_1024():
    far = _set(_inputs(), "rug", loss=lambda t: t.loss * 1.06)          # 5% breaks it
    assert _row(far, "fig2.rug_theory")["verdict"] == "not reproduced"
    small = _set(far, "rug", n_s=512)
    row = _row(small, "fig2.rug_theory")
    assert (row["verdict"], row["direction"]) == ("inconclusive at this scale", "fails")
    assert row["inconclusive"] == "rug n_s 512 < 1024"


def test_a_slope_whose_interval_spans_0_is_undecided_and_one_spanning_untrained_finds_nothing():
    assert (ladder.side(-2, -1, 0), ladder.side(1, 2, 0), ladder.side(-1, 1, 0)) == (
        True, False, None)
    i = _inputs()
    spread = {0.01: 0.4, 0.1: 0.5, 0.5: 0.6}                # slopes −1.32, −1.00, −0.74
    i = _set(i, "stats", diag_var=lambda t: t.diag_var * np.where(
        t.n_s == 2048, t.p.map(spread) / 0.5, 1.0))
    rows = _rows(replace(i, baseline=_stats({1024: 0.2, 2048: 0.1})))   # untrained −1
    assert rows["sym.diag_var"]["verdict"] == "reproduced"             # all below 0
    assert rows["finding.faster_than_untrained"]["verdict"] == "not found"
    assert "Var diag(W) -1.00 [-1.32, -0.74] against -1.00" in rows[
        "finding.faster_than_untrained"]["ours"]
    faster = _rows(replace(i, baseline=_stats({1024: 0.2, 2048: 0.18})))   # untrained −0.15
    assert faster["finding.faster_than_untrained"]["verdict"] == "finding"
    across = {0.01: 0.8, 0.1: 1.0, 0.5: 1.2}                # slopes −0.32, 0, +0.26
    row = _row(_set(_inputs(), "stats", diag_var=lambda t: t.diag_var * np.where(
        t.n_s == 2048, t.p.map(across) / 0.5, 1.0)), "sym.diag_var")
    assert (row["verdict"], row["direction"]) == ("inconclusive at this scale", "fails")
    assert row["inconclusive"].startswith("the 95% interval [-0.32, 0.26] of the slope "
                                          "contains 0"), row["inconclusive"]


def _lyapunov_at(i, factor, where=lambda t: t.n_s == 2048):
    return _set(i, "stats", lyapunov=lambda t: t.lyapunov * np.where(where(t), factor, 1.0))


def _longer_lyapunov(i, p, longer, drop=0.001, level=1.02):
    """The Λ row of i with the cells of (n_s 2048, ``p``) at ``level``× untrained Λ and their
    convergence check's model (ratio 0.25, seed 0) at ``longer``× its Λ after the longer
    training, its loss falling ``drop`` more (above the 2% tolerance: the cells unconverged)."""
    cells = (i.stats.n_s == 2048) & (i.stats.p == p)
    s = _set(i, "stats", lyapunov=i.baseline.lyapunov * np.where(cells, level, 1.02)
             * np.where(i.baseline.n_s == 1024, 2.0 / 1.02, 1.0))
    c = s.converge.assign(ratio_target=0.25, seed_index=0, long_lyapunov=np.nan)
    at = (c.source == "grid") & (c.n_s == 2048) & (c.p == p)
    stopped = s.stats[cells & (s.stats.ratio_target == 0.25) & (s.stats.seed_index == 0)]
    c.loc[at, "drop"] = drop
    c.loc[at, "long_lyapunov"] = stopped.lyapunov.iloc[0] * longer
    return _row(replace(s, converge=c), "sym.lyapunov")


def test_lyapunov_falls_to_the_untrained_level_and_no_faster_is_needed(monkeypatch):
    i = _inputs()
    row = _row(i, "sym.lyapunov")
    assert row["verdict"] == "reproduced" and row["value"] == pytest.approx(1.02)
    assert ("2 (n_s 1024), 1.020 [1.020, 1.020] at n_s 2048, within 10% in 100% of 6 cells "
            "(p 0.01–0.5)") in row["ours"], row["ours"]
    # at the untrained level at every n_s: the same slope as untrained weights, still reproduced
    level = _row(_set(i, "stats", lyapunov=i.baseline.lyapunov * 1.02), "sym.lyapunov")
    assert level["verdict"] == "reproduced" and "median -0.42 [-0.42, -0.42]" in level["ours"]
    # 10% more at the largest n_s (1.12× untrained), still falling towards it: a larger n_s
    high = _row(_lyapunov_at(i, 1.1), "sym.lyapunov")
    assert (high["verdict"], high["direction"]) == ("inconclusive at this scale", "fails")
    assert "1.122 at n_s 2048, above 1.1 but falling along the ladder" in high["inconclusive"]
    # 1.4× then 1.5× untrained: the excess grows, not reproduced
    stays = _row(_set(i, "stats", lyapunov=i.baseline.lyapunov * np.where(
        i.baseline.n_s == 1024, 1.4, 1.5)), "sym.lyapunov")
    assert stays["verdict"] == "not reproduced" and "Not reproduced at n_s ≤ 2048" in stays[
        "ours"], stays["ours"]
    # half the cells at the level, half 30% above: the interval holds 1.1, the data cannot tell
    split = _rows(_lyapunov_at(i, 1.3 / 1.02, lambda t: (t.n_s == 2048) & (t.ratio == 0.5)))
    row = split["sym.lyapunov"]
    assert row["verdict"] == "inconclusive at this scale", row["ours"]
    assert "of trained/untrained Λ at n_s 2048 contains 1.1" in row["inconclusive"]
    # a p judged at n_s 1024 with no converged cell at 2048 (4 cells left, decisive here):
    # not every location judged
    monkeypatch.setattr(evidence, "MIN_CELLS", 4)
    capped = _rows(_set(i, "trained", stopped=lambda t: ~((t.n_s == 2048) & (t.p == 0.5))))
    row = capped["sym.lyapunov"]
    assert (row["verdict"], row["direction"]) == ("inconclusive at this scale", "holds")
    assert row["inconclusive"].startswith(
        "no converged cell at n_s 2048 for p 0.5 (trained/untrained 2.00 at n_s 1024; its 2 "
        "cells at n_s 2048, none converged, 1.02): it holds on the other p only; those cells "
        "trained to convergence at n_s 2048, or a larger n_s, would decide it"), row["inconclusive"]
    assert "(p 0.01–0.1)" in row["ours"]
    # p 0.5 unconverged at 2048 (its check still falls), its cells there 1.5× untrained: where
    # its check's model, trained longer, ends above 1.1 and higher, the evidence points away
    away = _longer_lyapunov(i, 0.5, 1.2, drop=0.05, level=1.5)
    assert (away["verdict"], away["direction"]) == ("inconclusive at this scale", "fails")
    assert away["inconclusive"].startswith(
        "no converged cell at n_s 2048 for p 0.5 (trained/untrained 2.00 at n_s 1024; its 2 "
        "cells at n_s 2048, none converged, 1.50; its convergence check's model, ratio 0.25: "
        "1.50 at the rule's stop, 1.80 after 4× its steps): p 0.5 points away from uniformity "
        "at n_s 2048"), away["inconclusive"]
    # lower after the longer training, or within 10% of untrained weights: not away
    toward = _longer_lyapunov(i, 0.5, 0.9, drop=0.05, level=1.5)
    assert toward["direction"] == "holds" and "1.50 at the rule's stop, 1.35 after" in toward[
        "inconclusive"]
    assert _longer_lyapunov(i, 0.5, 1.02, drop=0.05, level=1.05)["direction"] == "holds"
    # above the bound but no more than 10% above the stop (1.5 → 1.58), or a rerun that diverged
    # (its drop NaN): the check does not point away
    assert _longer_lyapunov(i, 0.5, 1.05, drop=0.05, level=1.5)["direction"] == "holds"
    assert _longer_lyapunov(i, 0.5, 1.2, drop=np.nan, level=1.5)["direction"] == "holds"
    # every cell converged, but at p 0.1 the check's model trained longer (its loss steady)
    # leaves the untrained level: the level at the rule's stop is not where training goes
    steady_loss = _longer_lyapunov(i, 0.1, 2.0)
    assert (steady_loss["verdict"], steady_loss["direction"]) == ("inconclusive at this scale",
                                                                  "fails")
    assert steady_loss["inconclusive"].startswith(
        "where judged at n_s 2048, training longer moves Λ away: p 0.1 (its convergence check's "
        "model, ratio 0.25: 1.02 at the rule's stop, 2.04 after 4× its steps): p 0.1 points "
        "away"), steady_loss["inconclusive"]
    assert _longer_lyapunov(i, 0.1, 1.05)["verdict"] == "reproduced"      # 1.07: still level
    # too few cells at the largest n_s: both reasons stand, neither hides the other
    monkeypatch.setattr(evidence, "MIN_CELLS", 7)
    both = _longer_lyapunov(i, 0.1, 2.0)["inconclusive"]
    assert both.startswith("6 converged cells at n_s 2048, fewer than 7; where judged at n_s "
                           "2048, training longer moves Λ away: p 0.1"), both
    monkeypatch.setattr(evidence, "MIN_CELLS", 4)
    # no untrained weights for the converged cells: nothing to compare with
    gone = _row(_set(i, "baseline", n_s=lambda t: t.n_s * 3), "sym.lyapunov")
    assert gone["verdict"] == "not computed"


def _checked_diag(i, factor, failing=None):
    """i whose grids' convergence checks (ratio 0.25, seed 0) keep diag(W)'s spread, every
    trained model with a spread of its own (a check matched to another model would get another
    factor): Var diag(W) of the check's model ``factor`` times its value at the stop at n_s 2048
    (a number, or one per p), unchanged at 1024; the check at (2048, ``failing``) fails its
    tolerance (drop 5%) with a factor of 100, which must not count."""
    t = i.trained.assign(diag_std=1.0 + np.arange(len(i.trained)))
    c = i.converge.assign(ratio_target=0.25, seed_index=0)
    own = c.assign(model="relu")[evidence.MODEL_KEYS].merge(
        t[evidence.MODEL_KEYS + ["diag_std"]], how="left").diag_std.to_numpy()
    f = np.array([(factor[p] if isinstance(factor, dict) else factor) if n == 2048 else 1.0
                  for n, p in zip(c.n_s, c.p)])
    if failing is not None:
        at = ((c.n_s == 2048) & (c.p == failing)).to_numpy()
        f[at] = 100.0
        c.loc[at, "drop"] = 0.05
    c["long_diag_std"] = np.where(c.source == "grid", own * np.sqrt(f), np.nan)
    return replace(i, trained=t, converge=c)


def test_a_trend_whose_verdict_turns_when_trained_longer_is_inconclusive(monkeypatch):
    i = _inputs()
    # Var diag(W) halves from n_s 1024 to 2048 (slope −1, untrained −0.42): reproduced, and
    # still so where the longer training raises it 10% at 2048 (−0.86)
    steady = _row(_checked_diag(i, 1.1), "sym.diag_var")
    assert steady["verdict"] == "reproduced", steady
    assert ("As if every model moved as its (n_s, p)'s convergence check's model did when "
            "trained longer (×1.1–1.1 at n_s 2048 from 3 checks): slope -0.86 [-0.86, -0.86]"
            ) in steady["ours"], steady["ours"]
    # raised 2.1× there (+0.07: rising): the verdict may turn
    turns = _row(_checked_diag(i, 2.1), "sym.diag_var")
    assert (turns["verdict"], turns["direction"]) == ("inconclusive at this scale", "holds")
    assert turns["inconclusive"].endswith(
        "the slope's interval would be [0.07, 0.07]: the verdict may turn with where training "
        "stops"), turns["inconclusive"]
    # rising at the stop (+0.17: not reproduced), but scaled per p the cells spread from −0.83
    # to +0.17 around 0: undecided there, so inconclusive (fails)
    rising = _set(i, "stats", diag_var=lambda t: t.diag_var * np.where(t.n_s == 2048, 2.25, 1.0))
    assert _row(rising, "sym.diag_var")["verdict"] == "not reproduced"
    spread = _row(_checked_diag(rising, {0.01: 0.5, 0.1: 1.0, 0.5: 0.7}), "sym.diag_var")
    assert (spread["verdict"], spread["direction"]) == ("inconclusive at this scale", "fails")
    assert "×0.5–1 at n_s 2048 from 3 checks" in spread["inconclusive"]
    # a check that fails its tolerance (its cells not converged) lends no factor
    monkeypatch.setattr(evidence, "MIN_CELLS", 4)
    failing = _row(_checked_diag(i, 1.1, failing=0.5), "sym.diag_var")
    assert failing["verdict"] == "reproduced"
    assert "(×1.1–1.1 at n_s 2048 from 2 checks)" in failing["ours"], failing["ours"]
    # ΔVar(ν) is not kept by the check: said, not judged
    assert "Not measured past the rule's stop" in _row(i, "sym.dvar_nu")["ours"]
    assert "convergence checks" not in _row(i, "sym.dvar_nu")["tolerance"]


def test_the_off_diagonal_row_sums_its_mean_over_a_features_inputs():
    i = _inputs()
    W = np.eye(64) * 1.29 - 0.01 * (1 - np.eye(64))          # off-diagonal mean −0.01 …
    W[::2] += 0.005 * (1 - np.eye(64))[::2]                   # … ± 0.0025 rows apart
    W[1::2] -= 0.005 * (1 - np.eye(64))[1::2]
    row = _row(replace(i, fig3_W=W), "fig3.off_diagonal")
    p, b = i.fig3.p.iloc[0], i.fig3.bias_mean.iloc[0]
    # 63 inputs, each active with p at mean 1/2: 63·p/2·(−0.01)
    assert f"moves its pre-activation by {-0.01 * 63 * p / 2:+.3f} on average, against its " \
           f"bias {b:.3f}" in row["ours"], row["ours"]
    # the caveat reads the Gaussianised loss: 1% above the trained loss stands as written,
    # 3% above is the caveat; without an anatomy it is not computed
    assert row["verdict"] == "reproduced" and row["value"] == pytest.approx(0.01)
    assert _rows(_set(i, "fig3_anatomy", gauss_loss=lambda t: t.loss * 1.03))[
        "fig3.off_diagonal"]["verdict"] == "caveat"
    gone = _row(replace(i, fig3_anatomy=pd.DataFrame()), "fig3.off_diagonal")
    assert gone["ours"] == "not computed: no anatomy of the fig. 3 model: run pr_anatomy_fig3"


# Calibration (docs/claims.md): synthetic runs that satisfy the paper's statement, at our sample
# sizes and with our measured spreads, are not accused (read not reproduced) and mostly pass;
# runs that break it by the least its words exclude never pass.

#: A trained model's loss from seed to seed, relative: the 75th percentile over the default
#: snapshot's converged cells (two seeds a cell; the median is 0.37%, the largest 2.1%).
SEED_SPREAD = 0.0074
#: The ladder-settled snapshot's |trained/theory − 1| per converged in-regime cell at n_s
#: 128–1024 (20 cells at 1024): its line's value at n_s 128 (mean, spread over cells), the
#: spread of its slope per e-fold of n_s over cells, and of the points about the line.
GAP_AT_128, GAP_SPREAD, SLOPE_SPREAD, POINT_SPREAD = 0.13, 0.039, 0.0115, 0.0016


def _verdicts(claim, draw, draws=100, seed=0):
    """The share of ``draws`` synthetic runs (``draw(rng)``: Outputs) by the verdict
    ``claim`` gives them."""
    rng = np.random.default_rng(seed)
    said = pd.Series([claims.CLAIMS.row(claim, draw(rng))["verdict"] for _ in range(draws)])
    return said.value_counts(normalize=True)


@functools.cache
def _base():
    """The fixture, built once for the calibration's draws (which replace, never change, its
    tables), and the theory's loss at each of its trained models."""
    i = _inputs()
    return i, np.array([theory.optimal_symmetric(p, r)["loss"]
                        for p, r in zip(i.stats.p, i.stats.ratio)])


def _at_theory(rng, level):
    """The fixture's trained models (6 in-regime cells a n_s, two seeds) at ``level``× the
    theory's loss, each ± SEED_SPREAD."""
    i, th = _base()
    return replace(i, stats=i.stats.assign(
        loss=th * level * (1 + rng.normal(0, SEED_SPREAD, len(th)))))


def _fig3_features(rng, mean, dead=0.0, features=512, spread=0.01):
    """The fixture's fig. 3 model with its per-feature diagonal (and its bias, −0.18 about
    −0.18 + mean − 1.29) drawn ~ N(mean, ``spread``) over ``features``, a share ``dead`` of them
    at 0 (a diagonal below half the median: dead)."""
    i = _base()[0]
    diag = rng.normal(mean, spread, features)
    diag[: int(dead * features)] = 0.0
    live, bias = diag[diag > np.median(diag) / 2], rng.normal(mean - 1.47, spread, features)
    return _set(i, "fig3", diag_mean=diag.mean(), diag_std=diag.std(),
                diag_live_mean=live.mean(), diag_live_std=live.std(),
                dead_fraction=1 - len(live) / features, bias_mean=bias.mean(),
                bias_std=bias.std())


def _gaussianised(rng, excess):
    """The fixture's fig. 3 model whose Gaussianised loss is ``excess`` above its trained loss,
    ± SEED_SPREAD (the trained loss's seed spread; the Gaussianised loss is computed)."""
    i = _base()[0]
    a = i.fig3_anatomy
    return replace(i, fig3_anatomy=a.assign(
        gauss_loss=a.loss * (1 + excess) * (1 + rng.normal(0, SEED_SPREAD, len(a)))))


#: claim → (a run satisfying its statement, one breaking it by the least its words exclude);
#: the fixture's grids (n_s 1024 and 2048, 6 in-regime cells a n_s) and fig. 3 model.
CALIBRATION = {
    "fig2.trained_theory": (lambda r: _at_theory(r, 1.0), lambda r: _at_theory(r, 0.97)),
    "scaling.trained_bound": (lambda r: _at_theory(r, 1.0),       # a cell 1% below the bound
                              lambda r: _set(_at_theory(r, 1.0), "stats", loss=lambda t: np.where(
                                  (t.p == 0.1) & (t.n_s == 2048) & (t.ratio == 0.25),
                                  0.99 * bounds.lower_bound(0.1, 0.25), t.loss))),
    "fig3.diagonal": (lambda r: _fig3_features(r, 1.29),           # 4% dead, as measured
                      lambda r: _fig3_features(r, 1.29, dead=0.04)),
    "fig3.diagonal_live": (lambda r: _fig3_features(r, 1.29), lambda r: _fig3_features(r, 1.33)),
    "fig3.bias": (lambda r: _fig3_features(r, 1.29), lambda r: _fig3_features(r, 1.33)),
}
def _pair(claim, draws, words):
    """The verdict shares :func:`_verdicts` gives ``claim`` on each of the two runs ``draws``
    (seeds 0 and 1), printed with ``words``, what each run is."""
    first, second = (_verdicts(claim, draw, seed=k) for k, draw in enumerate(draws))
    print(f"{claim}: runs {words[0]} read {dict(first.round(3))}, runs {words[1]} "
          f"{dict(second.round(3))}")
    return first, second


#: The caveats: (a run that shows the qualification, one where the paper's words stand as
#: written), each read 'caveat' and 'reproduced' at least 95% of the time.
CAVEATS = {
    # trained models 13% below the theory (as measured), or 8% (not 'more than 10%')
    "finding.beats_theory": (lambda r: _at_theory(r, 0.87), lambda r: _at_theory(r, 0.92)),
    # Gaussianised 4% above the trained loss (twice the 2% the row allows), or at it
    "fig3.off_diagonal": (lambda r: _gaussianised(r, 0.04), lambda r: _gaussianised(r, 0.0)),
}


@pytest.mark.calibration
@pytest.mark.parametrize("claim", CAVEATS)
def test_a_caveat_shows_where_the_qualification_holds_and_not_where_the_words_stand(claim):
    shown, stands = _pair(claim, CAVEATS[claim], ("with the qualification", "without"))
    assert shown.get("caveat", 0) >= 0.95 and stands.get("reproduced", 0) >= 0.95


@pytest.mark.calibration
@pytest.mark.parametrize("claim", CALIBRATION)
def test_a_claims_test_does_not_accuse_runs_that_satisfy_it_and_fails_runs_that_break_it(claim):
    held, broken = _pair(claim, CALIBRATION[claim], ("that satisfy it", "that break it"))
    assert held.get("not reproduced", 0) <= 0.05 and held.get("reproduced", 0) >= 0.95
    assert broken.get("reproduced", 0) <= 0.05


def _trend_reads(reach, draws=400, cells=20, seed=0):
    """fig2.trained_trend's test (the 95% interval of the median gap at n_s 8192, each cell's
    line in log n_s carried there, against the central claim's 2%: ladder.ladder_reach, side)
    on ``draws`` synthetic ladders of ``cells`` cells at n_s 128–1024 shaped as the snapshot
    measured (GAP_AT_128 …), their median line reaching ``reach`` at 8192: the share read
    reproduced (True), not reproduced (False) and inconclusive (None)."""
    rng, n_s = np.random.default_rng(seed), np.array([128, 256, 512, 1024])
    index = pd.MultiIndex.from_tuples([(n, c, 0.1) for c in range(cells) for n in n_s],
                                      names=["n_s", "ratio_target", "p"])
    x, said = np.log(n_s / 128), []
    for _ in range(draws):
        a = rng.normal(GAP_AT_128, GAP_SPREAD, cells)
        b = (reach - a) / np.log(64) + rng.normal(0, SLOPE_SPREAD, cells)
        gap = np.abs(a[:, None] + b[:, None] * x + rng.normal(0, POINT_SPREAD, (cells, 4)))
        _, lo, hi, _ = ladder.ladder_reach(pd.Series(gap.ravel(), index=index), 8192, floor=0.0)
        said.append(ladder.side(lo, hi, claims.CENTRAL_TOL))
    return pd.Series(said, dtype=object).value_counts(normalize=True, dropna=False)


@pytest.mark.calibration
def test_the_trend_test_never_accuses_a_gap_that_closes_and_never_passes_one_that_stays():
    """Calibration (docs/claims.md) of fig2.trained_trend at the ladder-settled snapshot's
    spreads: ladders whose median line closes the gap by n_s 8192 read not reproduced at most
    5% of the time (most read inconclusive: from n_s ≤ 1024 the lines' spread at 8192 is wide);
    ladders left at 0.03 there (1.5× the tolerance, the row's 'breaks it') read reproduced at
    most 5%."""
    closes, stays = _trend_reads(0.0), _trend_reads(1.5 * claims.CENTRAL_TOL, seed=1)
    print(f"fig2.trained_trend: a gap that closes reads {dict(closes.round(3))}; one left at "
          f"0.03, {dict(stays.round(3))}")
    assert closes.get(False, 0) <= 0.05 and stays.get(True, 0) <= 0.05


#: finding.antipodal's cells as the ladder-settled snapshot measured them at n_s 1024: 12
#: converged cells at p ≥ 0.17 that beat the theory, their shares spread 0.24 about their mean.
PAIRED_CELLS, PAIRED_SPREAD = 12, 0.24


def _paired(rng, mean):
    """What finding.antipodal reads of a run: PAIRED_CELLS converged cells at n_s 1024 and
    p 0.254, 13% below the theory, their shares ~ Beta of ``mean`` and sd PAIRED_SPREAD (in
    [0, 1], as a share is), the untrained weights' 0."""
    k, ratio = mean * (1 - mean) / PAIRED_SPREAD ** 2 - 1, np.linspace(0.125, 0.254, PAIRED_CELLS)
    t = pd.DataFrame({"n_s": 1024, "ratio_target": ratio, "ratio": ratio, "p": 0.254,
                      "trained_theory": 0.87, "antipodal_random": 0.0,
                      "antipodal": rng.beta(mean * k, (1 - mean) * k, PAIRED_CELLS)})
    return SimpleNamespace(stats=t, antipodal=t, converged_cells=t, grid_scale="—")


@pytest.mark.calibration
@pytest.mark.calibration
def test_the_antipodal_finding_is_found_where_most_features_pair_and_not_where_half_do_not():
    """Calibration (docs/claims.md) of finding.antipodal at the spread ladder-settled measured:
    cells whose mean share is 0.8 (four live features in five paired) read found at least 95%
    of the time; a mean of 0.49 (not 'most'), at most 5%. The measured mean, 0.65, is found
    about two times in three: the test's power at that scale, printed."""
    rng = np.random.default_rng(0)
    found = {m: np.mean([claims.CLAIMS.result("finding.antipodal", _paired(rng, m)).ok
                         for _ in range(1000)]) for m in (0.8, 0.65, 0.49)}
    print(f"finding.antipodal: found at a mean share of {found}")
    assert found[0.8] >= 0.95 and found[0.49] <= 0.05


@functools.cache
def _paper_grid_points():
    """The paper's trained grid at n_s 8192 (p and ratio linspace(0.002, 0.8, 20), one model a
    point) in the fits' regime (p/ratio ≤ 0.25: 55 points), with the theory's loss at each."""
    g = np.linspace(0.002001, 0.8, 20)
    t = pd.DataFrame([(p, r) for p in g for r in g], columns=["p", "ratio"])
    t = t[scaling.in_regime(t, 0.25)].reset_index(drop=True)
    return t.assign(theory=[theory.optimal_symmetric(p, r)["loss"] for p, r in zip(t.p, t.ratio)])


def _law(rng, shift):
    """What scaling.trained reads of a run of the paper's grid (:func:`_paper_grid_points`)
    whose trained loss is 0.87× the theory's (as the ladder measured) times (n_s/n_d − 1)^
    ``shift``, each model ± SEED_SPREAD: its fits (scaling.fit_laws, 1,000 resamples)."""
    t = _paper_grid_points()
    t = t.assign(loss=t.theory * 0.87 * (1 / t.ratio - 1) ** shift
                 * (1 + rng.normal(0, SEED_SPREAD, len(t))))
    fits = scaling.fit_laws(t, scaling.trained_source(8192), 0.25, 1000, 0, 0.05)
    return SimpleNamespace(trained=pd.DataFrame({"n_s": [8192]}), fits=fits, max_p_over_r=0.25,
                           fit_points=lambda s, law: scaling.law_points(t, law, 0.25, 0.05),
                           too_small=lambda n_s: None)


@pytest.mark.calibration
def test_the_trained_law_passes_models_that_follow_the_theorys_law_and_fails_a_steeper_one():
    """Calibration (docs/claims.md) of scaling.trained at the paper's scale (n_s 8192, the 55
    in-regime points of its grid): trained losses on the theory's law (its fitted β′ 1.06,
    α′ 1.86 there, inside the bands +1 ± 0.15 and +2 ± 0.30) read reproduced at least 95% of
    the time; β′ steepened by 0.12, to 1.18 (past the band's edge by a fifth of its width),
    reproduced at most 5%."""
    held, broken = _pair("scaling.trained", (lambda r: _law(r, 0.0), lambda r: _law(r, 0.12)),
                         ("on the theory's law", "with β′ 0.12 steeper"))
    assert held.get("not reproduced", 0) <= 0.05 and held.get("reproduced", 0) >= 0.95
    assert broken.get("reproduced", 0) <= 0.05


#: How far a trained model's √ΔVar(ν) / mean Var(ν) moves from seed to seed, as a log: the
#: 75th percentile over the default snapshot's cells (two seeds a cell; the median is 0.10).
IDENTICAL_SPREAD = 0.16


def _identical(rng, spread):
    """The claims tests' grids moved to n_s 4096 and 8192, every model's √ΔVar(ν) / mean
    Var(ν) at ``spread`` times a log-normal of IDENTICAL_SPREAD."""
    i = _n_s_times(_base()[0], 4)
    rel = spread * np.exp(rng.normal(0, IDENTICAL_SPREAD, len(i.stats)))
    return _set(i, "stats", dvar_nu=(rel * i.stats.mean_var_nu) ** 2)


@pytest.mark.calibration
def test_identical_variances_pass_where_rows_agree_within_a_tenth_and_fail_above_it():
    """Calibration (docs/claims.md) of sym.identical_variances at n_s 8192 ('identical' read as
    within 10%, in 80% of the cells): cells whose variances agree within 7% (each model's
    spread ± its measured seed-to-seed spread) read reproduced at least 95% of the time; cells
    at 12% apart, at most 5%."""
    held, broken = _pair("sym.identical_variances", (lambda r: _identical(r, 0.07),
                                                     lambda r: _identical(r, 0.12)),
                         ("within 7%", "12% apart"))
    assert held.get("not reproduced", 0) <= 0.05 and held.get("reproduced", 0) >= 0.95
    assert broken.get("reproduced", 0) <= 0.05
