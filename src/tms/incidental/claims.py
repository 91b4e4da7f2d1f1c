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

from tms.core.claim_rows import Claim, Claims, max_z
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


#: The claims of *Incidental polysemanticity* in report order, each checked on
#: tms.incidental.evidence.Outputs.
CLAIMS = Claims(empirical=("ip_collisions", "ip_noise", "ip_sweep", "ip_single"),
                central=("fig3.polysemantic",))


@CLAIMS.claim("fig2.l1_constant", "‖W_i‖₁ = Θ(1/(1/√m + λt))", "fig. 2, sec. 2", "constants ≈ 1",
              _ODE, "fig2", _SPARSE)
def _l1_constant(claim: Claim, o: Outputs) -> dict:
    ratio = o.sparsification["ratio"].values()
    lo, hi = min(v[0] for v in ratio), max(v[1] for v in ratio)
    return claim.row(lo >= 1 / 3 and hi <= 3, f"‖W_i‖₁·(1/√m + λt) from {lo:.2f} to {hi:.2f}",
                     "within [1/3, 3]: Θ(·) with constants near 1", o.scales["ode"])


@CLAIMS.claim("fig2.m_prime_time", "m′ reaches 1 at t = Θ(1/λ)", "fig. 2, sec. 2", "λt ≈ 1", _ODE,
              "fig2", _SPARSE)
def _m_prime_time(claim: Claim, o: Outputs) -> dict:
    t_end = o.sparsification["lam_t_end"]
    return claim.row(all(1 / 3 <= v <= 3 for v in t_end.values()),
                     "λt = " + ", ".join(f"{v:.2f} (m = {m:.0e})" for m, v in t_end.items()),
                     "within [1/3, 3]", o.scales["ode"])


@CLAIMS.claim("fig7.inside_bounds", "relative variance of the non-zero weights within appendix B's "
              "bounds (they hold by construction)", "fig. 7, app. B", "always", _ODE, "fig7",
              _SPARSE, "sanity check")
def _inside_bounds(claim: Claim, o: Outputs) -> dict:
    inside = min(o.sparsification["inside"].values())
    return claim.row(inside == 1.0, f"{inside:.1%} of the recorded times (worst m)", "100%",
                     o.scales["ode"], value=inside)


@CLAIMS.claim("fig7.relvar_constant", "relative variance a constant not far from 1 (m′ ≥ 10)",
              "fig. 7, app. B", "Θ(1), near 1", _ODE, "fig7", _SPARSE)
def _relvar_constant(claim: Claim, o: Outputs) -> dict:
    relvar = o.sparsification["relvar"].values()
    lo, hi = min(v[0] for v in relvar), max(v[1] for v in relvar)
    return claim.row(lo >= 0.25 and hi <= 4 and hi / lo <= 4,
                     f"from {lo:.2f} to {hi:.2f} ({hi / lo:.1f}× over the run)",
                     "within [1/4, 4] and varying by at most 4× while m′ falls to 10: Θ(1) "
                     "in m′ ('a constant not too far from 1', app. B)", o.scales["ode"],
                     value=hi / lo)


@CLAIMS.claim("appb.euler", "exact affine-map integration equals the authors' Euler scheme as "
              "dt → 0", "app. B", "error ∝ dt (first order)", "Euler dt 0.5", None, _SPARSE,
              "sanity check")
def _euler(claim: Claim, o: Outputs) -> dict:
    errs = o.sparsification["euler_error"]
    dts = sorted(errs, reverse=True)
    orders = [errs[a] / errs[b] / (a / b) for a, b in zip(dts, dts[1:])]
    return claim.row(all(0.8 <= r <= 1.25 for r in orders), "max |‖w‖₁ Euler/exact − 1|: "
                     + ", ".join(f"{errs[d]:.2%} (dt {d:g})" for d in dts),
                     "error ratio / dt ratio in [0.8, 1.25]: first order",
                     f"m {o.ip.sparsification.euler.m:g}, dt " + ", ".join(f"{d:g}" for d in dts))


