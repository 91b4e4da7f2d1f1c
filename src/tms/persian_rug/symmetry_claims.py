"""The Persian Rug paper's claims on figs. 4–7 and eq. 6 (:data:`CLAIMS`): the symmetry
statistics of the trained grids fall as n_s grows (:func:`_falls`, fig. 7's Λ to the level of
independent terms, :func:`_lyapunov`), fig. 6's identical variances and the variance bound of
eq. 6; declared beside their checks like the rest of the paper's claims, which take them in at
their place in the report's order (tms.persian_rug.claims, Claims.include). A trend in n_s is
judged on the median over cells of each cell's slope along the n_s ladder, with its bootstrap
interval (tms.persian_rug.ladder.ladder_slope)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tms.core.claim_rows import Claims, Record, Result, span
from tms.persian_rug.cells import cell_means
from tms.persian_rug.evidence import (
    DIVERGED,
    MODEL_KEYS,
    PAPER_GRID,
    PAPER_N_S,
    TRAINED,
    UNCONVERGED,
    Outputs,
)
from tms.persian_rug.ladder import falling, ladder_slope, median_interval, side

#: The share of grid cells that must hold fig. 6's "identical variances" (the paper: all; seed
#: noise allowed for).
MIN_FALLING = 0.8
#: Fig. 6's "identical variances": the relative spread √dvar_nu / mean_var_nu of the interference
#: variances across rows at most this, in at least :data:`MIN_FALLING` of the cells; fig. 7's
#: "approach uniformity": trained Λ at most this above untrained weights' (independent terms).
MAX_SPREAD = 0.1
_FALL = (" falls as n_s grows at every grid location, as training makes the model symmetric",
         "falls with n_s at all locations")

CLAIMS = Claims(empirical=("pr_train", "pr_fig3"),
                central=("sym.diag_var", "sym.bias_var", "sym.lyapunov"))


def _ladder(o: Outputs, col: str) -> tuple[str, tuple[float, float, float, int], float]:
    """How the statistic ``col`` of figs. 4–7 falls along the n_s ladder on the converged cells
    (o.means, non-empty): in words (its median per n_s, each cell's log-log slope, the same of
    the untrained weights of those cells), the median slope over cells with its bootstrap 95%
    interval and count (ladder.ladder_slope), and the untrained weights' median slope."""
    (med, share, cells, _), (random_med, random_share, _, _) = (falling(m[col]) for m in o.means)
    slope, lo, hi, k = fit = ladder_slope(o.means[0][col])
    random_slope, rlo, rhi, _ = ladder_slope(o.means[1][col])
    return (f"medians {', '.join(f'{v:.3g}' for v in med)} at n_s "
            f"{', '.join(str(n) for n in med.index)}; per cell log-log slope: median "
            f"{slope:.2f} [{lo:.2f}, {hi:.2f}] over {k} cells converged at two n_s or more; lower "
            f"at the largest than at the smallest n_s in {share:.0%} of {cells} cells. Untrained "
            f"weights: medians {', '.join(f'{v:.3g}' for v in random_med)}, slope "
            f"{random_slope:.2f} [{rlo:.2f}, {rhi:.2f}], falling in {random_share:.0%} of the "
            "cells"), fit, random_slope


#: The statistics of figs. 4–6 the convergence check keeps, as the column whose square they are
#: (tms.persian_rug.converge.SUMMARY, long_<column>); ΔVar(ν) is not kept there.
_CHECKED = {"diag_var": "diag_std", "bias_var": "bias_std"}


def _at_stop(checks: pd.DataFrame, table: pd.DataFrame, column: str) -> np.ndarray:
    """``column`` of ``table`` (a trained-grid table keyed by MODEL_KEYS) for the model each row
    of ``checks`` (convergence-check rows of the grids) reran, as the rule stopped it: one value
    per check row, NaN where ``table`` lacks the model."""
    return checks.assign(model="relu")[MODEL_KEYS].merge(
        table[MODEL_KEYS + [column]], on=MODEL_KEYS, how="left")[column].to_numpy()


