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

from tms.core.claim_rows import Claim, Claims, span
from tms.persian_rug import bounds, compare, scaling
from tms.persian_rug.evidence import PAPER_GRID, Outputs, exponent, interval
from tms.persian_rug.scaling import MIN_POINTS, trained_source

#: The "constant factor" of the abstract, "up to logarithmic factors" in sec. 4.3.3: at every fixed
#: ratio, the theory's loss over the lower bound of any elementwise activation may grow at most as
#: this power of log(1/p) as p falls in the fits' regime (0: a constant).
MAX_LOG_POWER = 1.0
_THEORY = ("the theory (n_s → ∞)", "bounds", ("pr_scaling",))

CLAIMS = Claims(empirical=("pr_train", "pr_fig3"))


@CLAIMS.claim("scaling.initial_loss", "L0(p) ≥ p/3 − p²/9 (loss as ratio → 0)", "sec. 4.3.1",
              "p/3 − p²/9", "—", "initial_loss", ("pr_scaling",), "erratum")
def _initial_loss(claim: Claim, o: Outputs) -> dict:
    p = o.theory_grid.p.to_numpy()
    below = float(np.max(o.theory_grid.L0.to_numpy() / bounds.paper_initial_bound(p)))
    return claim.row(
        below < 1, f"L0 = Var(x) = p/3 − p²/4 lies below p/3 − p²/9 at every p (max L0/bound "
        f"{below:.4f}; the bound uses (E u)² = 1/9 instead of 1/4); drawn against the trained "
        "losses", "L0 < bound at every p shows the bound is wrong", f"p {span(p)}", value=below)


@CLAIMS.claim("scaling.bounds_ordered", "C·p²/r < L < O(p²/r · log 1/p) for p/r ≪ 1 (bounds "
              "derived from the theory)", "sec. 4.3.2–4.3.3, app. D", "lower and upper bounds",
              "—", "bounds", ("pr_scaling",), "sanity check")
def _bounds_ordered(claim: Claim, o: Outputs) -> dict:
    grid = o.theory_grid
    regime = grid[grid.p / grid.ratio <= o.max_p_over_r]
    spread = regime.upper / regime.lower
    return claim.row(
        bool(np.all((grid.lower <= grid.loss * (1 + 1e-9))
                    & (grid.loss <= grid.upper * (1 + 1e-9)))),
        f"lower ≤ optimal symmetric ≤ upper at all {len(grid)} theory points; "
        f"upper/lower = {spread.min():.1f}–{spread.max():.1f} where p/r ≤ {o.max_p_over_r:g}",
        "ordered at every point", o.theory_scale(fits=False))


@CLAIMS.claim("scaling.constant_factor", "no elementwise or filtering change of the activation "
              "can improve the loss by more than a constant factor (abstract), up to "
              "logarithmic factors (sec. 4.3.3): the theory's loss against the lower bound of "
              "any such model", "abstract, sec. 4.3.3, app. D",
              "a constant factor (abstract); up to logarithmic factors (sec. 4.3.3)", *_THEORY)
def _constant_factor(claim: Claim, o: Outputs) -> dict:
    """At each ratio with three p or more in the fits' regime, the power of log(1/p) that the
    ratio optimal symmetric loss / lower bound follows as p falls (a least-squares slope of its
    log against log log(1/p)); reproduced where the largest is at most MAX_LOG_POWER."""
    regime = o.theory_grid[o.theory_grid.p / o.theory_grid.ratio <= o.max_p_over_r]
    factor = regime.loss / regime.lower
    power = {r: float(np.polyfit(np.log(np.log(1 / g.p)), np.log(factor[g.index]), 1)[0])
             for r, g in regime.groupby("ratio") if g.p.nunique() >= 3}
    if not power:
        return claim.not_computed("no ratio with three p or more in the fits' regime",
                                  o.theory_scale())
    top = max(power, key=power.get)
    return claim.row(
        power[top] <= MAX_LOG_POWER,
        f"optimal symmetric loss / lower bound between {factor.min():.2f} and {factor.max():.2f} "
        f"over {len(factor)} points; at a fixed ratio it follows log(1/p) to a power from "
        f"{min(power.values()):.2f} to {power[top]:.2f} (ratio {top:.2f}; median "
        f"{float(np.median(list(power.values()))):.2f}) over {len(power)} ratios: a constant "
        f"within a slowly growing logarithmic factor. The bound leaves out the loss on the "
        f"features that are off, so part of the growth may be the bound's",
        f"a power of log(1/p) at most {MAX_LOG_POWER:g} at every ratio, the 'logarithmic "
        f"factors' of sec. 4.3.3 (a faster growth breaks it)", o.theory_scale(),
        value=power[top])


@CLAIMS.claim("scaling.trained_bound", "no trained model falls below appendix D's lower bound "
              "on the loss of any elementwise model where the theory applies (ratio ≥ "
              f"{compare.MIN_RATIO:g}, p·n_s ≥ {compare.MIN_ACTIVE})", "sec. 4.3.3, app. D",
              "a lower bound on any elementwise model", PAPER_GRID, "bounds",
              ("pr_train", "pr_theory"))