def _mc_row(claim: Claim, o: Outputs, check: str) -> dict:
    """A closed form against its Monte Carlo estimate: within 3 standard errors."""
    r = o.by_check.loc[check]
    z = max_z(r.estimate, r.closed_form, r.se)
    return claim.row(z <= 3, f"{r.estimate:.5g} ± {r.se:.2g} (Monte Carlo; closed form "
                     f"{r.closed_form:.5g}, {z:.1f} s.e. off)",
                     "≤ 3 s.e.: a 0.3% chance of a false alarm", o.scales["mc"],
                     value=r.estimate, uncertainty=r.se)


def _exact_row(claim: Claim, o: Outputs, check: str, tol: float, scale: str) -> dict:
    """A closed form against an exact computation: within ``tol`` (absolute)."""
    r = o.by_check.loc[check]
    return claim.row(abs(r.estimate - r.closed_form) <= tol,
                     f"{check}: {r.estimate:.4g} (closed form {r.closed_form:.4g})",
                     f"|difference| ≤ {tol:g} (float64 integration error)", scale,
                     value=r.estimate)


@CLAIMS.claim("sec21.collision_probability", "benign collision probability 1/(2m)", "sec. 2.1",
              "1/(2m)", "—", None, _CHECK, "sanity check")
def _collision_probability(claim: Claim, o: Outputs) -> dict:
    return _mc_row(claim, o, "collision probability")


@CLAIMS.claim("sec21.interference_init", "interference at init Θ(n/m)", "sec. 2.1",
              "Θ(n/m); (n − 1)/(2m) for W_ik ~ N(0, 1/m) (ours)", "—", None, _CHECK,
              "sanity check")
def _interference_init(claim: Claim, o: Outputs) -> dict:
    return _mc_row(claim, o, "interference at init")


@CLAIMS.claim("sec21.decay_solution", "interference alone: q = W_i·W_j follows q = √C / (2 sinh("
              "asinh(√C/(2q₀)) + √C t)), C = s² − 4q², s = ‖W_i‖² + ‖W_j‖² (our solution)",
              "sec. 2.1", "−Θ(W_i·W_j) decay",
              "—", None, _CHECK, "sanity check")
def _decay_solution(claim: Claim, o: Outputs) -> dict:
    return _exact_row(claim, o, "interference decay: numerical W_i·W_j / exact solution − 1 "
                      "(max)", 1e-5, "two encodings")


@CLAIMS.claim("sec21.decay_rate", "positive W_i·W_j decays at rate ‖W_i‖² + ‖W_j‖²", "sec. 2.1",
              "rate ‖W_i‖² + ‖W_j‖²", "—", None, _CHECK, "sanity check")
def _decay_rate(claim: Claim, o: Outputs) -> dict:
    return _exact_row(claim, o, "interference decay: rate −d ln(W_i·W_j)/dt / (‖W_i‖² + ‖W_j‖²) "
                      "− 1 (max)", 1e-4, "two encodings")


def _unfit(claim: Claim, o: Outputs) -> dict | None:
    """The row of a fig. 3 claim when fewer than 2 models are left to fit, else None."""
    if o.fit is not None and o.fit_init is not None:
        return None
    return claim.not_computed(f"{len(o.collisions)} fig. 3 model(s) trained without diverging; "
                              "the fit needs 2", o.scales["fig3"])


def _beta_row(claim: Claim, o: Outputs, fit: dict, note: str, short: str | None = None) -> dict:
    """Fig. 3: the exponent β of m (``fit``: stats.m_exponent) has the paper's −1 in its
    interval [fit['lo'], fit['hi']]; a reproduction is inconclusive below the paper's n, or
    where ``short`` says why the run falls short of the claim's regime."""
    cfg, v, lo, hi = o.ip.collisions, fit["beta"], fit["lo"], fit["hi"]
    interval = f"{cfg.level:.0%} interval"
    small = "; ".join(filter(None, (
        f"n {cfg.n} < the paper's {PAPER_N}: at m = n the fit is dominated by a point where "
        "training removes collisions" if cfg.n < PAPER_N else None, short))) or None
    breaks = -1 - 1.05 * (hi - v)                # its interval then ends below −1
    return claim.row(lo <= -1 <= hi, f"β = {v:.2f}, {interval} [{lo:.2f}, {hi:.2f}]{note}",
                     f"−1 in the {interval}; an estimate of {breaks:.2f} with an interval of "
                     "this width breaks it", o.scales["fig3"], value=v,
                     uncertainty=(hi - lo) / 2, inconclusive=small)