def _trained_longer(o: Outputs, col: str) -> tuple[pd.Series, str] | None:
    """The statistic ``col`` of the converged cells (o.means) as if every model of each (n_s, p)
    moved as its convergence check's model did when trained longer: each cell scaled by that
    model's (long_<s> / <s>)², s the column of :data:`_CHECKED` (its own value in the trained
    table), a sensitivity check resting on one model per (n_s, p); and the factors applied at the
    largest n_s in words. Only passing checks (drop ≤ o.tolerance: a converged cell has one)
    count. None for a statistic the check does not keep, or without such a check."""
    std = _CHECKED.get(col)
    if std is None:
        return None
    checks = o.converge[(o.converge.source == "grid") & (o.converge["drop"] <= o.tolerance)
                        & np.isfinite(o.converge[f"long_{std}"])]
    if not len(checks):
        return None
    factor = pd.Series((checks[f"long_{std}"].to_numpy() / _at_stop(checks, o.trained, std)) ** 2,
                       index=pd.MultiIndex.from_frame(checks[["n_s", "p"]]))
    cells = o.means[0][col]
    keys = pd.MultiIndex.from_arrays([cells.index.get_level_values(k) for k in ("n_s", "p")])
    applied = pd.Series(factor.reindex(keys).to_numpy(), index=cells.index)
    top = int(cells.index.get_level_values("n_s").max())
    at_top = applied.xs(top, level="n_s").dropna().groupby("p").first()
    lost = int(applied.isna().sum())
    moved = (f"×{at_top.min():.3g}–{at_top.max():.3g} at n_s {top} from {len(at_top)} checks"
             if len(at_top) else f"no check at n_s {top}") + (
        f"; {lost} cells without a check left out" if lost else "")
    return (cells * applied).dropna(), moved


def _unjudged(o: Outputs, ladder: bool = True) -> str | None:
    """Why the converged cells cannot judge a claim (every model diverged, none converged, or,
    for a trend along the n_s ``ladder``, all at one n_s), or None."""
    if not len(o.stats):
        return DIVERGED
    if not len(o.means[0]):
        return UNCONVERGED
    if ladder and o.means[0].index.get_level_values("n_s").nunique() < 2:
        return "the converged cells are at one n_s: no ladder"
    return None


def _not_judged(o: Outputs, ladder: bool = True) -> Result | None:
    """The Result of a claim on the converged cells that they cannot judge (:func:`_unjudged`),
    or None."""
    if (why := _unjudged(o, ladder)) is None:
        return None
    return Result(not_computed=why, scale="—" if why == DIVERGED else o.grid_scale)


def _falls(o: Outputs, col: str) -> Result:
    """The statistic ``col`` of figs. 4–6 on the converged cells, on the paper's words ("falls
    with n_s at all locations"): the median over cells of each cell's log-log slope along the
    n_s ladder, with its bootstrap 95% interval (ladder.ladder_slope), must lie below 0.
    Reproduced when the interval lies below 0, not reproduced when it lies at or above it,
    inconclusive when it spans 0 (the ladder cannot tell). The untrained weights' slope is said
    beside it: whether training, not chance, makes it fall is our control, judged apart
    (finding.faster_than_untrained). Where the convergence checks keep the statistic, the same
    test runs on the cells scaled as if every model moved as its (n_s, p)'s check's model did
    when trained longer (:func:`_trained_longer`), and a verdict that differs there reads
    inconclusive: it may turn with where training stops."""
    if (r := _not_judged(o)) is not None:
        return r
    words, (slope, lo, hi, _), _ = _ladder(o, col)
    falls = side(lo, hi, 0.0)
    undecided = None if falls is not None else (
        f"the 95% interval [{lo:.2f}, {hi:.2f}] of the slope contains 0: this ladder cannot "
        "tell; a ladder to n_s 8192 would decide it")
    if col not in _CHECKED:
        words += ". Not measured past the rule's stop (the convergence check does not keep it)"
    elif (longer := _trained_longer(o, col)) is not None:
        scaled, moved = longer
        ls, llo, lhi, _ = ladder_slope(scaled)
        words += (f". As if every model moved as its (n_s, p)'s convergence check's model did "
                  f"when trained longer ({moved}): slope {ls:.2f} [{llo:.2f}, {lhi:.2f}]")
        if side(llo, lhi, 0.0) != falls:
            undecided = "; ".join(filter(None, (undecided, (
                f"if every model moved as its (n_s, p)'s convergence check's model did when "
                f"trained longer ({moved}), the slope's interval would be [{llo:.2f}, "
                f"{lhi:.2f}]: the verdict may turn with where training stops"))))
    return Result(bool(falls), slope, (hi - lo) / 2, {"words": words, "checked": (
        ", the same as the convergence checks' longer training moves it" if col in _CHECKED
        else "")}, o.grid_scale, inconclusive="; ".join(filter(None, (
            o.too_small(o.means[0].index.unique("n_s")), undecided))) or None)


