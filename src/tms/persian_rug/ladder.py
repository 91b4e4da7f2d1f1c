"""How one statistic changes along an n_s ladder (figs. 4–7 and the central claim; the claims
of tms.persian_rug.claims and tms.persian_rug.symmetry_claims): its median per n_s and the
share of the cells it falls in (:func:`falling`), the median over cells of each cell's slope in
log(n_s) with a bootstrap interval (:func:`ladder_slope`), where each cell's line reaches at a
larger n_s (:func:`ladder_reach`), a median with its bootstrap interval
(:func:`median_interval`), and where an interval lies against a threshold (:func:`side`). A
statistic is given per grid cell: values indexed (n_s, ratio_target, p), as a column of
tms.persian_rug.cells.cell_means.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

#: The bootstrap of :func:`median_interval` (and so of :func:`ladder_slope` and
#: :func:`ladder_reach`): resamples of the cells, and its seed.
N_BOOT, BOOT_SEED = 2000, 0


def falling(cells: pd.Series) -> tuple[pd.Series, float, int, float]:
    """How one statistic falls with n_s over the grid (figs. 4–7). cells: one column of
    tms.persian_rug.cells.cell_means (index n_s, ratio_target, p). Returns its median over the
    cells per n_s (indexed by n_s); the share of the cells lower at the largest n_s than at the
    smallest (NaN with none at both) and how many are at both; and the log-log slope of the
    medians from the smallest to the largest n_s (NaN with fewer than two n_s or a non-positive
    median)."""
    medians = cells.groupby("n_s").median()
    if len(medians) < 2:                                  # no cell, or one n_s: nothing falls
        return medians, float("nan"), 0, float("nan")
    by_n_s = cells.unstack("n_s")
    first, last = by_n_s.columns.min(), by_n_s.columns.max()
    both = by_n_s[[first, last]].dropna()
    share = float((both[last] < both[first]).mean()) if len(both) else float("nan")
    if (medians.iloc[[0, -1]] <= 0).any():
        return medians, share, len(both), float("nan")
    return medians, share, len(both), float(np.log(medians.iloc[-1] / medians.iloc[0])
                                            / np.log(medians.index[-1] / medians.index[0]))


def _lines(cells: pd.Series, log: bool) -> list[tuple[float, float, float]]:
    """Per cell of ``cells`` (values indexed (n_s, ratio_target, p)) present at two n_s or more
    (positive values, where ``log``): the least-squares line of log(value) (or the value) on
    log(n_s) over the n_s it has, as (slope, mean log(n_s), mean of the values it fits)."""
    wide = cells.unstack("n_s")
    x_all = np.log(wide.columns.to_numpy(dtype=float))
    lines = []
    for row in wide.to_numpy():
        keep = np.isfinite(row) & ((row > 0) if log else True)
        if keep.sum() < 2:
            continue
        x, y = x_all[keep], (np.log(row[keep]) if log else row[keep])
        lines.append((float(((y - y.mean()) @ (x - x.mean())) / ((x - x.mean()) ** 2).sum()),
                      float(x.mean()), float(y.mean())))
    return lines


def ladder_slope(cells: pd.Series, log: bool = True) -> tuple[float, float, float, int]:
    """How one statistic changes along an n_s ladder, with its uncertainty. cells: values
    indexed (n_s, ratio_target, p) (e.g. a column of tms.persian_rug.cells.cell_means, the
    converged cells). Per cell present at two n_s or more (positive values, where ``log``), the
    least-squares slope of log(value) (or the value) on log(n_s) over the n_s it has; returns the
    median slope over those cells, the 2.5% and 97.5% quantiles of that median over
    :data:`N_BOOT` bootstrap resamples of the cells (seed :data:`BOOT_SEED`), and the number of
    cells. NaN slopes without such a cell."""
    slopes = [slope for slope, _, _ in _lines(cells, log)]
    if not slopes:
        return float("nan"), float("nan"), float("nan"), 0
    return (*median_interval(slopes), len(slopes))


def ladder_reach(cells: pd.Series, n_s: int, floor: float = -np.inf
                 ) -> tuple[float, float, float, int]:
    """Where one statistic's trend along an n_s ladder reaches at ``n_s`` (beyond the ladder: an
    extrapolation, each cell on its straight line). Per cell of :func:`ladder_slope` (with
    ``log`` False: the value on log(n_s)), its line evaluated at log(n_s), raised to ``floor``
    where below it (a gap that cannot go below 0); returns the median over those cells, its
    bootstrap 95% interval (:func:`median_interval`) and the number of cells, in the units of
    ``cells``. NaN without such a cell."""
    at = np.log(float(n_s))
    reach = [max(y + slope * (at - x), floor) for slope, x, y in _lines(cells, log=False)]
    if not reach:
        return float("nan"), float("nan"), float("nan"), 0
    return (*median_interval(reach), len(reach))


def median_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The median of ``values`` (one per cell; at least one) and the 2.5% and 97.5% quantiles
    of it over :data:`N_BOOT` bootstrap resamples of the values (seed :data:`BOOT_SEED`)."""
    boot = np.median(np.random.default_rng(BOOT_SEED).choice(
        values, (N_BOOT, len(values)), replace=True), axis=1)
    return (float(np.median(values)), float(np.quantile(boot, 0.025)),
            float(np.quantile(boot, 0.975)))


def side(lo: float, hi: float, threshold: float) -> bool | None:
    """Where an interval [lo, hi] lies against ``threshold``: True wholly below it, False wholly
    at or above it, None across it (the data cannot tell)."""
    return True if hi < threshold else False if lo >= threshold else None
