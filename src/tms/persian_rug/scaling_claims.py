"""The Persian Rug paper's claims on section 4.3 and appendix D (:data:`CLAIMS`): the limits and
bounds of the theory, the scaling laws fitted to the theory, the rug and the trained models
(tms.persian_rug.scaling, judged by tms.persian_rug.evidence), and appendix D's bound against
the trained models; declared beside their checks like the rest of the paper's claims, which take
them in at their place in the report's order (tms.persian_rug.claims, Claims.include)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from tms.core.claim_rows import Claims, Record, Result, span, too_wide
from tms.persian_rug import bounds, compare, scaling
from tms.persian_rug.evidence import PAPER_GRID, Outputs, exponent, interval
from tms.persian_rug.scaling import MIN_POINTS, trained_source

#: The "constant factor" of the abstract, "up to logarithmic factors" in sec. 4.3.3: at every fixed
#: ratio, the theory's loss over the lower bound of any elementwise activation may grow at most as
#: this power of log(1/p) as p falls in the fits' regime (0: a constant).
MAX_LOG_POWER = 1.0
#: Where the claims on the theory's fits are judged, drawn and computed.
_THEORY = {"paper_scale": "the theory (n_s → ∞)", "figure": "bounds", "stages": ("pr_scaling",)}

CLAIMS = Claims(empirical=("pr_train", "pr_fig3"))


@CLAIMS.record(Record(
    id="scaling.initial_loss", statement="L0(p) ≥ p/3 − p²/9 (loss as ratio → 0)",
    source="sec. 4.3.1", paper="p/3 − p²/9", paper_scale="—", stages=("pr_scaling",),
    figure="initial_loss", kind="erratum",
    ours="L0 = Var(x) = p/3 − p²/4 lies below p/3 − p²/9 at every p (max L0/bound {value:.4f}; "
         "the bound uses (E u)² = 1/9 instead of 1/4); drawn against the trained losses",
    tolerance="L0 < bound at every p shows the bound is wrong"))
def _initial_loss(o: Outputs) -> Result:
    p = o.theory_grid.p.to_numpy()
    below = float(np.max(o.theory_grid.L0.to_numpy() / bounds.paper_initial_bound(p)))
    return Result(below < 1, below, numbers={"value": below}, scale=f"p {span(p)}")


@CLAIMS.record(Record(
    id="scaling.bounds_ordered", statement="C·p²/r < L < O(p²/r · log 1/p) for p/r ≪ 1 (bounds "
    "derived from the theory)", source="sec. 4.3.2–4.3.3, app. D",
    paper="lower and upper bounds", paper_scale="—", stages=("pr_scaling",), figure="bounds",
    kind="sanity check",
    ours="lower ≤ optimal symmetric ≤ upper at all {points} theory points; upper/lower = "
         "{low:.1f}–{high:.1f} where p/r ≤ {max_p_over_r:g}",
    tolerance="ordered at every point"))
def _bounds_ordered(o: Outputs) -> Result:
    grid = o.theory_grid
    spread = (grid.upper / grid.lower)[grid.p / grid.ratio <= o.max_p_over_r]
    ordered = (grid.lower <= grid.loss * (1 + 1e-9)) & (grid.loss <= grid.upper * (1 + 1e-9))
    return Result(bool(np.all(ordered)), scale=o.theory_scale(fits=False), numbers={
        "points": len(grid), "low": spread.min(), "high": spread.max(),
        "max_p_over_r": o.max_p_over_r})


@CLAIMS.record(Record(
    id="scaling.constant_factor", statement="no elementwise or filtering change of the activation "
    "can improve the loss by more than a constant factor (abstract), up to logarithmic factors "
    "(sec. 4.3.3): the theory's loss against the lower bound of any such model",
    source="abstract, sec. 4.3.3, app. D",
    paper="a constant factor (abstract); up to logarithmic factors (sec. 4.3.3)",
    **_THEORY,
    ours="optimal symmetric loss / lower bound between {low:.2f} and {high:.2f} over {points} "
         "points; at a fixed ratio it follows log(1/p) to a power from {least:.2f} to "
         "{value:.2f} (ratio {at:.2f}; median {median:.2f}) over {ratios} ratios: a constant "
         "within a slowly growing logarithmic factor. The bound leaves out the loss on the "
         "features that are off, so part of the growth may be the bound's",
    tolerance="a power of log(1/p) at most {most:g} at every ratio, the 'logarithmic factors' "
              "of sec. 4.3.3 (a faster growth breaks it)"))
def _constant_factor(o: Outputs) -> Result:
    """At each ratio with three p or more in the fits' regime, the power of log(1/p) that the
    ratio optimal symmetric loss / lower bound follows as p falls (a least-squares slope of its
    log against log log(1/p)); reproduced where the largest is at most MAX_LOG_POWER."""
    regime = o.theory_grid[o.theory_grid.p / o.theory_grid.ratio <= o.max_p_over_r]
    factor = regime.loss / regime.lower
    power = {r: float(np.polyfit(np.log(np.log(1 / g.p)), np.log(factor[g.index]), 1)[0])
             for r, g in regime.groupby("ratio") if g.p.nunique() >= 3}
    if not power:
        return Result(not_computed="no ratio with three p or more in the fits' regime",
                      scale=o.theory_scale())
    top = max(power, key=power.get)
    return Result(power[top] <= MAX_LOG_POWER, power[top], scale=o.theory_scale(), numbers={
        "low": factor.min(), "high": factor.max(), "points": len(factor),
        "least": min(power.values()), "value": power[top], "at": top,
        "median": float(np.median(list(power.values()))), "ratios": len(power),
        "most": MAX_LOG_POWER})


@CLAIMS.record(Record(
    id="scaling.trained_bound", statement="no trained model falls below appendix D's lower bound "
    f"on the loss of any elementwise model where the theory applies (ratio ≥ "
    f"{compare.MIN_RATIO:g}, p·n_s ≥ {compare.MIN_ACTIVE})", source="sec. 4.3.3, app. D",
    paper="a lower bound on any elementwise model", paper_scale=PAPER_GRID, figure="bounds",
    stages=("pr_train", "pr_theory"),
    ours="trained loss / bound over the {inside} trained cells in the regime: lowest {value:.2f} "
         "(n_s {n_s}, p {p:g}, ratio {ratio:.2f}), {below} below 1. Outside the regime "
         "{below_out} of {out} trained cells fall below it{why}",
    tolerance="every trained cell in the regime, converged or not (the bound holds for any "
              "elementwise model), at or above the bound (its held-out loss); a cell at 0.99× "
              "the bound breaks it"))
def _trained_bound(o: Outputs) -> Result:
    """Every trained cell in the theory's regime (compare.trained_vs_theory's in_regime; its
    models did not diverge; converged or not, since the bound holds for any elementwise model)
    with its trained loss (mean over seeds) at or above bounds.lower_bound at its p and realised
    ratio; the cells outside the regime that fall below it are named, with why. Its scale is
    that of those cells (evidence.Outputs.too_small), not of the converged ones."""
    cells = o.cells
    if not len(cells):
        return Result(not_computed="every trained model diverged", scale=o.grid_scale)
    share = cells.loss / np.array([bounds.lower_bound(p, r) for p, r in zip(cells.p, cells.ratio)])
    inside = cells.in_regime.astype(bool)
    if not inside.any():
        return Result(not_computed=f"no trained cell with ratio ≥ {compare.MIN_RATIO:g} and "
                      f"p·n_s ≥ {compare.MIN_ACTIVE}", scale=o.grid_scale)
    lowest, below, out = float(share[inside].min()), share < 1, ~inside
    at = share[inside].idxmin()
    why = (f", down to {share[out].min():.2f}× (p·n_s {span(cells.p[below] * cells.n_s[below])}"
           "): the bound takes the interference to be Gaussian with the symmetric variance, "
           "which a few active features do not give") if below[out].any() else ""
    return Result(lowest >= 1, lowest, scale=o.grid_scale, numbers={
        "inside": int(inside.sum()), "value": lowest, "n_s": int(cells.n_s[at]),
        "p": cells.p[at], "ratio": cells.ratio[at], "below": int(below[inside].sum()),
        "below_out": int(below[out].sum()), "out": int(out.sum()), "why": why},
        inconclusive=o.too_small(cells=cells[inside], kind="trained in-regime"))


#: The law fitted with the exact σ², and its term β′ (tms.persian_rug.scaling):
#: log L = α′ log p + β′ log(n_s/n_d − 1) + c′.
BETA_PRIME = ("p, n_s/n_d − 1", "n_s/n_d − 1")


class _Judged(NamedTuple):
    """A fitted exponent judged against the paper's (:func:`_judged`)."""

    ok: bool           # the estimate within target ± tolerance
    numbers: dict      # what :data:`_FIT` and :data:`_TEST` read, keyed as they name them
    wide: str | None   # why the fit cannot decide it (its interval wider than the tolerance and
                       # reaching the band), or None