for _col, _name, _figure in (("diag_var", "Var of diag(W)", 4), ("bias_var", "Var of b", 5),
                             ("dvar_nu", "ΔVar(ν)", 6)):
    CLAIMS.record(Record(
        id=f"sym.{_col}", statement=_name + _FALL[0], source=f"fig. {_figure}", paper=_FALL[1],
        paper_scale=PAPER_GRID, figure=f"fig{_figure}", stages=TRAINED, ours="{words}",
        tolerance="the 95% interval of the median slope below 0 (the paper: falls at every "
                  "location); an interval wholly at or above 0 breaks it{checked}"))(
        lambda o, col=_col: _falls(o, col))


def _last_level(excess: pd.Series, p: float) -> str:
    """Where the converged cells of ``p`` last stand in ``excess`` (trained/untrained Λ per
    cell, index n_s, ratio_target, p): their median at the largest n_s that has one, in words."""
    cells = excess[excess.index.get_level_values("p") == p]
    n_s = int(cells.index.get_level_values("n_s").max())
    return f"trained/untrained {cells.xs(n_s, level='n_s').median():.2f} at n_s {n_s}"


def _cells_at(o: Outputs, p: float, top: int) -> str:
    """Where the cells of ``p`` stand at n_s ``top``, where none converged: the median over its
    cells there of trained/untrained Λ, in words."""
    def at(t: pd.DataFrame) -> pd.Series:
        return cell_means(t[(t.n_s == top) & (t.p == p)], ["lyapunov"]).lyapunov

    cells = (at(o.stats) / at(o.baseline)).dropna()
    return (f"its {len(cells)} cells at n_s {top}, none converged, {cells.median():.2f}"
            if len(cells) else f"no model at n_s {top}")


def _longer(o: Outputs, p: float, top: int) -> tuple[str, bool] | None:
    """What training longer does to Λ at (``top``, ``p``): Λ of its grid's convergence check's
    model (tms.persian_rug.converge, the column long_lyapunov) over its untrained weights' at the
    rule's stop and after the longer training, in words; and whether it points away from
    uniformity: after the longer training above 1 + :data:`MAX_SPREAD` and more than
    :data:`MAX_SPREAD` above its value at the stop (one-sided: a check that falls back does not
    count for the claim). None without a usable check: no model the rule stopped, a table
    without Λ, a rerun that diverged (its drop NaN), or the stopped model or its untrained
    weights missing from the statistics."""
    checks = o.converge[(o.converge.source == "grid") & (o.converge.n_s == top)
                        & (o.converge.p == p)]
    if "long_lyapunov" not in checks:
        return None
    checks = checks[np.isfinite(checks["drop"]) & np.isfinite(checks.long_lyapunov)]
    if not len(checks):
        return None
    check = checks.iloc[0]
    stopped, untrained = (_at_stop(checks.iloc[:1], t, "lyapunov")[0]
                          for t in (o.stats, o.baseline))
    if not np.isfinite(stopped) or not np.isfinite(untrained):
        return None
    before, after = stopped / untrained, check.long_lyapunov / untrained
    return (f"its convergence check's model, ratio {check.ratio_target:g}: {before:.2f} at the "
            f"rule's stop, {after:.2f} after {check.long_steps / check.steps:.3g}× its steps"
            ), bool(after > 1 + MAX_SPREAD and after > before * (1 + MAX_SPREAD))


@dataclass(frozen=True)
class _Uniformity:
    """Fig. 7's trained/untrained Λ of the converged cells (``excess``, index n_s,
    ratio_target, p): its median per n_s (``per``); at the largest n_s ``top`` its cells
    (``at_top``) and their median with its bootstrap 95% interval (``level``); the median
    per-cell slope along the ladder with its interval (``trend``); the p judged at ``top`` and
    those not; what training longer does at each p (:func:`_longer`) and the p it moves away."""

    excess: pd.Series
    per: pd.Series
    top: int
    at_top: pd.Series
    level: tuple[float, float, float]
    trend: tuple[float, float, float]
    p_top: set[float]
    unjudged: list[float]
    longer: dict[float, tuple[str, bool] | None]
    away: list[float]