@CLAIMS.claim("fig3.polysemantic", "polysemantic neurons ≈ c·n²/m with c = 1/4 ('the constant "
              "1/4 seems to be fairly accurate')", "fig. 3, sec. 2.1", "c = 0.25", _FIG3, "fig3",
              ("ip_collisions",))
def _polysemantic(claim: Claim, o: Outputs) -> dict:
    if unfit := _unfit(claim, o):
        return unfit
    cfg, fit, c = o.ip.collisions, o.fit, o.fit["c"]
    half, tol = (fit["hi"] - fit["lo"]) / 2, C_TOL * 0.25
    why = [f"n {cfg.n} < the paper's {PAPER_N}: at m = n the fit is dominated by a point where "
           "training removes collisions"] if cfg.n < PAPER_N else []
    if half > tol:
        why.append(f"the {cfg.level:.0%} interval (±{half:.3f}) is wider than the tolerance")
    return claim.row(abs(c - 0.25) <= tol, f"c = {c:.3f}, {cfg.level:.0%} interval "
                     f"[{fit['lo']:.3f}, {fit['hi']:.3f}] (one c over every m, each model "
                     f"weighted by its n²/m); per m: {_per_m(o)}",
                     f"|c − 1/4| ≤ {tol:g} ({C_TOL:.0%}): "
                     f"'fairly accurate'; c = {0.25 * (1 + 1.2 * C_TOL):.3f} breaks it",
                     o.scales["fig3"], value=c, uncertainty=half,
                     inconclusive="; ".join(why) or None)


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


@CLAIMS.claim("fig3.m_exponent", "at fixed n, polysemantic neurons fall as 1/m ('this trend "
              "of Θ(n²/m) does hold': the exponent of m, as m grows past n)", "fig. 3, sec. 2.1",
              "β = −1 (asymptotic)", _FIG3, "fig3", ("ip_collisions",))
def _m_exponent(claim: Claim, o: Outputs) -> dict:
    """Fig. 3's Θ(n²/m) is asymptotic: β is judged on the models at m > n (:func:`_regime`);
    the fit over every m, which m = n dominates, is reported as the finite-size curvature, not
    counted against the paper. With fewer than two m above n it reads inconclusive, in the
    direction of the fit over every m."""
    if unfit := _unfit(claim, o):
        return unfit
    try:
        e = stats.m_exponent(o.collisions.polysemantic, o.collisions.m, o.ip.collisions.level)
    except ValueError as err:                    # one m left, or no polysemantic neuron at all
        return claim.not_computed(str(err), o.scales["fig3"])
    n = o.ip.collisions.n
    full = (f"over every m (with m = n, where the curve bends): β = {e['beta']:.2f} "
            f"[{e['lo']:.2f}, {e['hi']:.2f}]")
    if (r := _regime(o)) is None:
        return _beta_row(claim, o, e, f" ({full}; Poisson fit of count ≈ A·m^β)",
                         f"fewer than two m above n {n}: the asymptotic regime is not reached")
    return _beta_row(claim, o, r, f" at m > n ({n}) (Poisson fit of count ≈ A·m^β; dispersion "
                     f"{r['dispersion']:.1f}); {full}: finite-size curvature, not counted")


@CLAIMS.claim("fig3.largest_wins", "the neuron that wins a feature is most likely the one of its "
              "largest initial weight: 'the largest weight at initialization is still the most "
              "likely to win the race all things considered' (the 'largest' coordinates whose "
              "benign collision makes a polysemantic neuron are the race's winners, 'not "
              "necessarily the largest weight at initialization')", "sec. 2.1, footnote 6",
              "wins fall with rank at init", _FIG3, "fig3", ("ip_collisions",))
