"""Checkable claims of *Incidental polysemanticity* (:data:`CLAIMS`), each declared beside its
check (tms.core.claim_rows.Claims), one row each: the closed forms of section 2.1 and appendix C
against Monte Carlo or exact computation (sanity checks: they are theorems), the sparsification
ODE (figs. 2 and 7), the collisions of fig. 3 and the fourth norms under noise (figs. 4–6). The
checks read the stage outputs gathered in tms.incidental.evidence.Outputs (its ``load``).

A trained-model claim run below the paper's scale (fig. 3 below n = 256, or without two m above
n) reads 'inconclusive at this scale'. The claims on noise (figs. 4–6) are declared in
tms.incidental.noise_claims and taken in after these.
"""

from __future__ import annotations

import numpy as np
import scipy.stats

from tms.core.claim_rows import Claims, Record, Result, max_z, too_wide
from tms.incidental import noise_claims, stats, theory
from tms.incidental.evidence import Outputs
from tms.incidental.race import RACE_LEVEL, trend, trend_words, wins_by_m

_ODE = "m 1e5, λ 1e-5, Euler dt 0.5"
_FIG3 = "n 256, m 256–4096, 16 models per m, AdamW lr 1e-3, 7500 steps"
_SPARSE, _CHECK = ("ip_sparsification",), ("ip_checks",)
#: The paper's fig. 3 n.
PAPER_N = 256
#: Fig. 3's constant c of c·n²/m: "the constant 1/4 seems to be fairly accurate" (sec. 2.1), read
#: as within 25% of it.
C_TOL = 0.25
#: Fig. 3's m range, 256 to 4096: 16×.
PAPER_M_SPAN = 16
#: Fig. 3's exponent of m: "this trend of Θ(n²/m) does hold, and the constant 1/4 seems to be
#: fairly accurate as well" (sec. 2.1): c = count·m/n² within C_TOL of one value over the
#: paper's m range, so a power law m^β may move c by (1 + C_TOL)/(1 − C_TOL) across it at most:
#: |β + 1| ≤ ln(5/3)/ln 16 = 0.18.
BETA_TOL = float(np.log((1 + C_TOL) / (1 - C_TOL)) / np.log(PAPER_M_SPAN))


#: The claims of *Incidental polysemanticity* in report order, each checked on
#: tms.incidental.evidence.Outputs.
CLAIMS = Claims(empirical=("ip_collisions", "ip_noise", "ip_sweep", "ip_single"),
                central=("fig3.polysemantic",))


#: What the claims on the sparsification ODE share.
_ODE_CLAIM = {"paper_scale": _ODE, "stages": _SPARSE}


@CLAIMS.record(Record(
    id="fig2.l1_constant", statement="‖W_i‖₁ = Θ(1/(1/√m + λt))", source="fig. 2, sec. 2",
    paper="constants ≈ 1", figure="fig2", **_ODE_CLAIM,
    ours="‖W_i‖₁·(1/√m + λt) from {low:.2f} to {high:.2f}",
    tolerance="within [1/3, 3]: Θ(·) with constants near 1"))
def _l1_constant(o: Outputs) -> Result:
    ratio = o.sparsification["ratio"].values()
    lo, hi = min(v[0] for v in ratio), max(v[1] for v in ratio)
    return Result(lo >= 1 / 3 and hi <= 3, numbers={"low": lo, "high": hi}, scale=o.scales["ode"])


@CLAIMS.record(Record(
    id="fig2.m_prime_time", statement="m′ reaches 1 at t = Θ(1/λ)", source="fig. 2, sec. 2",
    paper="λt ≈ 1", figure="fig2", **_ODE_CLAIM, ours="λt = {times}", tolerance="within [1/3, 3]"))
def _m_prime_time(o: Outputs) -> Result:
    t_end = o.sparsification["lam_t_end"]
    return Result(all(1 / 3 <= v <= 3 for v in t_end.values()), scale=o.scales["ode"], numbers={
        "times": ", ".join(f"{v:.2f} (m = {m:.0e})" for m, v in t_end.items())})


