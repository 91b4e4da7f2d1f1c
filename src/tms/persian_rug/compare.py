"""Trained models and the Persian rug against the thermodynamic-limit theory, per cell and per
n_s: the tables the report shows and the claims judge (tms.persian_rug.claims); how a statistic
falls with n_s over a ladder is tms.persian_rug.ladder's. Also the matrix the paper prints for
the rug (an erratum: rank 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tms.persian_rug import theory
from tms.persian_rug.cells import CELL_KEYS, cell_means

#: Grid points where the thermodynamic-limit theory applies: ratio ≥ 0.1 and p·n_s ≥ 20 active
#: features per vector (Gaussian interference).
MIN_RATIO, MIN_ACTIVE = 0.1, 20


def printed_hadamard(n: int) -> np.ndarray:
    """The matrix the paper prints, H_ij = (−1)^parity(i XOR j), shape (n, n) (sec. 4.2.2)."""
    i = np.arange(n)
    parity = np.array([bin(k).count("1") % 2 for k in range(n)])
    return 1.0 - 2.0 * parity[i[:, None] ^ i[None, :]]


def _with_theory(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (columns n_s, p, ratio) with loss_theory (the optimal symmetric per-feature loss
    at its p and realised ratio, tms.persian_rug.theory) and in_regime (ratio ≥
    :data:`MIN_RATIO` and p · n_s ≥ :data:`MIN_ACTIVE`) added, in place."""
    table["loss_theory"] = [theory.optimal_symmetric(p, r)["loss"]
                            for p, r in zip(table.p, table.ratio)]
    table["in_regime"] = (table.ratio >= MIN_RATIO) & (table.p * table.n_s >= MIN_ACTIVE)
    return table


def rug_vs_theory(rug: pd.DataFrame) -> pd.DataFrame:
    """The rug table with the theory loss at each (p, ratio) and the relative gap.

    Adds columns loss_theory (optimal symmetric per-feature loss, tms.persian_rug.theory), gap
    (rug/theory − 1), active (p · n_s, the mean number of active features per vector) and
    in_regime (ratio ≥ :data:`MIN_RATIO` and p · n_s ≥ :data:`MIN_ACTIVE`).
    """
    out = _with_theory(rug.copy())
    out["gap"] = out.loss / out.loss_theory - 1.0
    out["active"] = out.p * out.n_s
    return out[[*rug.columns, "loss_theory", "gap", "active", "in_regime"]]


def trained_vs_theory(stats: pd.DataFrame) -> pd.DataFrame:
    """Per cell (n_s, ratio_target, p) of the trained ReLU models (mean over seeds of the
    held-out per-feature loss): ``loss``, ``ratio`` (realised n_d/n_s), ``loss_theory`` (optimal
    symmetric), ``loss_linear`` (optimal linear map), ``trained_theory`` (loss/loss_theory) and
    ``in_regime`` (as :func:`rug_vs_theory`). stats: one row per model with model, n_s,
    ratio_target, p, ratio and loss (the tms.persian_rug.stats tables, or the training tables)."""
    out = _with_theory(cell_means(stats, ["loss", "ratio"]).reset_index())
    out["loss_linear"] = theory.optimal_linear_loss(out.p.to_numpy(), out.ratio.to_numpy())
    out["trained_theory"] = out.loss / out.loss_theory
    return out[[*CELL_KEYS, "loss", "ratio", "loss_theory", "loss_linear", "trained_theory",
                "in_regime"]]


def best_known(theory_table: pd.DataFrame, paired: pd.DataFrame) -> pd.DataFrame:
    """The best known symmetric-or-paired loss at each (p, ratio) both tables hold: the lower
    of the optimal symmetric theory's (tms.persian_rug.theory, Gaussian interference) and the
    antipodal construction's (ours, tms.persian_rug.paired: pairs, no Gaussian step), the
    reference fig. 2 draws beside the trained models (which may beat it: it is the best of two
    known forms, not an optimum). theory_table: p, ratio, loss; paired: p,
    ratio, loss (per feature, as both stages write them). Returns p, ratio, loss and ``by``
    ('theory' or 'construction', the theory on a tie), sorted by p then ratio; raises KeyError
    for a table without those columns."""
    both = theory_table[["p", "ratio", "loss"]].merge(
        paired[["p", "ratio", "loss"]], on=["p", "ratio"], suffixes=("_theory", "_paired"))
    paired_wins = both.loss_paired < both.loss_theory
    return pd.DataFrame({
        "p": both.p, "ratio": both.ratio,
        "loss": np.where(paired_wins, both.loss_paired, both.loss_theory),
        "by": np.where(paired_wins, "construction", "theory")}).sort_values(
            ["p", "ratio"], ignore_index=True)


#: A cell beats the theory when its trained/theory loss is at most this (10% better).
BEATS = 0.9


def antipodal_cells(stats: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """:func:`trained_vs_theory` of ``stats`` with, per cell, ``antipodal`` (mean over seeds of
    the share of live features in an antipodal pair, tms.persian_rug.stats.antipodal_share) and
    ``antipodal_random`` (the same for the untrained weights of ``baseline``)."""
    random = cell_means(baseline, ["antipodal"]).rename(columns={"antipodal": "antipodal_random"})
    return (trained_vs_theory(stats)
            .merge(cell_means(stats, ["antipodal"]).reset_index(), on=CELL_KEYS)
            .merge(random.reset_index(), on=CELL_KEYS))


#: Statistics whose median over the grid must fall as n_s grows (figs. 4–7).
SYMMETRY = {"diag_var": "fig. 4", "bias_var": "fig. 5", "dvar_nu": "fig. 6", "lyapunov": "fig. 7"}


def medians_by_n_s(stats: pd.DataFrame, columns: Sequence[str] = tuple(SYMMETRY)
                   ) -> pd.DataFrame:
    """Median over the (p, ratio) grid of each statistic of ``columns`` (default: those of
    :data:`SYMMETRY`; means over seeds first), one row per n_s (index), one column per
    statistic; ReLU models only. Raises KeyError on a column ``stats`` lacks."""
    return cell_means(stats, columns).groupby("n_s").median()