@CLAIMS.record(Record(
    id="sym.lyapunov", statement="Λ falls as n_s grows at every grid location, to the level of "
    "untrained weights, whose off-diagonal terms are independent: no small set of terms "
    "dominates, the interference is Gaussian", source="fig. 7, eq. 3",
    paper="falls with n_s at all locations; all models approach uniformity",
    paper_scale=PAPER_GRID, figure="fig7", stages=TRAINED, ours="{words}",
    tolerance="the 95% interval of the median slope below 0 (the paper: 'falls at all "
              "locations') and, at the largest n_s, that of the median trained/untrained Λ "
              "below {bound:g}, every p judged there ('all models approach uniformity', read as "
              "within {spread:.0%} of the Λ of independent terms, ≈ 1.6/√n_s), and no "
              "convergence check there whose model, trained longer, ends above {bound:g} and "
              "{spread:.0%} above its value at the stop"))
def _lyapunov(o: Outputs) -> Result:
    """Fig. 7 on the converged cells, on the paper's words ("falls", "all models approach
    uniformity"; it does not compare with untrained weights): Λ falls (the median per-cell slope
    along the ladder and its bootstrap 95% interval below 0, as :func:`_falls`) and at the
    largest n_s reaches the level of rows of independent terms, the untrained weights of the
    same cell: there the median over cells of trained Λ / untrained Λ, with its bootstrap 95%
    interval (ladder.median_interval), below 1 + :data:`MAX_SPREAD`, with a converged cell at
    every p the ladder judged below it. Reproduced when both hold; not reproduced when Λ does
    not fall, or when the ratio stays above the bound without falling along the ladder (its
    per-cell slope's interval at or above 0); otherwise inconclusive, saying why. Whether the
    level the rule's stop reaches is where training goes, the convergence checks at the largest
    n_s say: a p whose check's model, trained longer, leaves the bound (:func:`_longer`), judged
    there or not, blocks reproduced and points the row away (direction fails)."""
    if (r := _not_judged(o)) is not None:
        return r
    excess = (o.means[0].lyapunov / o.means[1].lyapunov).dropna()
    if not len(excess):
        return Result(not_computed="no untrained weights of the converged cells",
                      scale=o.grid_scale)
    words, (_, lo, hi, _), _ = _ladder(o, "lyapunov")
    top = int(o.means[0].index.get_level_values("n_s").max())
    at_top = excess[excess.index.get_level_values("n_s") == top].droplevel("n_s")
    if not len(at_top):
        return Result(not_computed=f"no untrained weights at n_s {top}", scale=o.grid_scale)
    u = _uniformity(o, excess, top, at_top)
    (level, rlo, rhi), bound, small = u.level, 1 + MAX_SPREAD, o.too_small(u.per.index)
    falls = side(lo, hi, 0.0)
    ok = bool(falls and side(rlo, rhi, bound) and not u.away)
    undecided = _lyapunov_undecided(o, u, falls, (lo, hi))
    return Result(ok, level, (rhi - rlo) / 2, scale=o.grid_scale,
                  inconclusive="; ".join(filter(None, (small, undecided))) or None, numbers={
                      "words": f"{words}. {_lyapunov_words(u)}" + (
                          "" if ok or undecided or small else f". Not reproduced at n_s ≤ {top}"),
                      "bound": bound, "spread": MAX_SPREAD})


def _uniformity(o: Outputs, excess: pd.Series, top: int, at_top: pd.Series) -> _Uniformity:
    """Fig. 7's evidence of :func:`_lyapunov`, from trained/untrained Λ per cell."""
    per = excess.groupby("n_s").median()
    level = median_interval(at_top.to_numpy())
    trend, tlo, thi, _ = ladder_slope(excess)
    p_top = set(at_top.index.get_level_values("p"))
    unjudged = sorted(set(o.means[0].index.get_level_values("p")) - p_top)
    longer = {q: _longer(o, q, top) for q in sorted(p_top | set(unjudged))}
    away = [q for q, m in longer.items() if m and m[1]]
    return _Uniformity(excess, per, top, at_top, level, (trend, tlo, thi), p_top, unjudged,
                       longer, away)