#: A fitted exponent in words, and its test (:func:`_judged`); ``k`` stands for the key that
#: :func:`_words` gives the exponent's numbers in a row's template.
_FIT = "{k_est:.2f} [{k_low:.2f}, {k_high:.2f}] ({k_points} points)"
_TEST = ("{k_name} within {k_target} ± {k_tol:.2f} (multiplying L by {k_factor} moves the fitted "
         "{k_name} {k_tol:.2f} on these points, more than the other factor; {k_name} outside "
         "[{k_lo}, {k_hi}] breaks it)")


def _words(template: str, key: str) -> str:
    """``template`` (:data:`_FIT`, :data:`_TEST`) reading the exponent's numbers under ``key``."""
    return template.replace("{k_", "{" + key + "_")


def _signed(x: float, digits: int = 2) -> str:
    """x with its sign, a true minus and ``digits`` decimals (a rounded −0 reads +0): +1.19,
    −0.60."""
    text = f"{x:+.{digits}f}"
    return ("+" + text[1:] if float(text) == 0 else text).replace("-", "−")


def _fitted_points(o: Outputs, est: pd.Series, source: str, law: str) -> pd.DataFrame:
    """The points the fit of ``law`` to ``source`` was made on (Outputs.fit_points), ``est`` a
    row of that fit (evidence.exponent). Raises ValueError when the fit's point count is not
    theirs (a fits table older than its inputs)."""
    points = o.fit_points(source, law)
    if len(points) != int(est.points):
        raise ValueError(f"the fit of {law} to {source} has {int(est.points)} points, its "
                         f"inputs {len(points)} in the regime: rerun stage pr_scaling")
    return points