@CLAIMS.record(Record(
    id="fig7.inside_bounds", statement="relative variance of the non-zero weights within "
    "appendix B's bounds (they hold by construction)", source="fig. 7, app. B", paper="always",
    figure="fig7", kind="sanity check", **_ODE_CLAIM,
    ours="{value:.1%} of the recorded times (worst m)", tolerance="100%"))
def _inside_bounds(o: Outputs) -> Result:
    inside = min(o.sparsification["inside"].values())
    return Result(inside == 1.0, inside, numbers={"value": inside}, scale=o.scales["ode"])


@CLAIMS.record(Record(
    id="fig7.relvar_constant", statement="relative variance a constant not far from 1 (m′ ≥ 10)",
    source="fig. 7, app. B", paper="Θ(1), near 1", figure="fig7", **_ODE_CLAIM,
    ours="from {low:.2f} to {high:.2f} ({value:.1f}× over the run)",
    tolerance="within [1/4, 4] and varying by at most 4× while m′ falls to 10: Θ(1) in m′ ('a "
              "constant not too far from 1', app. B)"))
def _relvar_constant(o: Outputs) -> Result:
    relvar = o.sparsification["relvar"].values()
    lo, hi = min(v[0] for v in relvar), max(v[1] for v in relvar)
    return Result(lo >= 0.25 and hi <= 4 and hi / lo <= 4, hi / lo, scale=o.scales["ode"],
                  numbers={"low": lo, "high": hi, "value": hi / lo})


@CLAIMS.record(Record(
    id="appb.euler", statement="exact affine-map integration equals the authors' Euler scheme as "
    "dt → 0", source="app. B", paper="error ∝ dt (first order)", paper_scale="Euler dt 0.5",
    figure=None, stages=_SPARSE, kind="sanity check",
    ours="max |‖w‖₁ Euler/exact − 1|: {errors}",
    tolerance="error ratio / dt ratio in [0.8, 1.25]: first order"))
def _euler(o: Outputs) -> Result:
    errs = o.sparsification["euler_error"]
    dts = sorted(errs, reverse=True)
    orders = [errs[a] / errs[b] / (a / b) for a, b in zip(dts, dts[1:])]
    return Result(all(0.8 <= r <= 1.25 for r in orders), numbers={
        "errors": ", ".join(f"{errs[d]:.2%} (dt {d:g})" for d in dts)},
        scale=f"m {o.ip.sparsification.euler.m:g}, dt " + ", ".join(f"{d:g}" for d in dts))


#: What the sanity checks of the closed forms share, and the rows of a closed form against its
#: Monte Carlo estimate (:func:`_mc`) or an exact computation (:func:`_exact`).
_CHECKED = {"paper_scale": "—", "figure": None, "stages": _CHECK, "kind": "sanity check"}
_MC = {"ours": "{value:.5g} ± {se:.2g} (Monte Carlo; closed form {closed:.5g}, {z:.1f} s.e. off)",
       "tolerance": "≤ 3 s.e.: a 0.3% chance of a false alarm"}
_EXACT = {"ours": "{check}: {value:.4g} (closed form {closed:.4g})",
          "tolerance": "|difference| ≤ {tol:g} (float64 integration error)"}


def _mc(o: Outputs, check: str) -> Result:
    """A closed form against its Monte Carlo estimate: within 3 standard errors."""
    r = o.by_check.loc[check]
    z = max_z(r.estimate, r.closed_form, r.se)
    return Result(z <= 3, r.estimate, r.se, {"value": r.estimate, "se": r.se,
                                             "closed": r.closed_form, "z": z}, o.scales["mc"])