def _largest_wins(claim: Claim, o: Outputs) -> dict:
    """The wins of ranks 1..R at init fall with rank pooled over the m ('all things
    considered'; race.trend, one-sided at half RACE_LEVEL), rank 1 winning the most of them
    pooled ('the most likely'), and rise at no m (two-sided, Bonferroni over the m); a rise at an
    m or pooled fails it. Pooled without a decided fall, or falling with another rank winning
    the most, it reads inconclusive, in the direction of the pooled mean rank and mode."""
    if unfit := _unfit(claim, o):
        return unfit
    col, n = o.collisions, o.ip.collisions.n
    wins = wins_by_m(col)                               # (m, R): features won by each rank
    if not wins.shape[1]:
        return claim.not_computed("this fig. 3 table predates the winners' ranks (columns "
                                  "won_rank1…): rerun ip_collisions", o.scales["fig3"])
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
    traced = (f"; {col.poly_from_init.sum() / poly:.1%} of the {poly} polysemantic neurons "
              "joined two features' largest initial weights (the footnote's 'not necessarily')"
              if poly else "")
    chance = "; ".join(f"m {m}: {trend_words(r)}" + (
        f", ranks 1–{ranks} {r['total'] * m / (won[m] * ranks):.2g}× chance" if won[m] else "")
        for m, r in per_m.items())
    breaks = (f"; a pooled mean rank of {pooled['breaks']:.2f} or more would not read as a fall"
              if pooled["breaks"] else "")
    return claim.row(
        ok, f"features won by ranks 1–{ranks} at init (no trend: mean rank {(ranks + 1) / 2:g}),"
        f" pooled over m: {trend_words(pooled)}; rank 1 won {top} of the {total} represented "
        f"features ({top / total:.1%}); per m (by chance ranks 1–{ranks} win {ranks}/m of the "
        f"features): "
        + chance + traced,
        f"'most likely to win, all things considered': the wins of ranks 1–{ranks} fall with "
        f"rank pooled over m (exact conditional test of their mean rank, each m's wins fixed, "
        f"one-sided at {RACE_LEVEL / 2:.1%}) and rank 1 wins the most of them; a rise pooled or "
        f"at any m (both sides, Bonferroni over the {len(wins)} m) fails it{breaks}",
        o.scales["fig3"], value=pooled["mean_rank"],
        uncertainty=_rank_se(wins.sum().to_numpy()), inconclusive="; ".join(why) or None)


def _rank_se(wins: np.ndarray) -> float | None:
    """The standard error of the mean rank of the wins ``wins`` ((R,) by rank), None with fewer
    than two."""
    r, total = np.arange(1, len(wins) + 1), wins.sum()
    if total < 2:
        return None
    mean = wins @ r / total
    return float(np.sqrt(wins @ (r - mean) ** 2 / (total - 1) / total))


@CLAIMS.claim("fig3.collisions_init", "benign collisions at init ≈ C(n, 2)/(2m), i.e. "
              "c = (n − 1)/(4n)", "sec. 2.1", "c = (n − 1)/(4n)", "n 256, m 256–4096", "fig3",
              ("ip_collisions",), "sanity check")
def _collisions_init(claim: Claim, o: Outputs) -> dict:
    """Within 3 standard errors of the exact expectation, as every Monte Carlo check here (a
    0.3% chance of a false alarm: a check of our code, not a 95% interval's 5%)."""
    if unfit := _unfit(claim, o):
        return unfit
    fit, expect = o.fit_init, (o.ip.collisions.n - 1) / (4 * o.ip.collisions.n)
    se = (fit["hi"] - fit["lo"]) / 2 / scipy.stats.norm.ppf(0.5 + o.ip.collisions.level / 2)
    z = abs(fit["c"] - expect) / se
    return claim.row(z <= 3, f"c = {fit['c']:.3f} ± {se:.3f} (quasi-Poisson fit of the benign "
                     f"pairs at init over {len(o.collisions)} models), {z:.1f} s.e. from the "
                     f"exact {expect:.3f}", "≤ 3 s.e.: a 0.3% chance of a false alarm",
                     o.scales["fig3"], value=fit["c"], uncertainty=se)