def _judged(est: pd.Series, points: pd.DataFrame, law: str, term: str, name: str,
            key: str) -> _Judged:
    """The fitted exponent ``est`` (evidence.exponent) of ``term`` (``name`` in words) in the
    fit of ``law`` to ``points`` (:func:`_fitted_points`), judged against the paper's
    (scaling.PAPER_EXPONENTS), its numbers under ``key`` (:func:`_words`). The law holds "up to
    logarithmic factors" (sec. 4.3.3), so the tolerance is how far one such factor moves the
    exponent on those points (tms.persian_rug.scaling.log_factor_shift); any value outside
    target ± tolerance breaks it. Undecided where the fit's 95% interval is wider than the
    tolerance and reaches into the band; an interval wholly outside fails."""
    target = scaling.PAPER_EXPONENTS[term]
    tol, factor = scaling.log_factor_shift(points, law, term)
    lo, hi = target - tol, target + tol
    numbers = {"name": name, "target": _signed(target, 0), "tol": tol, "factor": factor,
               "lo": _signed(lo), "hi": _signed(hi), "est": est.estimate, "low": est.low,
               "high": est.high, "points": int(est.points)}
    return _Judged(bool(lo <= est.estimate <= hi), {f"{key}_{k}": v for k, v in numbers.items()},
                   too_wide(est.low, est.high, target, tol, f"the 95% interval of {name}"))


#: Why an exponent's tolerance is one logarithmic factor (the rows' words).
_WHY = "the law holds 'up to logarithmic factors' (sec. 4.3.3)"
#: The rows' rule for a fit too uncertain to decide.
_WIDE = "; undecided while the fit's 95% interval is wider than the tolerance and reaches the band"
#: The rows of an exponent of the theory's fits (:func:`_exponent`), and of a law (:func:`_law`).
_EXPONENT = {"ours": _words(_FIT, "e") + "{note}", "tolerance": _words(_TEST, "e") + ": " + _WHY
             + _WIDE}
_LAW = {"ours": f"β′ = {_words(_FIT, 'b')}; α′ = {_words(_FIT, 'a')}{{more}}",
        "tolerance": f"{_words(_TEST, 'b')} and {_words(_TEST, 'a')}: {_WHY}{_WIDE}"}


def _exponent(o: Outputs, law: str, term: str, name: str, scale: str, note: str = "") -> Result:
    """The theory's exponent of ``term`` (``name``) in its fit of ``law``, judged by
    :func:`_judged`; not computed where it was not fitted; ``note`` follows our value, ``scale``
    says the regime fitted."""
    est = exponent(o.fits, "theory", law, term)
    if not np.isfinite(est.estimate):
        return Result(not_computed=interval(est), scale=scale)
    j = _judged(est, _fitted_points(o, est, "theory", law), law, term, name, "e")
    return Result(j.ok, est.estimate, (est.high - est.low) / 2, {**j.numbers, "note": note},
                  scale, inconclusive=j.wide)