def _exact(o: Outputs, check: str, tol: float, scale: str) -> Result:
    """A closed form against an exact computation: within ``tol`` (absolute)."""
    r = o.by_check.loc[check]
    return Result(abs(r.estimate - r.closed_form) <= tol, r.estimate, scale=scale, numbers={
        "check": check, "value": r.estimate, "closed": r.closed_form, "tol": tol})


@CLAIMS.record(Record(
    id="sec21.collision_probability", statement="benign collision probability 1/(2m)",
    source="sec. 2.1", paper="1/(2m)", **_CHECKED, **_MC))
def _collision_probability(o: Outputs) -> Result:
    return _mc(o, "collision probability")


@CLAIMS.record(Record(
    id="sec21.interference_init", statement="interference at init Θ(n/m)", source="sec. 2.1",
    paper="Θ(n/m); (n − 1)/(2m) for W_ik ~ N(0, 1/m) (ours)", **_CHECKED, **_MC))
def _interference_init(o: Outputs) -> Result:
    return _mc(o, "interference at init")


@CLAIMS.record(Record(
    id="sec21.decay_solution", statement="interference alone: q = W_i·W_j follows q = √C / (2 "
    "sinh(asinh(√C/(2q₀)) + √C t)), C = s² − 4q², s = ‖W_i‖² + ‖W_j‖² (our solution)",
    source="sec. 2.1", paper="−Θ(W_i·W_j) decay", **_CHECKED, **_EXACT))
def _decay_solution(o: Outputs) -> Result:
    return _exact(o, "interference decay: numerical W_i·W_j / exact solution − 1 (max)", 1e-5,
                  "two encodings")


@CLAIMS.record(Record(
    id="sec21.decay_rate", statement="positive W_i·W_j decays at rate ‖W_i‖² + ‖W_j‖²",
    source="sec. 2.1", paper="rate ‖W_i‖² + ‖W_j‖²", **_CHECKED, **_EXACT))
def _decay_rate(o: Outputs) -> Result:
    return _exact(o, "interference decay: rate −d ln(W_i·W_j)/dt / (‖W_i‖² + ‖W_j‖²) − 1 (max)",
                  1e-4, "two encodings")


def _unfit(o: Outputs) -> Result | None:
    """The Result of a fig. 3 claim when fewer than 2 models are left to fit, else None."""
    if o.fit is not None and o.fit_init is not None:
        return None
    return Result(not_computed=f"{len(o.collisions)} fig. 3 model(s) trained without diverging; "
                  "the fit needs 2", scale=o.scales["fig3"])


def _beta(o: Outputs, fit: dict, note: str, short: str | None = None) -> Result:
    """Fig. 3: the exponent β of m (``fit``: stats.m_exponent) within −1 ± BETA_TOL; undecided
    where its interval [fit['lo'], fit['hi']] is wider than the tolerance and reaches the band;
    a reproduction is inconclusive below the paper's n, or where ``short`` says why the run
    falls short of the claim's regime."""
    cfg, v, lo, hi = o.ip.collisions, fit["beta"], fit["lo"], fit["hi"]
    wide = too_wide(lo, hi, -1, BETA_TOL, f"the {cfg.level:.0%} interval")
    small = "; ".join(filter(None, (
        f"n {cfg.n} < the paper's {PAPER_N}: at m = n the fit is dominated by a point where "
        "training removes collisions" if cfg.n < PAPER_N else None, short, wide))) or None
    return Result(abs(v + 1) <= BETA_TOL, v, (hi - lo) / 2, scale=o.scales["fig3"],
                  inconclusive=small, numbers={
                      "value": v, "level": cfg.level, "low": lo, "high": hi, "note": note,
                      "tol": BETA_TOL, "rel": C_TOL, "span": PAPER_M_SPAN,
                      "breaks": -1 - 1.05 * BETA_TOL})


