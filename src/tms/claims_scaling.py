"""Checkable claims of the Persian Rug paper's section 3 (figs. 4–7: symmetry emerges as n_s grows),
eq. 6 (the variance bound) and section 4.3 / appendix D (limits, bounds and scalings).

Rows follow tms.claims.COLUMNS. Inputs are the pipeline's tables: the statistics of every trained
grid (tms.stats, all n_s concatenated), the rug table (stages/pr_rug.py), the theory-and-bounds
grid and the fits (tms.scaling), and the trained tables averaged over seeds (tms.stats.over_seeds).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tms import bounds, theory
from tms.claims import COLUMNS, _verdict
from tms.stats import cell_means

#: Statistics whose median over the grid must fall as n_s grows (figs. 4–7).
SYMMETRY = {"diag_var": "fig. 4", "bias_var": "fig. 5", "dvar_nu": "fig. 6", "lyapunov": "fig. 7"}


def medians_by_n_s(stats: pd.DataFrame, columns: Sequence[str] = tuple(SYMMETRY)
                   ) -> pd.DataFrame:
    """Median over the (p, ratio) grid of each statistic of ``columns`` (default: those of
    :data:`SYMMETRY`; means over seeds first), one row per n_s (index), one column per
    statistic; ReLU models only. Raises KeyError on a column ``stats`` lacks."""
    return cell_means(stats, columns).groupby("n_s").median()


def _falls(values: np.ndarray) -> bool:
    return len(values) >= 2 and bool(np.all(np.diff(values) < 0))


def _share_smaller(cells: pd.Series) -> tuple[float, int]:
    """Share of grid cells whose statistic (``cells``: one statistic of :func:`cell_means`) at
    the largest n_s is below that at the smallest."""
    cells = cells.unstack("n_s")
    first, last = cells.columns.min(), cells.columns.max()
    both = cells[[first, last]].dropna()
    return float((both[last] < both[first]).mean()) if len(both) else float("nan"), len(both)


def symmetry(stats: pd.DataFrame, rug: pd.DataFrame) -> pd.DataFrame:
    """Claims of figs. 4–7 (medians fall as n_s grows) and of eq. 6 (bound, equality for the rug)."""
    means = cell_means(stats, SYMMETRY)
    med = means.groupby("n_s").median()                  # medians_by_n_s, from the same cells
    sizes = ", ".join(str(n) for n in med.index)
    rows = []
    for col, fig in SYMMETRY.items():
        share, cells = _share_smaller(means[col])
        values = ", ".join(f"{v:.3g}" for v in med[col])
        rows.append([f"{col} falls as n_s grows (median over the grid)", fig,
                     "falls with n_s at all locations",
                     f"medians {values} at n_s = {sizes}; smaller at the largest than at the "
                     f"smallest n_s in {share:.0%} of {cells} cells", "medians strictly falling",
                     _verdict(_falls(med[col].to_numpy()))])
    relu = stats[(stats.model == "relu") & np.isfinite(stats.bound_ratio)]
    worst = float(relu.bound_ratio.min()) if len(relu) else float("nan")
    rows.append(["mean_i Var(ν_i) ≥ Var(x)(n_s/n_d − 1) for every model (diagonal normalised)",
                 "eq. 6, app. C", "bound holds",
                 f"min measured/bound = {worst:.3f} over {len(relu)} trained models",
                 "≥ 1", _verdict(len(relu) > 0 and worst >= 1.0)])
    dev = float((rug.bound_ratio - 1).abs().max()) if len(rug) else float("nan")
    rows.append(["the Persian rug attains the bound", "sec. 4.2.2", "equality",
                 f"max |measured/bound − 1| = {dev:.1e} over {len(rug)} rug points", "≤ 1e-9",
                 _verdict(len(rug) > 0 and dev <= 1e-9)])
    return pd.DataFrame(rows, columns=COLUMNS)


def _estimate(fits: pd.DataFrame, source: str, law: str, term: str) -> pd.Series:
    return fits[(fits.source == source) & (fits.law == law) & (fits.term == term)].iloc[0]


def _interval(row: pd.Series) -> str:
    if not np.isfinite(row.estimate):
        return f"not fitted ({int(row.points)} points in the regime)"
    return f"{row.estimate:.2f} [{row.low:.2f}, {row.high:.2f}] ({int(row.points)} points)"


def scaling(fits: pd.DataFrame, theory_grid: pd.DataFrame, max_p_over_r: float) -> pd.DataFrame:
    """Claims of section 4.3 and appendix D.

    fits: tms.scaling.FIT_COLUMNS (sources "theory", "Persian rug …", "trained (n_s = …)");
    theory_grid: tms.scaling.THEORY_COLUMNS.
    """
    rows = []
    p = theory_grid.p.unique()
    below = bool(np.all(theory.initial_loss(p) < bounds.paper_initial_bound(p)))
    rows.append(["L0(p) ≥ p/3 − p²/9 (loss as ratio → 0)", "sec. 4.3.1", "p/3 − p²/9",
                 "L0 = Var(x) = p/3 − p²/4 < p/3 − p²/9 for every p > 0 (the bound uses "
                 "(E u)² = 1/9 instead of 1/4); drawn against the trained losses",
                 "—", "erratum" if below else "not reproduced"])
    ordered = bool(np.all((theory_grid.lower <= theory_grid.loss * (1 + 1e-9))
                          & (theory_grid.loss <= theory_grid.upper * (1 + 1e-9))))
    regime = theory_grid[theory_grid.p / theory_grid.ratio <= max_p_over_r]
    spread = regime.upper / regime.lower
    rows.append(["C·p²/r < L < O(p²/r · log 1/p) for p/r ≪ 1", "sec. 4.3.2–4.3.3, app. D",
                 "lower and upper bounds",
                 f"lower ≤ optimal symmetric ≤ upper at all {len(theory_grid)} theory points; "
                 f"upper/lower = {spread.min():.1f}–{spread.max():.1f} where p/r ≤ {max_p_over_r:g}",
                 "ordered", _verdict(ordered)])
    beta1 = _estimate(fits, "theory", "p, n_s/n_d − 1", "n_s/n_d − 1")
    rows.append(["L ∝ (n_s/n_d − 1) at fixed p (theory; the exact σ²)", "sec. 4.3",
                 "+1", _interval(beta1), "|β′ − 1| ≤ 0.1",
                 _verdict(bool(abs(beta1.estimate - 1) <= 0.1))])
    beta = _estimate(fits, "theory", "p, r", "r")
    rows.append(["L ∝ 1/r at fixed p (theory, the paper's form)", "sec. 4.3, eq. 13 and 31",
                 "−1 (for r ≪ 1)", _interval(beta) + "; the (1 − r) factor of n_s/n_d − 1 "
                 "steepens it over r up to 1", "|β + 1| ≤ 0.1",
                 _verdict(bool(abs(beta.estimate + 1) <= 0.1))])
    alpha = _estimate(fits, "theory", "p, n_s/n_d − 1", "p")
    rows.append(["L ∝ p² at fixed r up to logarithms (theory)", "sec. 4.3, eq. 13",
                 "2 (× log 1/p)", _interval(alpha) + "; log(1/p) lowers the local exponent",
                 "|α′ − 2| ≤ 0.25", _verdict(bool(abs(alpha.estimate - 2) <= 0.25))])
    for source in fits.source.unique():
        if source == "theory":
            continue
        row = _estimate(fits, source, "p, n_s/n_d − 1", "n_s/n_d − 1")
        a = _estimate(fits, source, "p, n_s/n_d − 1", "p")
        rows.append([f"the same law for the {source}", "sec. 4.3", "α′ = 2, β′ = +1",
                     f"β′ = {_interval(row)}; α′ = {_interval(a)}", "|β′ − 1| ≤ 0.1",
                     _verdict(bool(abs(row.estimate - 1) <= 0.1))])
    return pd.DataFrame(rows, columns=COLUMNS)