def _law(o: Outputs, sources: Sequence[str], needs: int, inconclusive: str | None = None
         ) -> Result:
    """The law :data:`BETA_PRIME` fitted (in the fits' regime) to the last of ``sources``: β′
    and α′ each judged by :func:`_judged`, with the β′ of the other sources after ours; not
    computed without a source or where it was not fitted (fewer than ``needs`` points);
    inconclusive for ``inconclusive`` (the caller's: its scale), or where an interval cannot
    decide (:func:`_judged`) while neither exponent fails outright."""
    if not sources:
        return Result(not_computed="no fit of this source")
    source, others = sources[-1], sources[:-1]
    b, a = (exponent(o.fits, source, BETA_PRIME[0], t) for t in (BETA_PRIME[1], "p"))
    if not np.isfinite(b.estimate):
        return Result(not_computed=f"{int(b.points)} points of {source} in the regime, and the "
                      f"fit needs {needs}", scale=source)
    points = _fitted_points(o, b, source, BETA_PRIME[0])
    judged = [_judged(est, points, BETA_PRIME[0], term, name, key)
              for est, term, name, key in ((b, BETA_PRIME[1], "β′", "b"), (a, "p", "α′", "a"))]
    # an exponent failing outright decides the row, whatever the other's interval
    wide = [] if any(not j.ok and j.wide is None for j in judged) else [j.wide for j in judged]
    more = "; ".join(f"{s}: β′ = {exponent(o.fits, s, *BETA_PRIME).estimate:.2f}" for s in others)
    return Result(all(j.ok for j in judged), b.estimate, (b.high - b.low) / 2,
                  {**judged[0].numbers, **judged[1].numbers, "more": f" ({more})" if more else ""},
                  f"{source}, p/r ≤ {o.max_p_over_r:g}",
                  inconclusive="; ".join(filter(None, (inconclusive, *wide))) or None)


@CLAIMS.record(Record(
    id="scaling.beta_prime", statement="L ∝ (n_s/n_d − 1) at fixed p (theory; the exact σ²)",
    source="sec. 4.3", paper="+1", **_THEORY, **_EXPONENT))
def _beta_prime(o: Outputs) -> Result:
    return _exponent(o, *BETA_PRIME, "β′", o.theory_scale())


@CLAIMS.record(Record(
    id="scaling.beta", statement="L ∝ 1/r at fixed p (theory, the paper's form)",
    source="sec. 4.3, eq. 13 and 31", paper="−1 (for r ≪ 1)", **_THEORY, **_EXPONENT))
def _beta(o: Outputs) -> Result:
    return _exponent(o, "p, r", "r", "β", o.theory_scale(small_r=True), f" (r ≤ {o.small_r:g}: "
                     "the paper's r ≪ 1; the (1 − r) factor of n_s/n_d − 1 steepens it at larger "
                     "r)")


@CLAIMS.record(Record(
    id="scaling.alpha", statement="L ∝ p² at fixed r up to logarithms (theory)",
    source="sec. 4.3, eq. 13", paper="2 (× log 1/p)", **_THEORY, **_EXPONENT))
def _alpha(o: Outputs) -> Result:
    return _exponent(o, BETA_PRIME[0], "p", "α′", o.theory_scale(),
                     "; log(1/p) lowers the local exponent")


@CLAIMS.record(Record(
    id="scaling.rug", statement="the same law for the Persian rug", source="sec. 4.3",
    paper="α′ = 2, β′ = +1", paper_scale=_THEORY["paper_scale"], figure="bounds",
    stages=("pr_scaling", "pr_rug"), **_LAW))
def _rug_law(o: Outputs) -> Result:
    rug = [s for s in o.fits.source.unique() if s.startswith("Persian rug")]
    return _law(o, rug[-1:], MIN_POINTS)


@CLAIMS.record(Record(
    id="scaling.trained", statement="the same law for trained models (largest n_s fitted)",
    source="sec. 4.3", paper="α′ = 2, β′ = +1", paper_scale=PAPER_GRID, figure="bounds",
    stages=("pr_scaling", "pr_train"), **_LAW))
def _trained_law(o: Outputs) -> Result:
    fitted = [n for n in sorted(o.trained.n_s.unique()) if trained_source(n) in set(o.fits.source)]
    return _law(o, [trained_source(n) for n in fitted], MIN_POINTS, o.too_small(fitted))