@CLAIMS.record(Record(
    id="fig3.polysemantic", statement="polysemantic neurons ≈ c·n²/m with c = 1/4 ('the constant "
    "1/4 seems to be fairly accurate')", source="fig. 3, sec. 2.1", paper="c = 0.25",
    paper_scale=_FIG3, figure="fig3", stages=("ip_collisions",),
    ours="c = {value:.3f}, {level:.0%} interval [{low:.3f}, {high:.3f}] (one c over every m, "
         "each model weighted by its n²/m); per m: {per_m}",
    tolerance="|c − 1/4| ≤ {tol:g} ({rel:.0%}): 'fairly accurate'; c = {breaks:.3f} breaks it"))
def _polysemantic(o: Outputs) -> Result:
    if unfit := _unfit(o):
        return unfit
    cfg, fit, c = o.ip.collisions, o.fit, o.fit["c"]
    half, tol = (fit["hi"] - fit["lo"]) / 2, C_TOL * 0.25
    why = [f"n {cfg.n} < the paper's {PAPER_N}: at m = n the fit is dominated by a point where "
           "training removes collisions"] if cfg.n < PAPER_N else []
    if half > tol:
        why.append(f"the {cfg.level:.0%} interval (±{half:.3f}) is wider than the tolerance")
    return Result(abs(c - 0.25) <= tol, c, half, scale=o.scales["fig3"],
                  inconclusive="; ".join(why) or None, numbers={
                      "value": c, "level": cfg.level, "low": fit["lo"], "high": fit["hi"],
                      "per_m": _per_m(o), "tol": tol, "rel": C_TOL,
                      "breaks": 0.25 * (1 + 1.2 * C_TOL)})


def _per_m(o: Outputs) -> str:
    """c of each m of the fig. 3 models alone (tms.incidental.stats.collision_constant), with
    its interval (cut at 0 below) where the m has two models or more and a polysemantic neuron:
    how the one fitted c hides a drift."""
    cfg, out = o.ip.collisions, []
    for m, g in o.collisions.groupby("m"):
        if len(g) < 2 or not g.polysemantic.sum():
            out.append(f"{g.polysemantic.sum() * m / cfg.n ** 2:.3f} (m {m})")
            continue
        f = stats.collision_constant(g.polysemantic, cfg.n, g.m, cfg.level)
        out.append(f"{f['c']:.3f} [{max(f['lo'], 0.0):.3f}, {f['hi']:.3f}] (m {m})")
    return ", ".join(out)


def _regime(o: Outputs) -> dict | None:
    """β fitted on the models at m > n alone (stats.m_exponent): the regime the paper's
    Θ(n²/m) speaks of (m ≫ n; at m = n the curve bends, and a fit there weighs that point
    most), or None when fewer than two m with a count are left."""
    rest = o.collisions[o.collisions.m > o.ip.collisions.n]
    if rest.m.nunique() < 2 or (rest.groupby("m").polysemantic.sum() <= 0).any():
        return None                      # an m without a count: no finite fit
    return stats.m_exponent(rest.polysemantic, rest.m, o.ip.collisions.level)


@CLAIMS.record(Record(
    id="fig3.m_exponent", statement="at fixed n, polysemantic neurons fall as 1/m ('this trend of "
    "Θ(n²/m) does hold': the exponent of m, as m grows past n)", source="fig. 3, sec. 2.1",
    paper="β = −1 (asymptotic)", paper_scale=_FIG3, figure="fig3", stages=("ip_collisions",),
    ours="β = {value:.2f}, {level:.0%} interval [{low:.2f}, {high:.2f}]{note}",
    tolerance="β within −1 ± {tol:.2f}: with the constant 'fairly accurate' (c = count·m/n² "
              "within {rel:.0%} of one value) over the paper's m range ({span}×), a power law can "
              "move c by (1 + {rel:g})/(1 − {rel:g}) across it at most; β = {breaks:.2f} breaks "
              "it; undecided while the fit's interval is wider than the tolerance and reaches "
              "the band"))