def _trained_bound(claim: Claim, o: Outputs) -> dict:
    """Every trained cell in the theory's regime (compare.trained_vs_theory's in_regime; its
    models did not diverge; converged or not, since the bound holds for any elementwise model)
    with its trained loss (mean over seeds) at or above bounds.lower_bound at its p and realised
    ratio; the cells outside the regime that fall below it are named, with why. Its scale is
    that of those cells (evidence.Outputs.too_small), not of the converged ones."""
    cells = o.cells
    if not len(cells):
        return claim.not_computed("every trained model diverged", o.grid_scale)
    share = cells.loss / np.array([bounds.lower_bound(p, r) for p, r in zip(cells.p, cells.ratio)])
    inside = cells.in_regime.astype(bool)
    if not inside.any():
        return claim.not_computed(f"no trained cell with ratio ≥ {compare.MIN_RATIO:g} and "
                                  f"p·n_s ≥ {compare.MIN_ACTIVE}", o.grid_scale)
    lowest, below, out = float(share[inside].min()), share < 1, ~inside
    at = share[inside].idxmin()
    return claim.row(
        lowest >= 1, f"trained loss / bound over the {int(inside.sum())} trained cells in the "
        f"regime: lowest {lowest:.2f} (n_s {int(cells.n_s[at])}, p {cells.p[at]:g}, ratio "
        f"{cells.ratio[at]:.2f}), {int(below[inside].sum())} below 1. Outside the regime "
        f"{int(below[out].sum())} of {int(out.sum())} trained cells fall below it" + (
            f", down to {share[out].min():.2f}× (p·n_s {span(cells.p[below] * cells.n_s[below])}"
            f"): the bound takes the interference to be Gaussian with the symmetric variance, "
            f"which a few active features do not give" if below[out].any() else ""),
        "every trained cell in the regime, converged or not (the bound holds for any "
        "elementwise model), at or above the bound (its held-out loss); a cell at 0.99× the "
        "bound breaks it", o.grid_scale, value=lowest,
        inconclusive=o.too_small(cells=cells[inside], kind="trained in-regime"))


#: The law fitted with the exact σ², and its term β′ (tms.persian_rug.scaling):
#: log L = α′ log p + β′ log(n_s/n_d − 1) + c′.
BETA_PRIME = ("p, n_s/n_d − 1", "n_s/n_d − 1")


class _Judged(NamedTuple):
    """A fitted exponent judged against the paper's (:func:`_judged`)."""

    ok: bool           # the estimate within target ± tolerance
    test: str          # "β′ within +1 ± 0.14 (multiplying L by log(r/p) moves it 0.14 …)"
    wide: str | None   # why the fit cannot decide it (its interval wider than the tolerance and
                       # reaching the band), or None


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


def _judged(est: pd.Series, points: pd.DataFrame, law: str, term: str, name: str) -> _Judged:
    """The fitted exponent ``est`` (evidence.exponent) of ``term`` (``name`` in words) in the
    fit of ``law`` to ``points`` (:func:`_fitted_points`), judged against the paper's
    (scaling.PAPER_EXPONENTS). The law holds "up to logarithmic factors" (sec. 4.3.3), so the
    tolerance is how far one such factor moves the exponent on those points
    (tms.persian_rug.scaling.log_factor_shift); any value outside target ± tolerance breaks it.
    Undecided where the fit's 95% interval is wider than the tolerance and reaches into the
    band; an interval wholly outside fails."""
    target = scaling.PAPER_EXPONENTS[term]
    tol, factor = scaling.log_factor_shift(points, law, term)
    lo, hi, half = target - tol, target + tol, (est.high - est.low) / 2
    test = (f"{name} within {_signed(target, 0)} ± {tol:.2f} (multiplying L by {factor} moves the "
            f"fitted {name} {tol:.2f} on these points, more than the other factor; {name} "
            f"outside [{_signed(lo)}, {_signed(hi)}] breaks it)")
    return _Judged(bool(lo <= est.estimate <= hi), test,
                   f"the 95% interval of {name} (±{half:.2f}) is wider than the tolerance"
                   if half > tol and est.low <= hi and est.high >= lo else None)


#: Why an exponent's tolerance is one logarithmic factor (the rows' words).
_WHY = "the law holds 'up to logarithmic factors' (sec. 4.3.3)"
#: The rows' rule for a fit too uncertain to decide.
_WIDE = "; undecided while the fit's 95% interval is wider than the tolerance and reaches the band"