def _lyapunov_words(u: _Uniformity) -> str:
    """Trained/untrained Λ along the ladder and by p at its smallest n_s, in words."""
    (level, rlo, rhi), (trend, tlo, thi), top = u.level, u.trend, u.top
    bound, per = 1 + MAX_SPREAD, u.per
    first = u.excess.xs(int(per.index.min()), level="n_s").groupby("p").median()
    return ("Trained/untrained Λ per cell, median: " + ", ".join(
            f"{v:.3g} (n_s {n})" for n, v in per.items() if n != top)
            + (", " if len(per) > 1 else "") + f"{level:.3f} [{rlo:.3f}, {rhi:.3f}] at n_s {top}, "
            f"within {MAX_SPREAD:.0%} in {(u.at_top <= bound).mean():.0%} of {len(u.at_top)} cells "
            f"(p {span(u.p_top)}); per cell, its log-log slope along the ladder: median "
            f"{trend:.2f} [{tlo:.2f}, {thi:.2f}]. At n_s {int(per.index.min())}, by p: "
            + ", ".join(f"{v:.2f} (p {q:g})" for q, v in first.items()))


def _lyapunov_undecided(o: Outputs, u: _Uniformity, falls: bool | None,
                        slope: tuple[float, float]) -> str | None:
    """Why fig. 7's claim is inconclusive, or None where the evidence decides it."""
    (lo, hi), (level, rlo, rhi), (_, tlo, thi), top = slope, u.level, u.trend, u.top
    bound = 1 + MAX_SPREAD
    reached, nearing = side(rlo, rhi, bound), side(tlo, thi, 0.0)
    if falls is False or (reached is False and nearing is False):
        return None                                                 # not reproduced
    if falls is None:
        return (f"the 95% interval [{lo:.2f}, {hi:.2f}] of the slope contains 0: a longer "
                "ladder would decide it")
    if reached is None:
        return (f"the 95% interval [{rlo:.3f}, {rhi:.3f}] of trained/untrained Λ at n_s "
                f"{top} contains {bound:g}: a larger n_s would decide it")
    if reached is False:
        return (f"trained/untrained Λ {level:.3f} at n_s {top}, above {bound:g} but "
                + ("falling along the ladder" if nearing else "the ladder cannot tell "
                   "whether it falls") + ": a larger n_s would decide it")
    if u.unjudged or u.away:
        return _not_at_every_p(o, u)
    return None


def _not_at_every_p(o: Outputs, u: _Uniformity) -> str:
    """The p that leave fig. 7 undecided: not converged at the top n_s, or moving away there."""
    unjudged, away, longer, p_top, top = u.unjudged, u.away, u.longer, u.p_top, u.top
    return "; ".join(filter(None, (
        f"no converged cell at n_s {top} for " + "; ".join(
            f"p {q:g} ({_last_level(u.excess, q)}; {_cells_at(o, q, top)}"
            + (f"; {longer[q][0]}" if longer[q] else "") + ")" for q in unjudged)
        if unjudged else "",
        f"where judged at n_s {top}, training longer moves Λ away: " + "; ".join(
            f"p {q:g} ({longer[q][0]})" for q in away if q in p_top)
        if set(away) & p_top else ""))) + (
        f": p {', '.join(f'{q:g}' for q in away)} point{'s' if len(away) == 1 else ''} "
        f"away from uniformity at n_s "
        f"{top} (the level at the rule's stop is not where training goes); a larger n_s, "
        "trained past the rule, can tell whether it turns" if away else
        f": it holds on the other p only; those cells trained to convergence at n_s {top}, or "
        "a larger n_s, would decide it")


@CLAIMS.record(Record(
    id="sym.identical_variances", statement="once n_s reaches 8192 all noise variables have "
    "identical variances", source="fig. 6", paper="Var(ν_i) equal across rows",
    paper_scale="n_s 8192", figure="fig6", stages=TRAINED,
    ours="at n_s {n_s}: √ΔVar(ν) / mean Var(ν) median {value:.2f} (from {low:.2f} to "
         "{high:.2f}); ≤ {most:g} in {share:.0%} of {cells} cells",
    tolerance="relative spread ≤ {most:g} in ≥ {least:.0%} of the cells: 'identical' read as "
              "within 10%"))
