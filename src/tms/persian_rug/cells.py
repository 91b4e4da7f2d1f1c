"""Grid cells of the Persian Rug's trained tables (figs. 2–7): their keys, and the tables' means
over seeds per cell or per grid point. pandas only, no torch: the claims, the figures and the
scaling fits read these without loading a training library."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


#: The keys of a grid cell: one (ratio, p) point of one n_s (ratio_target, the grid's ratio before
#: n_d is rounded, is the same at every n_s of a ladder).
CELL_KEYS = ["n_s", "ratio_target", "p"]


def cell_means(table: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Mean over seeds of each of ``columns`` per grid cell (n_s, ratio_target, p) of the ReLU
    models of ``table`` (the statistics tables of every n_s concatenated): one row per cell
    (a MultiIndex in that order), as figs. 4–7 and their claims use them."""
    relu = table[table.model == "relu"]
    return relu.groupby(CELL_KEYS)[list(columns)].mean()


def over_seeds(table: pd.DataFrame, values: Sequence[str],
               keys: Sequence[str] = ("model", "n_s", "n_d", "ratio", "p")) -> pd.DataFrame:
    """Mean and standard error over seeds of each column of ``values``, per grid point.

    table: one row per model (a seed_index column tells the seeds apart). Returns one row per
    distinct ``keys`` (in sorted order) with, for each value column v, ``v`` (mean over seeds),
    ``v_se`` (standard error std/sqrt(K), ddof 1; NaN for a single seed) and ``seeds`` (K).
    """
    g = table.groupby(list(keys), sort=True)[list(values)]
    mean, se = g.mean(), g.sem()
    out = mean.join(se.add_suffix("_se"))
    out["seeds"] = g.size()
    return out.reset_index()