def _m_exponent(o: Outputs) -> Result:
    """Fig. 3's Θ(n²/m) is asymptotic: β is judged on the models at m > n (:func:`_regime`);
    the fit over every m, which m = n dominates, is reported as the finite-size curvature, not
    counted against the paper. With fewer than two m above n it reads inconclusive, in the
    direction of the fit over every m."""
    if unfit := _unfit(o):
        return unfit
    try:
        e = stats.m_exponent(o.collisions.polysemantic, o.collisions.m, o.ip.collisions.level)
    except ValueError as err:                    # one m left, or no polysemantic neuron at all
        return Result(not_computed=str(err), scale=o.scales["fig3"])
    n = o.ip.collisions.n
    full = (f"over every m (with m = n, where the curve bends): β = {e['beta']:.2f} "
            f"[{e['lo']:.2f}, {e['hi']:.2f}]")
    if (r := _regime(o)) is None:
        return _beta(o, e, f" ({full}; Poisson fit of count ≈ A·m^β)",
                     f"fewer than two m above n {n}: the asymptotic regime is not reached")
    return _beta(o, r, f" at m > n ({n}) (Poisson fit of count ≈ A·m^β; dispersion "
                 f"{r['dispersion']:.1f}); {full}: finite-size curvature, not counted")


@CLAIMS.record(Record(
    id="fig3.largest_wins", statement="the neuron that wins a feature is most likely the one of "
    "its largest initial weight: 'the largest weight at initialization is still the most likely "
    "to win the race all things considered' (the 'largest' coordinates whose benign collision "
    "makes a polysemantic neuron are the race's winners, 'not necessarily the largest weight at "
    "initialization')", source="sec. 2.1, footnote 6", paper="wins fall with rank at init",
    paper_scale=_FIG3, figure="fig3", stages=("ip_collisions",),
    ours="features won by ranks 1–{ranks} at init (no trend: mean rank {flat:g}), pooled over m: "
         "{pooled}; rank 1 won {top} of the {total} represented features ({share:.1%}); per m "
         "(by chance ranks 1–{ranks} win {ranks}/m of the features): {per_m}{traced}",
    tolerance="'most likely to win, all things considered': the wins of ranks 1–{ranks} fall "
              "with rank pooled over m (exact conditional test of their mean rank, each m's wins "
              "fixed, one-sided at {level:.1%}) and rank 1 wins the most of them; a rise pooled "
              "or at any m (both sides, Bonferroni over the {ms} m) fails it{breaks}"))