def _exponent_row(claim: Claim, o: Outputs, law: str, term: str, name: str, scale: str,
                  note: str = "") -> dict:
    """The row of ``claim`` on the theory's exponent of ``term`` (``name``) in its fit of
    ``law``, judged by :func:`_judged`; not computed where it was not fitted; ``note`` follows
    our value, ``scale`` says the regime fitted."""
    est = exponent(o.fits, "theory", law, term)
    if not np.isfinite(est.estimate):
        return claim.not_computed(interval(est), scale)
    j = _judged(est, _fitted_points(o, est, "theory", law), law, term, name)
    return claim.row(j.ok, interval(est) + note, f"{j.test}: {_WHY}{_WIDE}", scale,
                     value=est.estimate, uncertainty=(est.high - est.low) / 2,
                     inconclusive=j.wide)


def _law_row(claim: Claim, o: Outputs, sources: Sequence[str], needs: int,
             inconclusive: str | None = None) -> dict:
    """The row of ``claim`` on the law :data:`BETA_PRIME` fitted (in the fits' regime) to the
    last of ``sources``: β′ and α′ each judged by :func:`_judged`, with the β′ of the other
    sources after ours; not computed without a source or where it was not fitted (fewer than
    ``needs`` points); inconclusive for ``inconclusive`` (the caller's: its scale), or where an
    interval cannot decide (:func:`_judged`) while neither exponent fails outright."""
    if not sources:
        return claim.not_computed("no fit of this source")
    source, others = sources[-1], sources[:-1]
    b, a = (exponent(o.fits, source, BETA_PRIME[0], t) for t in (BETA_PRIME[1], "p"))
    if not np.isfinite(b.estimate):
        return claim.not_computed(f"{int(b.points)} points of {source} in the regime, and the "
                                  f"fit needs {needs}", source)
    points = _fitted_points(o, b, source, BETA_PRIME[0])
    judged = [_judged(est, points, BETA_PRIME[0], term, name)
              for est, term, name in ((b, BETA_PRIME[1], "β′"), (a, "p", "α′"))]
    # an exponent failing outright decides the row, whatever the other's interval
    wide = [] if any(not j.ok and j.wide is None for j in judged) else [j.wide for j in judged]
    more = "; ".join(f"{s}: β′ = {exponent(o.fits, s, *BETA_PRIME).estimate:.2f}" for s in others)
    return claim.row(
        all(j.ok for j in judged),
        f"β′ = {interval(b)}; α′ = {interval(a)}" + (f" ({more})" if more else ""),
        f"{judged[0].test} and {judged[1].test}: {_WHY}{_WIDE}",
        f"{source}, p/r ≤ {o.max_p_over_r:g}", value=b.estimate,
        uncertainty=(b.high - b.low) / 2,
        inconclusive="; ".join(filter(None, (inconclusive, *wide))) or None)


@CLAIMS.claim("scaling.beta_prime", "L ∝ (n_s/n_d − 1) at fixed p (theory; the exact σ²)",
              "sec. 4.3", "+1", *_THEORY)
def _beta_prime(claim: Claim, o: Outputs) -> dict:
    return _exponent_row(claim, o, *BETA_PRIME, "β′", o.theory_scale())


@CLAIMS.claim("scaling.beta", "L ∝ 1/r at fixed p (theory, the paper's form)",
              "sec. 4.3, eq. 13 and 31", "−1 (for r ≪ 1)", *_THEORY)
def _beta(claim: Claim, o: Outputs) -> dict:
    return _exponent_row(
        claim, o, "p, r", "r", "β", o.theory_scale(small_r=True), f" (r ≤ "
        f"{o.small_r:g}: the paper's r ≪ 1; the (1 − r) factor of n_s/n_d − 1 steepens it at "
        "larger r)")


@CLAIMS.claim("scaling.alpha", "L ∝ p² at fixed r up to logarithms (theory)", "sec. 4.3, eq. 13",
              "2 (× log 1/p)", *_THEORY)
def _alpha(claim: Claim, o: Outputs) -> dict:
    return _exponent_row(claim, o, BETA_PRIME[0], "p", "α′", o.theory_scale(),
                         "; log(1/p) lowers the local exponent")


@CLAIMS.claim("scaling.rug", "the same law for the Persian rug", "sec. 4.3", "α′ = 2, β′ = +1",
              _THEORY[0], "bounds", ("pr_scaling", "pr_rug"))
def _rug_law(claim: Claim, o: Outputs) -> dict:
    rug = [s for s in o.fits.source.unique() if s.startswith("Persian rug")]
    return _law_row(claim, o, rug[-1:], MIN_POINTS)


@CLAIMS.claim("scaling.trained", "the same law for trained models (largest n_s fitted)",
              "sec. 4.3", "α′ = 2, β′ = +1", PAPER_GRID, "bounds", ("pr_scaling", "pr_train"))
def _trained_law(claim: Claim, o: Outputs) -> dict:
    fitted = [n for n in sorted(o.trained.n_s.unique()) if trained_source(n) in set(o.fits.source)]
    return _law_row(claim, o, [trained_source(n) for n in fitted], MIN_POINTS,
                    o.too_small(fitted))