for _kind in ("bipolar", "normal"):
    @CLAIMS.claim(f"appc.fourth_moment_{_kind}", "E(W_i·ξ)⁴ = 3σ⁴‖W_i‖⁴ + ‖W_i‖₄⁴(μ₄ − 3σ⁴), "
                  f"{_kind} noise", "app. C", "formula", "—", None, _CHECK, "sanity check")
    def _fourth_moment(claim: Claim, o: Outputs, kind: str = _kind) -> dict:
        return _mc_row(claim, o, f"E(w·ξ)⁴, {kind} noise")


def _printed_row(claim: Claim, o: Outputs, check: str, printed: float, printed_name: str,
                 corrected_name: str) -> dict:
    """An erratum on a Monte Carlo estimate: > 3 s.e. from the printed value and ≤ 3 s.e. from
    the corrected one (the check's closed form)."""
    r = o.by_check.loc[check]
    z_printed = abs(r.estimate - printed) / r.se
    z_corrected = abs(r.estimate - r.closed_form) / r.se
    return claim.row(
        z_printed > 3 and z_corrected <= 3, f"{r.estimate:.5g} ± {r.se:.2g} (Monte Carlo): "
        f"{z_printed:.0f} s.e. from {printed_name} = {printed:.5g}, {z_corrected:.1f} s.e. from "
        f"{corrected_name} = {r.closed_form:.5g}",
        "> 3 s.e. from the printed value and ≤ 3 s.e. from the corrected one", o.scales["mc"],
        value=r.estimate, uncertainty=r.se)


@CLAIMS.claim("appc.six_sigma", r"$E(W_i \cdot \xi)^4 = \sum_j W_{ij}^4 \mu_4 + 6 \sum_{j \neq j'} "
              r"W_{ij}^2 W_{ij'}^2 \sigma^4$", "app. C",
              "6 over ordered pairs j ≠ j'", "—", None, _CHECK, "erratum")
def _six_sigma(claim: Claim, o: Outputs) -> dict:
    return _printed_row(claim, o, "E(w·ξ)⁴, bipolar noise",
                        o.by_check.loc[theory.PRINTED_FOURTH_MOMENT].closed_form,
                        r"the printed $6 \sum_{j \neq j'}$",
                        r"$3\sigma^4 \|w\|^4 + \|w\|_4^4 (\mu_4 - 3\sigma^4)$, "
                        r"i.e. $3 \sum_{j \neq j'}$")


@CLAIMS.claim("appc.coefficient_bipolar", "η² coefficient of ‖W_i‖₄⁴ in the next-step loss, "
              "bipolar (negative: sparsity rewarded)", "app. C, sec. 3.2", "16σ⁴·(−2) < 0", "—",
              None, _CHECK, "sanity check")
def _coefficient_bipolar(claim: Claim, o: Outputs) -> dict:
    return _exact_row(claim, o, "‖W_i‖₄⁴ coefficient of the next-step loss, bipolar noise", 1e-9,
                      o.scales["exact"])


@CLAIMS.claim("appc.coefficient_normal", "the same, normal noise (zero: no push)",
              "app. C, sec. 3.2", "16σ⁴·0 = 0", "—", None, _CHECK, "sanity check")
def _coefficient_normal(claim: Claim, o: Outputs) -> dict:
    return _exact_row(claim, o, "‖W_i‖₄⁴ coefficient of the next-step loss, normal noise", 1e-9,
                      o.scales["exact"])


@CLAIMS.claim("figs45.random_fourth", "‖u‖₄⁴ of a random unit vector in R^m is 3/m (the captions: "
              "its large-m value; exactly 3/(m + 2) at the m the figures use)", "figs. 4–5",
              "3/m", "m 16", "fig4", _CHECK, "caveat")
def _random_fourth(claim: Claim, o: Outputs) -> dict:
    return _printed_row(claim, o, "random unit vector fourth norm", 3 / o.ip.checks.m, "3/m",
                        "3/(m + 2), the exact expectation (3/m is its limit)")


CLAIMS.include(noise_claims.PART)                       # figs. 4–6, after the rest