def _largest_wins(o: Outputs) -> Result:
    """The wins of ranks 1..R at init fall with rank pooled over the m ('all things
    considered'; race.trend, one-sided at half RACE_LEVEL), rank 1 winning the most of them
    pooled ('the most likely'), and rise at no m (two-sided, Bonferroni over the m); a rise at an
    m or pooled fails it. Pooled without a decided fall, or falling with another rank winning
    the most, it reads inconclusive, in the direction of the pooled mean rank and mode."""
    if unfit := _unfit(o):
        return unfit
    col, n = o.collisions, o.ip.collisions.n
    wins = wins_by_m(col)                               # (m, R): features won by each rank
    if not wins.shape[1]:
        return Result(not_computed="this fig. 3 table predates the winners' ranks (columns "
                      "won_rank1…): rerun ip_collisions", scale=o.scales["fig3"])
    ranks = wins.shape[1]
    won = (col.represented * col.n).groupby(col.m).sum().round().astype(int)
    per_m = {m: trend(w.to_numpy(), RACE_LEVEL, len(wins)) for m, w in wins.iterrows()}
    summed = wins.sum().to_numpy()
    pooled, mode = trend(summed, RACE_LEVEL), int(summed.argmax()) + 1
    rises = [m for m, r in per_m.items() if r["verdict"] == "rises"]
    why = [f"n {n} < the paper's {PAPER_N}"] if n < PAPER_N else []
    if not rises and pooled["verdict"] is None:
        why.append(f"no trend decided pooled over m at {RACE_LEVEL / 2:.1%}")
    elif not rises and pooled["verdict"] == "falls" and mode != 1:
        why.append(f"the wins fall with rank, but rank {mode} won more than rank 1 pooled "
                   f"({summed[mode - 1]} against {summed[0]})")
    ok = (not rises and pooled["verdict"] != "rises" and mode == 1 and
          (pooled["mean_rank"] < (ranks + 1) / 2 if why else pooled["verdict"] == "falls"))
    top, total = int(summed[0]), max(int(won.sum()), 1)
    poly = int(col.polysemantic.sum())
    return Result(ok, pooled["mean_rank"], _rank_se(summed), scale=o.scales["fig3"],
                  inconclusive="; ".join(why) or None, numbers={
        "ranks": ranks, "flat": (ranks + 1) / 2, "pooled": trend_words(pooled), "top": top,
        "total": total, "share": top / total, "level": RACE_LEVEL / 2, "ms": len(wins),
        "per_m": "; ".join(f"m {m}: {trend_words(r)}" + (
            f", ranks 1–{ranks} {r['total'] * m / (won[m] * ranks):.2g}× chance" if won[m]
            else "") for m, r in per_m.items()),
        "traced": (f"; {col.poly_from_init.sum() / poly:.1%} of the {poly} polysemantic neurons "
                   "joined two features' largest initial weights (the footnote's 'not "
                   "necessarily')" if poly else ""),
        "breaks": (f"; a pooled mean rank of {pooled['breaks']:.2f} or more would not read as "
                   "a fall" if pooled["breaks"] else "")})


def _rank_se(wins: np.ndarray) -> float | None:
    """The standard error of the mean rank of the wins ``wins`` ((R,) by rank), None with fewer
    than two."""
    r, total = np.arange(1, len(wins) + 1), wins.sum()
    if total < 2:
        return None
    mean = wins @ r / total
    return float(np.sqrt(wins @ (r - mean) ** 2 / (total - 1) / total))


@CLAIMS.record(Record(
    id="fig3.collisions_init", statement="benign collisions at init ≈ C(n, 2)/(2m), i.e. c = "
    "(n − 1)/(4n)", source="sec. 2.1", paper="c = (n − 1)/(4n)", paper_scale="n 256, m 256–4096",
    figure="fig3", stages=("ip_collisions",), kind="sanity check",
    ours="c = {value:.3f} ± {se:.3f} (quasi-Poisson fit of the benign pairs at init over {models} "
         "models), {z:.1f} s.e. from the exact {exact:.3f}",
    tolerance="≤ 3 s.e.: a 0.3% chance of a false alarm"))
def _collisions_init(o: Outputs) -> Result:
    """Within 3 standard errors of the exact expectation, as every Monte Carlo check here (a
    0.3% chance of a false alarm: a check of our code, not a 95% interval's 5%)."""
    if unfit := _unfit(o):
        return unfit
    fit, expect = o.fit_init, (o.ip.collisions.n - 1) / (4 * o.ip.collisions.n)
    se = (fit["hi"] - fit["lo"]) / 2 / scipy.stats.norm.ppf(0.5 + o.ip.collisions.level / 2)
    z = abs(fit["c"] - expect) / se
    return Result(z <= 3, fit["c"], se, scale=o.scales["fig3"], numbers={
        "value": fit["c"], "se": se, "models": len(o.collisions), "z": z, "exact": expect})


for _kind in ("bipolar", "normal"):
    CLAIMS.record(Record(
        id=f"appc.fourth_moment_{_kind}", statement="E(W_i·ξ)⁴ = 3σ⁴‖W_i‖⁴ + ‖W_i‖₄⁴(μ₄ − 3σ⁴), "
        f"{_kind} noise", source="app. C", paper="formula", **_CHECKED, **_MC))(
        lambda o, kind=_kind: _mc(o, f"E(w·ξ)⁴, {kind} noise"))

