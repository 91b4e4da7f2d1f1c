"""The evidence the Persian Rug claims are judged on (tms.persian_rug.claims): the stage outputs
read once (:class:`Outputs`, :meth:`Outputs.load` from the paths of tms.persian_rug.artefacts),
the tables several checks share, derived once, which trained cells converged (a trained-grid
claim is judged on those only, :attr:`Outputs.cells`), when the trained grids are too small to
decide a claim (:meth:`Outputs.too_small`) and the fitted exponents of section 4.3
(:func:`exponent`, :func:`interval`). How a statistic changes along the n_s ladder is
tms.persian_rug.ladder's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from tms.core import divergence
from tms.core.claim_rows import span
from tms.persian_rug import artefacts, compare, converge, scaling, weights
from tms.persian_rug.cells import CELL_KEYS, cell_means
from tms.persian_rug.params import PersianRug

#: The smallest largest-n_s at which a trained-model trend is decided: the paper's heat maps run
#: n_s 128, 1024, 8192, and a trend must reach its middle size.
DECISIVE_N_S = 1024
#: The paper's largest n_s (its heat maps' third size; fig. 2's rug): the scale a trend along a
#: shorter ladder is carried to (tms.persian_rug.ladder.ladder_reach), and fig. 6's "identical
#: variances".
PAPER_N_S = 8192
#: The fewest cells at the largest n_s on which a trained-grid claim is decided (the converged
#: ones; the cells a claim judges, where it names them: Outputs.too_small).
MIN_CELLS = 5
#: The authors' trained grid, as a trained-grid claim's paper scale states it.
PAPER_GRID = "n_s 128, 1024, 8192; p and ratio linspace(0.002, 0.8, 20); one model per point"
#: Why a trained-grid claim is not computed when every trained model diverged, and the stages of
#: a claim on the trained grids' weights.
DIVERGED, TRAINED = "every trained model diverged", ("pr_train", "pr_baseline")
#: Why a trained-grid claim is not computed when no cell converged (:attr:`Outputs.cells`).
UNCONVERGED = ("no trained cell converged (stopped by the stopping rule, no worse than linear, "
               "its loss steady when trained longer)")
#: The columns that name a trained model.
MODEL_KEYS = ["model", "n_s", "ratio_target", "p", "seed_index"]


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
    max_p_over_r, the paper's form also r ≤ small_r); the convergence checks of every grid and
    of fig. 3 (``converge``, tms.persian_rug.converge.COLUMNS) and their ``tolerance``
    (persian_rug.converge.tolerance); the grids' ``anatomy`` (tms.persian_rug.anatomy, empty where
    no grid's weights were kept, or a snapshot predates it) and the antipodal construction on the
    theory's points (``paired``, tms.persian_rug.paired; empty likewise); the fig. 3 model's anatomy
    (``fig3_anatomy``, stage pr_anatomy_fig3; empty likewise)."""

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
    converge: pd.DataFrame
    tolerance: float
    anatomy: pd.DataFrame = field(default_factory=pd.DataFrame)
    paired: pd.DataFrame = field(default_factory=pd.DataFrame)
    fig3_anatomy: pd.DataFrame = field(default_factory=pd.DataFrame)

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
                   pr.scaling.max_p_over_r, pr.scaling.small_r,
                   pd.concat([grids(artefacts.converge),
                              pd.read_parquet(artefacts.CONVERGE_FIG3)], ignore_index=True),
                   pr.converge.tolerance, _optional([artefacts.anatomy(n) for n in pr.grid.n_s]),
                   _optional([artefacts.PAIRED]), _optional([artefacts.ANATOMY_FIG3]))

    def too_small(self, n_s: Sequence[int] | None = None, cells: pd.DataFrame | None = None,
                  kind: str = "converged") -> str | None:
        """Why the trained grids ``n_s`` (default: those of ``cells``) cannot decide a claim, or
        None: the largest below :data:`DECISIVE_N_S`, or fewer than :data:`MIN_CELLS` of
        ``cells`` (default: the converged :attr:`cells`; ``kind`` names them) at it; then, for
        the converged cells, why the others at it did not converge and what deciding needs
        (:meth:`unconverged_at`)."""
        conv = self.converged_cells if cells is None else cells
        n_s = conv.n_s.unique() if n_s is None else n_s
        top = max(n_s, default=0)
        if top < DECISIVE_N_S:
            return f"largest n_s {top} < {DECISIVE_N_S}"
        if (k := int((conv.n_s == top).sum())) < MIN_CELLS:
            why = self.unconverged_at(top) if cells is None else None
            return f"{k} {kind} cells at n_s {top}, fewer than {MIN_CELLS}" + (
                f" ({why})" if why else "")
        return None

    def unconverged_at(self, n_s: int) -> str | None:
        """Why the cells of :attr:`cells` at ``n_s`` that did not converge did not, and what
        would let them, in words (None when all did): stopped at the step cap, worse than the
        optimal linear map, or still falling when their (n_s, p)'s convergence check trains
        longer (the largest such drop and the check's steps)."""
        if not len(self.cells):
            return None
        c = self.cells[self.cells.n_s == n_s]
        at_cap, failed, still = _why_not_converged(c)
        capped, worse, unsteady = int(at_cap.sum()), int(failed.sum()), c[still]
        ch = self.converge[(self.converge.source == "grid") & (self.converge.n_s == n_s)
                           & self.converge.p.isin(unsteady.p)]
        parts = [f"{capped} at the step cap" if capped else "",
                 f"{worse} worse than linear" if worse else "",
                 f"{len(unsteady)} still falling: their convergence checks lose up to "
                 f"{ch['drop'].max():.1%} more at {span(ch.long_steps.astype(int))} steps"
                 if len(unsteady) and ch["drop"].notna().any() else
                 f"{len(unsteady)} whose convergence check diverged" if len(unsteady) else ""]
        if not any(parts):
            return None
        return (f"of the other {capped + worse + len(unsteady)}, "
                + ", ".join(filter(None, parts))
                + ("; deciding needs them trained until their checks pass: "
                   "persian_rug.train.max_steps and persian_rug.converge.min_steps"
                   + (" (with persian_rug.converge.capped, a check of the capped models)"
                      if capped else "") if capped or len(unsteady) else ""))

    @property
    def converged_cells(self) -> pd.DataFrame:
        """The rows of :attr:`cells` that converged (an empty frame with its columns, without)."""
        c = self.cells
        return c[c.converged] if len(c) else pd.DataFrame(columns=[*CELL_KEYS, "converged"])

    def convergence(self) -> str:
        """How many trained cells converged (:attr:`cells`), per n_s, and why the others did
        not: the words every trained-grid row states."""
        c = self.cells
        per = c.groupby("n_s").converged.agg(["sum", "size"])
        capped, worse, unsteady = (int(m.sum()) for m in _why_not_converged(c))
        cap = (", or by the step cap where a check trained a model as long"
               if (c.checked & ~c.stopped).any() else "")
        return ("converged cells (every model stopped by the stopping rule" + cap + ", no worse "
                "than the optimal linear map, and steady when trained longer): "
                + ", ".join(f"{int(k)} of {n} at n_s {m}" for m, k, n in per.itertuples())
                + f"; {capped} cells stopped at the step cap, {worse} worse than linear "
                f"(failed to optimise), {unsteady} still falling ({self.steadiness()})")

    def steadiness(self) -> str:
        """What the convergence checks (:attr:`converge`) found, in words: how many (n_s, p)
        pass, how much longer they trained and the largest drop of the loss."""
        ch = self.converge
        if not len(ch):
            return "no convergence check: no model stopped by the rule"
        ok = converge.passing(ch, self.tolerance)
        worst, lost = ch["drop"].max(), int(ch["drop"].isna().sum())
        return (f"the slowest model of each (n_s, p) retrained "
                f"{span((ch.long_steps / ch.steps).round(2))}× its steps "
                f"({span(ch.long_steps.astype(int))} steps): "
                f"the loss of {int(ok.sum())} of {len(ok)} (n_s, p) falls by at most "
                f"{self.tolerance:.0%}, the largest fall {worst:.1%}"
                + (f"; {lost} rerun(s) diverged" if lost else ""))

    @cached_property
    def fig3_kept(self) -> pd.DataFrame:
        """The fig. 3 models that did not diverge (tms.core.divergence.split)."""
        return divergence.split(self.fig3)[0]

    @cached_property
    def fig3_model(self) -> tuple[pd.DataFrame, str, str | None] | None:
        """The fig. 3 models that did not diverge, their scale and why they cannot decide (the
        step cap, unless their check retrained a capped model as long: persian_rug.converge.capped)
        or None; None without any model or W."""
        fig3 = self.fig3_kept
        if not len(fig3) or self.fig3_W is None:
            return None
        r, own = fig3.iloc[0], self.runs[self.runs.source == "fig3"]
        checked = self.reran[self.reran.source == "fig3"].slowness.max() >= own.slowness.max()
        return fig3, (f"n_s {int(r.n_s)}, n_d {int(r.n_d)}, p {r.p:g}; {len(fig3)} model(s), "
                      f"{int(fig3.steps.max())} steps"), (
            None if fig3.stopped.all() or checked else
            "the model stopped at the step cap, not converged")

    @cached_property
    def fig3_longer(self) -> tuple[pd.DataFrame, str] | None:
        """The convergence check of the fig. 3 models (its rows of :attr:`converge`, source
        'fig3': the model the rule stopped last, retrained) and what it found, in words, when it
        fails (its loss falls by more than the tolerance, or the rerun diverged): the fig. 3
        claims are then judged on the retrained model's statistics too, and decided only where
        both give one verdict. None when it passes or did not run."""
        ch = self.converge[self.converge.source == "fig3"]
        if not len(ch) or (ch["drop"] <= self.tolerance).all():
            return None
        factor = (ch.long_steps / ch.steps).median()
        return ch, (f"retrained {factor:.3g}× its {int(ch.steps.max())} steps, the model's loss "
                    f"falls {ch['drop'].max():.1%} more (the rule stopped it before it converged)")

    def decided_below(self, limit: float) -> pd.DataFrame:
        """The cells of :attr:`cells` whose lowest measured trained/theory (at the rule's stop or
        after their convergence check's longer training: ``trained_theory_lowest``) is below
        ``limit``, and that did not fail to optimise (not worse than linear), converged or not:
        a trained model reached that loss, and training longer lowers a loss (up to the noise of
        a minibatch run: one model of 150 in docs/measurements/fixed-steps-h100.csv rose 4%
        between its stop and 16,000 steps, and fell again by 32,000), so their trained/theory is
        below ``limit`` wherever they would converge. Their ``trained_theory`` is the lowest."""
        c = self.cells
        if not len(c):
            return c
        c = c.assign(trained_theory=c.trained_theory_lowest)
        return c[(c.trained_theory < limit) & ~c.worse_than_linear]

    @cached_property
    def runs(self) -> pd.DataFrame:
        """The ReLU models of the trained grids and of fig. 3 that did not diverge: MODEL_KEYS,
        ``source`` ('grid' or 'fig3'), ``stopped``, ``steps`` and ``slowness``
        (:func:`_slowness`)."""
        keys = MODEL_KEYS + ["stopped", "steps"]
        runs = pd.concat([divergence.split(self.trained)[0][keys].assign(source="grid"),
                          self.fig3_kept[keys].assign(source="fig3")])
        runs = runs[runs.model == "relu"]
        return runs.assign(slowness=_slowness(runs.steps, ~runs.stopped.astype(bool)))

    @cached_property
    def reran(self) -> pd.DataFrame:
        """The convergence checks (:attr:`converge`) with ``slowness``: that of the model each
        retrained (:func:`_slowness`, capped where :attr:`runs` says the step cap stopped it;
        a model not found there counts as stopped by the rule)."""
        ids = [*(k for k in MODEL_KEYS if k != "model"), "source"]
        reran = self.converge.merge(self.runs[[*ids, "stopped"]], on=ids, how="left")
        return reran.assign(slowness=_slowness(reran.steps, reran.stopped.eq(False)))

    @cached_property
    def cells(self) -> pd.DataFrame:
        """tms.persian_rug.compare.trained_vs_theory of the trained grids' models and the fig. 3
        models (its cell is the grid cell n_s 512, p 0.044, ratio 0.254 of the paper; empty
        without a model), with per cell ``stopped`` (every model stopped by the stopping rule,
        not the step cap), ``checked`` (a convergence check of its (n_s, p) retrained a model
        trained at least as long as its longest: every stopped cell; a capped one only where the
        check may rerun capped models, persian_rug.converge.capped), ``worse_than_linear`` (the
        loss above the optimal linear map's: a ReLU model can represent ReLU of that map, never
        worse on x ≥ 0, so such a model failed to optimise), ``steady`` (every convergence check
        of its (n_s, p) passes: tms.persian_rug.converge.passing), ``converged`` (checked, not
        worse than linear, and steady): a trained-grid claim is judged on the converged cells
        only; and
        ``trained_theory_lowest``: its mean loss over the theory's with each model its
        convergence check retrained at the lower of its two losses (the rerun's counts where it
        did not diverge; equal to trained_theory in a cell no check reran)."""
        fig3 = self.fig3_kept
        models = pd.concat([self.stats.assign(source="grid"), fig3[fig3.columns.intersection(
            self.stats.columns)].assign(source="fig3")], ignore_index=True)
        if not len(models):
            return pd.DataFrame()
        relu = models[models.model == "relu"]
        reruns = self.converge.dropna(subset=["long_loss"])
        if len(reruns):
            relu = relu.merge(reruns.assign(model="relu")[MODEL_KEYS + ["source", "long_loss"]],
                              on=MODEL_KEYS + ["source"], how="left")
            # the lower of the two where both are known, the one known otherwise (long_loss
            # can arrive as objects from the merge: numpy's fmin on objects gave NaN for a pair
            # with one missing)
            relu = relu.assign(long_loss=relu.long_loss.astype(float))
            relu = relu.assign(loss=relu[["loss", "long_loss"]].min(axis=1))
        lowest = relu.groupby(CELL_KEYS).loss.mean()
        by_cell = self.runs.groupby(CELL_KEYS)
        cells = compare.trained_vs_theory(models)
        index, n_s_p = (pd.MultiIndex.from_frame(cells[k]) for k in (CELL_KEYS, ["n_s", "p"]))
        cells["stopped"] = by_cell.stopped.all().reindex(index, fill_value=False).to_numpy()
        checked = self.reran.groupby(["n_s", "p"]).slowness.max().reindex(n_s_p).to_numpy()
        slowest = by_cell.slowness.max().reindex(index).to_numpy()
        known = ~pd.isna(slowest) & ~pd.isna(checked)       # no runs, or no check at its (n_s, p)
        cells["checked"] = known & (np.where(known, slowest, 0) <= np.where(known, checked, 0))
        cells["worse_than_linear"] = cells.loss > cells.loss_linear
        steady = converge.passing(self.converge, self.tolerance)
        cells["steady"] = steady.reindex(n_s_p, fill_value=False).to_numpy()
        cells["converged"] = cells.checked & ~cells.worse_than_linear & cells.steady
        cells["trained_theory_lowest"] = lowest.reindex(pd.MultiIndex.from_frame(
            cells[CELL_KEYS])).to_numpy() / cells.loss_theory
        return cells

    @cached_property
    def grid_scale(self) -> str:
        """The scale of the trained grids, as the trained-model rows state it."""
        relu = self.stats[self.stats.model == "relu"]
        return (f"n_s {', '.join(str(n) for n in sorted(relu.n_s.unique()))}; {relu.p.nunique()} "
                f"p × {relu.ratio_target.nunique()} ratios; {relu.seed_index.nunique()} seed(s)")

    @cached_property
    def means(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """:func:`cell_means` of figs. 4–7's statistics (and mean_var_nu) over the converged
        cells (:attr:`cells`): trained, and untrained weights of the same cells."""
        keep = pd.MultiIndex.from_frame(self.converged_cells[CELL_KEYS])
        trained = cell_means(self.stats, [*compare.SYMMETRY, "mean_var_nu"])
        random = cell_means(self.baseline, compare.SYMMETRY)
        return trained[trained.index.isin(keep)], random[random.index.isin(keep)]

    @cached_property
    def antipodal(self) -> pd.DataFrame:
        """tms.persian_rug.compare.antipodal_cells of the trained and untrained models."""
        return compare.antipodal_cells(self.stats, self.baseline)

    def fit_points(self, source: str, law: str) -> pd.DataFrame:
        """The points (p, ratio, loss) that stage pr_scaling fitted ``law`` to for ``source``
        (tms.persian_rug.scaling.law_points): the theory grid's, the rug's, or a trained grid's
        seed means (tms.persian_rug.scaling.trained_means). Raises KeyError for a source it
        has no table of."""
        if source == "theory":
            table = self.theory_grid
        elif source.startswith("Persian rug"):
            table = self.rug
        else:
            n_s = {scaling.trained_source(n): n for n in self.trained.n_s.unique()}[source]
            table = scaling.trained_means(self.trained[self.trained.n_s == n_s])
        return scaling.law_points(table, law, self.max_p_over_r, self.small_r)

    def theory_scale(self, fits: bool = True, small_r: bool = False) -> str:
        """The scale of the theory rows: its grid, and the fits' regime (with r ≤ small_r)."""
        g, p_r, r = self.theory_grid, f", p/r ≤ {self.max_p_over_r:g}", f", r ≤ {self.small_r:g}"
        return f"theory on {g.p.nunique()} p × {g.ratio.nunique()} ratios" + (
            p_r if fits else "") + (r if small_r else "")


def _optional(paths: Sequence[str]) -> pd.DataFrame:
    """The tables at ``paths`` that exist, concatenated (an empty frame without any): outputs a
    snapshot taken before their stage existed lacks."""
    found = [pd.read_parquet(p) for p in paths if Path(p).is_file()]
    return pd.concat(found, ignore_index=True) if found else pd.DataFrame()


def _slowness(steps: pd.Series, capped: pd.Series) -> pd.Series:
    """How slow a model was to settle, to compare a cell's models with the model its check
    retrained: its steps, and half a step more where the step cap stopped it (it had not settled
    by then, unlike a model the rule stopped at the same step)."""
    return steps + 0.5 * capped


def _why_not_converged(cells: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Masks of the rows of :attr:`Outputs.cells` that did not converge, by why: stopped at the
    step cap, no check trained a model as long (not ``checked``); checked but worse than the
    optimal linear map (failed to optimise); checked and not worse, but still falling when their
    (n_s, p)'s check trains longer."""
    worse = cells.checked & cells.worse_than_linear
    return ~cells.checked, worse, cells.checked & ~worse & ~cells.steady


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
