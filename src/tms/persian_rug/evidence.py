"""The evidence the Persian Rug claims are judged on (tms.persian_rug.claims): the stage outputs
read once (:class:`Outputs`, :meth:`Outputs.load` from the paths of tms.persian_rug.artefacts),
the tables several checks share, derived once, when a trained grid is too small or too little
converged to decide a claim (:meth:`Outputs.too_small`), how a statistic falls with n_s
(:func:`falling`) and the fitted exponents of section 4.3 (:func:`exponent`, :func:`interval`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from tms.core import divergence
from tms.persian_rug import artefacts, compare, weights
from tms.persian_rug.params import PersianRug
from tms.persian_rug.stats import cell_means

#: The smallest largest-n_s at which a trained-model trend is decided: the paper's heat maps run
#: n_s 128, 1024, 8192, and a trend must reach its middle size.
DECISIVE_N_S = 1024
#: The largest share of trained models that may stop at the step cap (not converged) before a
#: trained-model verdict reads inconclusive.
MAX_CAPPED = 0.10


@dataclass(frozen=True, eq=False)
class Outputs:
    """What the checks read (:meth:`load`; tables several checks share are derived once): the
    fig. 3 table, diverged models included, and ``fig3_W`` = W_out W_in of its first model that
    did not diverge, (n_s, n_s) float64, or None; the ``theory`` (p, ratio, loss, loss_linear) and
    ``rug`` tables; every grid's statistics without its diverged models (``stats``,
    tms.persian_rug.stats), training tables (``trained``: n_s, stopped, diverged) and untrained
    weights' statistics (``baseline``); ``fits`` and ``theory_grid`` (tms.persian_rug.scaling);
    the params ``fig1_n_s`` (the printed Hadamard matrix's size), ``fig2_n_s`` (the authors'
    linear formula's n_s), ``max_p_over_r`` and ``small_r`` (the fits' regime: p/r ≤
    max_p_over_r, the paper's form also r ≤ small_r)."""

    fig3: pd.DataFrame
    fig3_W: np.ndarray | None
    theory: pd.DataFrame
    rug: pd.DataFrame
    stats: pd.DataFrame
    trained: pd.DataFrame
    baseline: pd.DataFrame
    fits: pd.DataFrame
    theory_grid: pd.DataFrame
    fig1_n_s: int
    fig2_n_s: int
    max_p_over_r: float
    small_r: float

    @classmethod
    def load(cls, pr: PersianRug) -> Outputs:
        """Read the outputs (paths relative to the working directory) of the grids
        ``pr.grid.n_s``. Raises FileNotFoundError where a stage has not run."""
        grids = lambda path: pd.concat([pd.read_parquet(path(n)) for n in pr.grid.n_s],  # noqa: E731
                                       ignore_index=True)
        fig3, W = pd.read_parquet(artefacts.FIG3), None
        if len(kept := divergence.split(fig3)[0]):
            W_in, W_out, _ = weights.read(artefacts.FIG3_WEIGHTS)[(kept.model[0],
                                                                   int(kept.instance[0]))]
            W = W_out.astype(np.float64) @ W_in.astype(np.float64)
        return cls(fig3, W, pd.read_parquet(artefacts.THEORY), pd.read_parquet(artefacts.RUG),
                   divergence.split(grids(artefacts.statistics))[0], grids(artefacts.trained),
                   grids(artefacts.baseline), pd.read_parquet(artefacts.SCALING_FITS),
                   pd.read_parquet(artefacts.SCALING_THEORY), pr.fig1.n_s, pr.fig2.n_s,
                   pr.scaling.max_p_over_r, pr.scaling.small_r)

    def too_small(self, n_s: Sequence[int] | None = None) -> str | None:
        """Why the trained grids ``n_s`` (default: those of :attr:`cells`) cannot decide a claim,
        or None: the largest below :data:`DECISIVE_N_S`, over :data:`MAX_CAPPED` step-capped."""
        n_s = self.cells.n_s.unique() if n_s is None else n_s
        trained, why = divergence.split(self.trained)[0], []
        if max(n_s, default=0) < DECISIVE_N_S:
            why.append(f"largest n_s {max(n_s, default=0)} < {DECISIVE_N_S}")
        capped = 1.0 - float(trained.stopped.mean()) if len(trained) else 0.0
        if capped > MAX_CAPPED:
            why.append(f"{capped:.0%} of the models stopped at the step cap, not converged")
        return "; ".join(why) or None

    @cached_property
    def fig3_model(self) -> tuple[pd.DataFrame, str, str | None] | None:
        """The fig. 3 models that did not diverge, their scale and why they cannot decide (the
        step cap) or None; None without any model or W."""
        fig3 = divergence.split(self.fig3)[0]
        if not len(fig3) or self.fig3_W is None:
            return None
        r = fig3.iloc[0]
        return fig3, (f"n_s {int(r.n_s)}, n_d {int(r.n_d)}, p {r.p:g}; {len(fig3)} model(s), "
                      f"{int(fig3.steps.max())} steps"), (
            None if fig3.stopped.all() else "the model stopped at the step cap, not converged")

    @cached_property
    def cells(self) -> pd.DataFrame:
        """tms.persian_rug.compare.trained_vs_theory of the trained models (empty without)."""
        return compare.trained_vs_theory(self.stats) if len(self.stats) else pd.DataFrame()

    @cached_property
    def grid_scale(self) -> str:
        """The scale of the trained grids, as the trained-model rows state it."""
        relu = self.stats[self.stats.model == "relu"]
        return (f"n_s {', '.join(str(n) for n in sorted(relu.n_s.unique()))}; {relu.p.nunique()} "
                f"p × {relu.ratio_target.nunique()} ratios; {relu.seed_index.nunique()} seed(s)")

    @cached_property
    def means(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """:func:`cell_means` of figs. 4–7's statistics (and mean_var_nu): trained, untrained."""
        return (cell_means(self.stats, [*compare.SYMMETRY, "mean_var_nu"]),
                cell_means(self.baseline, compare.SYMMETRY))

    @cached_property
    def antipodal(self) -> pd.DataFrame:
        """tms.persian_rug.compare.antipodal_cells of the trained and untrained models."""
        return compare.antipodal_cells(self.stats, self.baseline)

    def theory_scale(self, fits: bool = True, small_r: bool = False) -> str:
        """The scale of the theory rows: its grid, and the fits' regime (with r ≤ small_r)."""
        g, p_r, r = self.theory_grid, f", p/r ≤ {self.max_p_over_r:g}", f", r ≤ {self.small_r:g}"
        return f"theory on {g.p.nunique()} p × {g.ratio.nunique()} ratios" + (
            p_r if fits else "") + (r if small_r else "")


def falling(cells: pd.Series) -> tuple[pd.Series, float, int, float]:
    """How one statistic falls with n_s over the grid (figs. 4–7). cells: one column of
    tms.persian_rug.stats.cell_means (index n_s, ratio_target, p). Returns its median over the
    cells per n_s (indexed by n_s); the share of the cells lower at the largest n_s than at the
    smallest (NaN with none at both) and how many are at both; and the log-log slope of the
    medians from the smallest to the largest n_s (NaN with fewer than two n_s or a non-positive
    median)."""
    medians, by_n_s = cells.groupby("n_s").median(), cells.unstack("n_s")
    first, last = by_n_s.columns.min(), by_n_s.columns.max()
    both = by_n_s[[first, last]].dropna()
    share = float((both[last] < both[first]).mean()) if len(both) else float("nan")
    if len(medians) < 2 or (medians.iloc[[0, -1]] <= 0).any():
        return medians, share, len(both), float("nan")
    return medians, share, len(both), float(np.log(medians.iloc[-1] / medians.iloc[0])
                                            / np.log(medians.index[-1] / medians.index[0]))


def exponent(fits: pd.DataFrame, source: str, law: str, term: str) -> pd.Series:
    """The row of the fits (tms.persian_rug.scaling.FIT_COLUMNS) of ``term`` in the fit of
    ``law`` to ``source``. Raises IndexError if there is none."""
    return fits[(fits.source == source) & (fits.law == law) & (fits.term == term)].iloc[0]


def interval(row: pd.Series) -> str:
    """A fitted exponent (a row of :func:`exponent`) in words: estimate [95% interval] (points),
    or why it was not fitted."""
    if not np.isfinite(row.estimate):
        return f"not fitted ({int(row.points)} points in the regime)"
    return f"{row.estimate:.2f} [{row.low:.2f}, {row.high:.2f}] ({int(row.points)} points)"