#: The row of an erratum on a Monte Carlo estimate (:func:`_printed`).
_PRINTED = {"ours": "{value:.5g} ± {se:.2g} (Monte Carlo): {z_printed:.0f} s.e. from "
                    "{printed_name} = {printed:.5g}, {z:.1f} s.e. from {corrected_name} = "
                    "{closed:.5g}",
            "tolerance": "> 3 s.e. from the printed value and ≤ 3 s.e. from the corrected one"}


def _printed(o: Outputs, check: str, printed: float, printed_name: str, corrected_name: str
             ) -> Result:
    """An erratum on a Monte Carlo estimate: > 3 s.e. from the printed value and ≤ 3 s.e. from
    the corrected one (the check's closed form)."""
    r = o.by_check.loc[check]
    z_printed = abs(r.estimate - printed) / r.se
    z_corrected = abs(r.estimate - r.closed_form) / r.se
    return Result(z_printed > 3 and z_corrected <= 3, r.estimate, r.se, scale=o.scales["mc"],
                  numbers={"value": r.estimate, "se": r.se, "z_printed": z_printed,
                           "printed_name": printed_name, "printed": printed, "z": z_corrected,
                           "corrected_name": corrected_name, "closed": r.closed_form})


@CLAIMS.record(Record(
    id="appc.six_sigma", statement=r"$E(W_i \cdot \xi)^4 = \sum_j W_{ij}^4 \mu_4 + 6 \sum_{j \neq "
    r"j'} W_{ij}^2 W_{ij'}^2 \sigma^4$", source="app. C", paper="6 over ordered pairs j ≠ j'",
    paper_scale="—", figure=None, stages=_CHECK, kind="erratum", **_PRINTED))
def _six_sigma(o: Outputs) -> Result:
    return _printed(o, "E(w·ξ)⁴, bipolar noise",
                    o.by_check.loc[theory.PRINTED_FOURTH_MOMENT].closed_form,
                    r"the printed $6 \sum_{j \neq j'}$",
                    r"$3\sigma^4 \|w\|^4 + \|w\|_4^4 (\mu_4 - 3\sigma^4)$, "
                    r"i.e. $3 \sum_{j \neq j'}$")


@CLAIMS.record(Record(
    id="appc.coefficient_bipolar", statement="η² coefficient of ‖W_i‖₄⁴ in the next-step loss, "
    "bipolar (negative: sparsity rewarded)", source="app. C, sec. 3.2", paper="16σ⁴·(−2) < 0",
    **_CHECKED, **_EXACT))
def _coefficient_bipolar(o: Outputs) -> Result:
    return _exact(o, "‖W_i‖₄⁴ coefficient of the next-step loss, bipolar noise", 1e-9,
                  o.scales["exact"])


@CLAIMS.record(Record(
    id="appc.coefficient_normal", statement="the same, normal noise (zero: no push)",
    source="app. C, sec. 3.2", paper="16σ⁴·0 = 0", **_CHECKED, **_EXACT))
def _coefficient_normal(o: Outputs) -> Result:
    return _exact(o, "‖W_i‖₄⁴ coefficient of the next-step loss, normal noise", 1e-9,
                  o.scales["exact"])


@CLAIMS.record(Record(
    id="figs45.random_fourth", statement="‖u‖₄⁴ of a random unit vector in R^m is 3/m (the "
    "captions: its large-m value; exactly 3/(m + 2) at the m the figures use)",
    source="figs. 4–5", paper="3/m", paper_scale="m 16", figure="fig4", stages=_CHECK,
    kind="caveat", **_PRINTED))
def _random_fourth(o: Outputs) -> Result:
    return _printed(o, "random unit vector fourth norm", 3 / o.ip.checks.m, "3/m",
                    "3/(m + 2), the exact expectation (3/m is its limit)")


CLAIMS.include(noise_claims.PART)                       # figs. 4–6, after the rest