def _identical_variances(o: Outputs) -> Result:
    if (r := _not_judged(o, ladder=False)) is not None:
        return r
    n_s = o.means[0].index.get_level_values("n_s")
    top = o.means[0].xs(n_s.max(), level="n_s")
    spread = np.sqrt(top.dvar_nu) / top.mean_var_nu
    share = float((spread <= MAX_SPREAD).mean())
    return Result(share >= MIN_FALLING, float(spread.median()), scale=o.grid_scale, numbers={
        "n_s": n_s.max(), "value": spread.median(), "low": spread.min(), "high": spread.max(),
        "most": MAX_SPREAD, "share": share, "cells": len(spread), "least": MIN_FALLING},
        inconclusive=(f"largest n_s {n_s.max()} < {PAPER_N_S}" if n_s.max() < PAPER_N_S
                      else o.too_small(n_s)))


@CLAIMS.record(Record(
    id="sym.variance_bound", statement="mean_i Var(ν_i) ≥ Var(x)(n_s/n_d − 1) for every model "
    "(diagonal normalised; a theorem)", source="eq. 6, app. C", paper="bound holds",
    paper_scale="—", figure="variance_bound", stages=("pr_train",), kind="sanity check",
    ours="min measured/bound = {value:.3f} over {models} trained models",
    tolerance="≥ 1 (a bound)"))
def _variance_bound(o: Outputs) -> Result:
    if not len(o.stats):
        return Result(not_computed=DIVERGED)
    relu = o.stats[(o.stats.model == "relu") & np.isfinite(o.stats.bound_ratio)]
    worst = float(relu.bound_ratio.min()) if len(relu) else float("nan")
    return Result(len(relu) > 0 and worst >= 1.0, worst, scale=o.grid_scale,
                  numbers={"value": worst, "models": len(relu)})


@CLAIMS.record(Record(
    id="sym.rug_attains_bound", statement="the Persian rug attains the bound (a construction)",
    source="sec. 4.2.2", paper="equality", paper_scale="—", figure="variance_bound",
    stages=("pr_rug",), kind="sanity check",
    ours="max |measured/bound − 1| = {value:.1e} over {points} rug points",
    tolerance="≤ 1e-9 (float64 round-off)"))
def _rug_attains_bound(o: Outputs) -> Result:
    dev = float((o.rug.bound_ratio - 1).abs().max()) if len(o.rug) else float("nan")
    return Result(len(o.rug) > 0 and dev <= 1e-9, dev,
                  scale=f"rug n_s {span(o.rug.n_s) if 'n_s' in o.rug else '—'}",
                  numbers={"value": dev, "points": len(o.rug)})


#: The statistics of figs. 4–6 whose fall the untrained weights' control is judged on.
_SYMMETRY = {"diag_var": "Var diag(W)", "bias_var": "Var b", "dvar_nu": "ΔVar(ν)"}


@CLAIMS.record(Record(
    id="finding.faster_than_untrained",
    statement="training, not chance, makes the statistics of figs. 4–6 fall with n_s: Var "
              "diag(W), Var b and ΔVar(ν) fall faster than the untrained weights' of the same "
              "cells (our control, not the paper's statement; ours, beyond the paper)",
    source="figs. 4–6", paper="—", paper_scale="—", stages=TRAINED,
    figure="fig5", kind="finding",
    ours="per cell log-log slope along the ladder, median [95% interval], trained against "
         "untrained: {slopes}",
    tolerance="each statistic's interval wholly below the untrained weights' median slope "
              "(which fall too, ≈ 1/n_s); one interval reaching that slope breaks it"))
def _faster_than_untrained(o: Outputs) -> Result:
    """Our control on figs. 4–6 (the paper does not compare with untrained weights): each
    statistic of :data:`_SYMMETRY` falls along the ladder faster than untrained weights'; the
    value is the largest trained − untrained median slope (below 0: faster)."""
    if (why := _unjudged(o)) is not None:
        return Result(not_computed=why, scale=o.grid_scale)
    fits = {col: (ladder_slope(o.means[0][col]), ladder_slope(o.means[1][col])[0])
            for col in _SYMMETRY}
    return Result(
        ok=all(side(lo, hi, random) for (_, lo, hi, _), random in fits.values()),
        value=max(slope - random for (slope, _, _, _), random in fits.values()),
        numbers={"slopes": "; ".join(f"{_SYMMETRY[c]} {s:.2f} [{lo:.2f}, {hi:.2f}] against "
                                     f"{r:.2f}" for c, ((s, lo, hi, _), r) in fits.items())},
        scale=o.grid_scale)
