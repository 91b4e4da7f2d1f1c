"""The Persian Rug paper's figures, one function each: tables or arrays in, matplotlib figure out.

- Figs. 1–3: the Persian rug matrix, the loss against the compression ratio, one trained model's
  weights.
- Figs. 4–7 (section 3): the statistical permutation symmetry that emerges as n_s grows, as heat
  maps, and the interference-variance bound of eq. 6 / appendix C (tables of
  :mod:`tms.persian_rug.stats`: one row per model, several n_s).
- Section 4.3 and appendix D: the initial loss L0(p), and the upper and lower bounds of the loss
  in the regime p/r ≪ 1 against theory, rug and trained losses.

All losses are per-feature MSEs (averaged over features). The report notebook saves each figure
with :func:`tms.core.savefig.save` (byte-stable).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm, Normalize, TwoSlopeNorm

from tms.core.savefig import plt
from tms.persian_rug import bounds, compare, theory
from tms.persian_rug.cells import CELL_KEYS, over_seeds


def fig1_rug(W: np.ndarray, n_d: int) -> plt.Figure:
    """Fig. 1: the Persian rug matrix W (n_s × n_s), diverging colours centred on 0."""
    n_s = W.shape[0]
    fig, ax = plt.subplots(figsize=(6, 5.2))
    im = ax.imshow(W, cmap="RdBu_r", norm=TwoSlopeNorm(0.0, W.min(), W.max()),
                   interpolation="nearest")
    fig.colorbar(im, ax=ax, shrink=0.85, label="$W_{ij}$")
    ax.set_title(f"Persian rug $W = W_{{out}} W_{{in}}$ ($n_s$ = {n_s}, $n_d$ = {n_d})")
    ax.set_xlabel("j")
    ax.set_ylabel("i")
    return fig


def nearest(values: Sequence[float], target: float) -> float:
    """The element of ``values`` nearest to ``target`` (the authors' choice of grid p for fig. 2)."""
    values = np.asarray(sorted(set(values)), dtype=float)
    return float(values[np.argmin(np.abs(values - target))])


def fig2_loss(trained: pd.DataFrame, rug: pd.DataFrame, theory_table: pd.DataFrame,
              p_targets: Sequence[float], paired: pd.DataFrame | None = None) -> plt.Figure:
    """Fig. 2: per-feature loss against the ratio n_d/n_s, one colour per p.

    trained: columns model, n_s, p, ratio, loss, seed_index (mean ± standard error over seeds
    is drawn; relu models only, the grid p nearest each target); rug: n_s, p, ratio, loss;
    theory_table: p, ratio, loss, loss_linear; paired: the antipodal construction (ours,
    tms.persian_rug.paired: p, ratio, loss), dash-dot, when given, with the lower of theory and
    construction (tms.persian_rug.compare.best_known) under them as a wide pale band. Left:
    per-feature loss (log scale); right: the same divided by p/3, the loss of the all-zero
    output.
    """
    relu = trained[trained.model == "relu"]
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(p_targets)))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for p, c in zip(p_targets, colors):
        th = theory_table[np.isclose(theory_table.p, p)].sort_values("ratio")
        rg = rug[np.isclose(rug.p, p)].sort_values("ratio")
        p_tr = nearest(relu.p, p) if len(relu) else None
        tr = (relu[np.isclose(relu.p, p_tr)].groupby("ratio").loss.agg(["mean", "sem", "size"])
              .reset_index() if p_tr is not None else pd.DataFrame())
        th = th[th.loss > 0]                      # ratio 1 has loss 0: off a log axis
        for ax, scale in zip(axes, (1.0, 3.0 / p)):
            ax.plot(th.ratio, th.loss * scale, "-", color=c, lw=1.5,
                    label=f"p = {p:g}: theory")
            ax.plot(th.ratio, th.loss_linear * scale, ":", color=c, lw=1.2,
                    label=f"p = {p:g}: optimal linear")
            ax.plot(rg.ratio, rg.loss * scale, "s--", color=c, ms=4, lw=0.8, mfc="none",
                    label=f"p = {p:g}: Persian rug")
            if paired is not None:
                pa = paired[np.isclose(paired.p, p) & (paired.loss > 0)].sort_values("ratio")
                ax.plot(pa.ratio, pa.loss * scale, "-.", color=c, lw=1.0,
                        label=f"p = {p:g}: antipodal construction (ours)")
                best = compare.best_known(th, pa)
                ax.plot(best.ratio, best.loss * scale, "-", color=c, lw=6, alpha=0.2,
                        zorder=1, label=f"p = {p:g}: lower of theory and construction")
            if len(tr):
                err = tr["sem"].fillna(0.0) * scale
                ax.errorbar(tr.ratio, tr["mean"] * scale, yerr=err, fmt="o", color=c, ms=5,
                            label=f"trained (grid p = {p_tr:.3g})")
    axes[0].set_yscale("log")
    axes[0].set_ylabel("per-feature loss (MSE averaged over features)")
    axes[1].set_ylabel("per-feature loss / (p/3)")
    for ax in axes:
        ax.set_xlabel("ratio $n_d/n_s$")
        ax.set_xlim(0, 1.02)
    axes[1].set_ylim(0, 1.1)
    sizes = lambda t: ", ".join(str(int(n)) for n in sorted(t.n_s.unique())) if len(t) else "—"
    fig.suptitle(f"trained n_s = {sizes(relu)}; Persian rug n_s = {sizes(rug)}", fontsize=10)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7)
    fig.tight_layout()
    return fig


def fig3_weights(W_block: np.ndarray, b_block: np.ndarray, dead: np.ndarray) -> plt.Figure:
    """Fig. 3: a k×k block of W = W_out W_in and the matching k components of the bias b, each
    on its own colour scale (b is an order of magnitude smaller than the diagonal); the dead
    features of the block (``dead``: (k,) bool, tms.persian_rug.stats) are marked × on the
    diagonal."""
    k = W_block.shape[0]
    fig, (ax, cax, axb, caxb) = plt.subplots(1, 4, figsize=(7.8, 5.2),
                                            width_ratios=[k, 0.6, 1.5, 0.6])
    lim = float(np.abs(W_block).max())
    im = ax.imshow(W_block, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    idx = np.flatnonzero(dead)
    ax.plot(idx, idx, "x", color="k", ms=7, label=f"dead feature ({len(idx)} of {k})")
    if len(idx):
        ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"W (first {k}×{k})")
    ax.set_xlabel("j")
    ax.set_ylabel("i")
    blim = float(np.abs(b_block).max())
    imb = axb.imshow(b_block.reshape(-1, 1), cmap="RdBu_r", vmin=-blim, vmax=blim,
                     interpolation="nearest", aspect="auto")
    axb.set_title("b")
    axb.set_xticks([])
    axb.set_yticks([])
    fig.colorbar(im, cax=cax, label="W_ij")             # full-height bars beside each image
    fig.colorbar(imb, cax=caxb, label="b_i")
    fig.tight_layout()
    for bar in (cax, caxb, axb):                        # as tall as the square W block
        bar.set_position([bar.get_position().x0, ax.get_position().y0,
                          bar.get_position().width, ax.get_position().height])
    return fig


#: The statistic of each heat-map figure and how the colour bar names it.
HEATMAPS = {
    "fig4": ("diag_var", "variance of diag(W) over features"),
    "fig5": ("bias_var", "variance of b over features"),
    "fig6": ("dvar_nu", r"$\Delta$var($\nu$): variance over rows of Var($\nu_i$)"),
    "fig7": ("lyapunov", r"Lyapunov $\Lambda$ = max$_i$ $\sum_{j\neq i}|W_{ij}|^3/"
             r"(\sum_{j\neq i}W_{ij}^2)^{3/2}$"),
}


def _norm(values: np.ndarray):
    """LogNorm when the positive values span more than a decade, else a linear Normalize."""
    v = values[np.isfinite(values)]
    if len(v) and v.min() > 0 and v.max() / v.min() > 10:
        return LogNorm(v.min(), v.max())
    return Normalize(v.min() if len(v) else 0.0, v.max() if len(v) else 1.0)


def heatmaps(stats: pd.DataFrame, column: str, label: str) -> plt.Figure:
    """One heat map per n_s of ``column`` (mean over seeds) over (p, target ratio), one shared
    colour scale (logarithmic when the values span more than a decade), as the paper's figs. 4–7;
    with more than one seed, a second row gives each cell's uncertainty: the standard error over
    seeds relative to the mean (one shared linear scale).

    stats: tms.persian_rug.stats tables of every n_s concatenated (columns n_s, n_d, p,
    ratio_target, model, ``column``); ReLU models only. Rows are labelled with the grid ratio
    and the realised n_d of that n_s (bottom to top), columns with p. A cell of a single seed, or
    of mean 0, has no relative uncertainty (blank).
    """
    relu = stats[stats.model == "relu"]
    cells = over_seeds(relu, [column], (*CELL_KEYS, "n_d"))
    cells = cells.set_index(CELL_KEYS)
    values = cells[column]
    rel_se = (cells[f"{column}_se"] / values.abs()).replace([np.inf, -np.inf], np.nan)
    n_d = cells.n_d.groupby(["n_s", "ratio_target"]).first()
    sizes = sorted(values.index.unique("n_s"))
    seeds = int(cells.seeds.max())
    rows = 2 if seeds > 1 else 1
    fig, axes = plt.subplots(rows, len(sizes), figsize=(5.0 * len(sizes) + 1.4, 4.2 * rows),
                             squeeze=False, layout="constrained")
    for row, (shown, norm, what) in enumerate(
            [(values, _norm(values.to_numpy(dtype=float)), label),
             (rel_se, Normalize(0.0, max(float(np.nanmax(rel_se.to_numpy(dtype=float))), 1e-12)
                                if rel_se.notna().any() else 1.0),
              f"standard error over up to {seeds} seeds / mean")][:rows]):
        for ax, n_s in zip(axes[row], sizes):
            grid = shown.loc[n_s].unstack("p").sort_index()
            im = ax.imshow(grid.to_numpy(dtype=float), origin="lower", aspect="auto",
                           cmap="viridis" if row == 0 else "magma", norm=norm,
                           interpolation="nearest")
            ax.set_xticks(range(grid.shape[1]), [f"{p:.3g}" for p in grid.columns], rotation=60,
                          fontsize=7)
            ax.set_yticks(range(grid.shape[0]), [f"{r:.2f} ($n_d$ {n_d.loc[(n_s, r)]})"
                                                 for r in grid.index], fontsize=7)
            ax.set_xlabel("p")
            ax.set_title(f"$n_s$ = {n_s}" + ("" if row == 0 else ": uncertainty"))
        axes[row][0].set_ylabel("ratio $n_d/n_s$ (grid value)")
        fig.colorbar(im, ax=axes[row].tolist(), label=what, shrink=0.9)
    return fig


def variance_bound(stats: pd.DataFrame, rug: pd.DataFrame) -> plt.Figure:
    """Eq. 6 / appendix C: mean_i Var(ν_i) (each row's diagonal normalised to 1) against the bound
    Var(x)(n_s/n_d − 1), for every trained ReLU model (colour: n_s) and every Persian rug.

    Left: measured against bound, log–log, with the equality line; right: measured / bound
    against the ratio n_d/n_s (≥ 1 always; = 1 for the rug), filled over every row with
    W_ii ≠ 0, open over the live rows only (bound_ratio_live). stats: tms.persian_rug.stats tables
    (columns model, n_s, ratio, var_nu_normalised, variance_bound, bound_ratio,
    bound_ratio_live); rug: the pr_rug table (ratio, var_nu_normalised, variance_bound,
    bound_ratio).
    """
    relu = stats[(stats.model == "relu") & np.isfinite(stats.bound_ratio)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    sizes = sorted(relu.n_s.unique())
    colors = plt.cm.viridis(np.linspace(0, 0.85, max(len(sizes), 1)))
    for n_s, c in zip(sizes, colors):
        t = relu[relu.n_s == n_s]
        axes[0].loglog(t.variance_bound, t.var_nu_normalised, "o", color=c, ms=4, alpha=0.8,
                       label=f"trained, $n_s$ = {n_s}")
        axes[1].semilogy(t.ratio, t.bound_ratio, "o", color=c, ms=4, alpha=0.8)
        axes[1].semilogy(t.ratio, t.bound_ratio_live, "o", color=c, ms=5, mfc="none")
    n_rug = int(rug.n_s.iloc[0]) if len(rug) else 0
    axes[0].loglog(rug.variance_bound, rug.var_nu_normalised, "k+", ms=8,
                   label=f"Persian rug, $n_s$ = {n_rug}")
    axes[1].semilogy(rug.ratio, rug.bound_ratio, "k+", ms=8)
    lo = min(relu.variance_bound.min(), rug.variance_bound.min())
    hi = max(relu.variance_bound.max(), rug.variance_bound.max())
    axes[0].loglog([lo, hi], [lo, hi], "k--", lw=0.8, label="equality (eq. 6)")
    axes[1].axhline(1.0, color="k", ls="--", lw=0.8)
    axes[0].set_xlabel(r"bound Var(x)$(n_s/n_d - 1)$")
    axes[0].set_ylabel(r"mean$_i$ Var($\nu_i$), diagonal normalised to 1")
    axes[1].set_xlabel("ratio $n_d/n_s$")
    axes[1].set_ylabel("measured / bound (open: live features only)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def initial_loss(trained: pd.DataFrame) -> plt.Figure:
    """Section 4.3.1: the trained ReLU models' loss at the smallest ratio of each n_s against p,
    beside L0(p) = Var(x) = p/3 − p²/4 (the ratio → 0 limit) and the paper's printed bound
    p/3 − p²/9 (an erratum: L0 lies below it).

    trained: mean-over-seeds table (tms.persian_rug.cells.over_seeds of the trained tables: columns
    model, n_s, ratio, p, loss, loss_se). Left: loss; right: loss / L0(p).
    """
    relu = trained[trained.model == "relu"]
    p = np.geomspace(relu.p.min(), relu.p.max(), 200)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    sizes = sorted(relu.n_s.unique())
    colors = plt.cm.viridis(np.linspace(0, 0.85, max(len(sizes), 1)))
    for n_s, c in zip(sizes, colors):
        t = relu[relu.n_s == n_s]
        t = t[np.isclose(t.ratio, t.ratio.min())].sort_values("p")
        l0 = theory.initial_loss(t.p.to_numpy())
        label = f"trained, $n_s$ = {n_s}, ratio {t.ratio.iloc[0]:.3f}"
        for ax, scale in zip(axes, (1.0, 1 / l0)):
            ax.errorbar(t.p, t.loss * scale, yerr=t.loss_se.fillna(0.0) * scale, fmt="o",
                        color=c, ms=5, label=label)
    l0 = theory.initial_loss(p)
    for ax, scale in zip(axes, (1.0, 1 / l0)):
        ax.plot(p, l0 * scale, "k-", label="$L_0(p)$ = p/3 − p²/4")
        ax.plot(p, bounds.paper_initial_bound(p) * scale, "r--",
                label="paper's bound p/3 − p²/9 (erratum)")
        ax.set_xscale("log")
        ax.set_xlabel("p")
    axes[0].set_yscale("log")
    axes[0].set_ylabel("per-feature loss")
    axes[1].set_ylabel("loss / $L_0(p)$")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def antipodal_pairs(cells: pd.DataFrame, beats: float, min_ratio: float) -> plt.Figure:
    """Our finding beyond the paper: per grid cell, the share of live features in an antipodal
    pair against trained/theory loss (below ``beats``: trained beats the optimal symmetric
    theory), one colour per n_s; grey: untrained weights of the same cells. Cells with ratio
    below ``min_ratio`` are left out (random embeddings of a few dimensions pair by chance).

    cells: tms.persian_rug.compare.antipodal_cells (columns n_s, ratio, trained_theory,
    antipodal, antipodal_random).
    """
    wide = cells[cells.ratio >= min_ratio]
    fig, ax = plt.subplots(figsize=(6.5, 4.4))
    sizes = sorted(wide.n_s.unique())
    for n_s, c in zip(sizes, plt.cm.viridis(np.linspace(0, 0.85, max(len(sizes), 1)))):
        t = wide[wide.n_s == n_s]
        ax.plot(t.trained_theory, t.antipodal, "o", color=c, ms=5, label=f"trained, $n_s$ = {n_s}")
    ax.plot(wide.trained_theory, wide.antipodal_random, "x", color="0.6", ms=4,
            label="untrained weights")
    ax.axvline(beats, color="k", ls=":", lw=1)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("trained loss / optimal symmetric theory")
    ax.set_ylabel("share of live features in an antipodal pair")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def bounds_panels(theory_grid: pd.DataFrame, rug: pd.DataFrame, trained: pd.DataFrame,
                  max_p_over_r: float, p_values) -> plt.Figure:
    """Section 4.3.2–4.3.3 and appendix D: loss against the ratio r on log–log axes, one panel per
    p of ``p_values``: the optimal symmetric loss, the lower bound p·mmse(σ) and the upper-bound
    construction (tms.persian_rug.bounds), the Persian rug and the trained ReLU models (mean ± s.e.
    over seeds, colour: n_s). The shaded band is the fits' regime p/r ≤ max_p_over_r.

    theory_grid: tms.persian_rug.scaling.THEORY_COLUMNS; rug: p, ratio, loss; trained:
    tms.persian_rug.cells.over_seeds of the trained tables (model, n_s, ratio, p, loss, loss_se).
    A p absent from a table simply has none of its points.
    """
    p_values = list(p_values)
    fig, axes = plt.subplots(1, len(p_values), figsize=(4.6 * len(p_values), 4.2), squeeze=False)
    relu = trained[trained.model == "relu"]
    sizes = sorted(relu.n_s.unique())
    colors = plt.cm.viridis(np.linspace(0, 0.85, max(len(sizes), 1)))
    for ax, p in zip(axes[0], p_values):
        th = theory_grid[np.isclose(theory_grid.p, p)].sort_values("ratio")
        ax.plot(th.ratio, th.loss, "k-", label="theory (optimal symmetric)")
        ax.plot(th.ratio, th.upper, "C3--", label=r"upper: $a=1$, $b=-\sigma\sqrt{2\log 1/p}$")
        ax.plot(th.ratio, th.lower, "C0--", label=r"lower: $p\cdot$mmse($\sigma$)")
        rg = rug[np.isclose(rug.p, p)].sort_values("ratio")
        ax.plot(rg.ratio, rg.loss, "ks", mfc="none", ms=5, label="Persian rug")
        for n_s, c in zip(sizes, colors):
            t = relu[(relu.n_s == n_s) & np.isclose(relu.p, p)].sort_values("ratio")
            ax.errorbar(t.ratio, t.loss, yerr=t.loss_se.fillna(0.0), fmt="o", color=c, ms=4,
                        label=f"trained, $n_s$ = {n_s}")
        ax.axvspan(min(p / max_p_over_r, 1.0), 1.0, color="0.9", zorder=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("ratio $r = n_d/n_s$")
        ax.set_title(f"p = {p:g}")
    axes[0][0].set_ylabel("per-feature loss")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def fig2_curves(trained: pd.DataFrame, rug: pd.DataFrame, theory_table: pd.DataFrame,
              p_targets: Sequence[float]) -> pd.DataFrame:
    """Fig. 2 as a long table for DVC plots (``dvc plots show``; the template
    reports/templates/plots/p_and_curve.json colours by p and dashes by kind, reading the
    ``<kind> p=<p>`` labels), rows ``series, p, ratio, loss, relative_loss``.

    Per target p: the theory and optimal linear curves and the Persian rug (at that p), and
    the trained ReLU models at the grid p nearest to it (mean loss over seeds). ``loss`` is
    the per-feature loss; ``relative_loss`` = loss / (p/3), the loss of the all-zero output.
    Inputs as :func:`fig2_loss`.
    """
    parts = []
    relu = trained[trained.model == "relu"]
    for p in p_targets:
        th = theory_table[np.isclose(theory_table.p, p)]
        parts += [pd.DataFrame({"series": f"theory p={p:g}", "p": p, "ratio": th.ratio,
                                "loss": th.loss}),
                  pd.DataFrame({"series": f"optimal linear p={p:g}", "p": p, "ratio": th.ratio,
                                "loss": th.loss_linear})]
        rg = rug[np.isclose(rug.p, p)]
        parts.append(pd.DataFrame({"series": f"Persian rug p={p:g}", "p": p, "ratio": rg.ratio,
                                   "loss": rg.loss}))
        if len(relu):
            p_tr = nearest(relu.p, p)
            tr = relu[np.isclose(relu.p, p_tr)].groupby("ratio", as_index=False).loss.mean()
            parts.append(pd.DataFrame({"series": f"trained p={p_tr:.3g}", "p": p_tr,
                                       "ratio": tr.ratio, "loss": tr.loss}))
    out = pd.concat(parts, ignore_index=True).sort_values(["series", "ratio"], kind="stable")
    out["relative_loss"] = out.loss / (out.p / 3)
    return out.reset_index(drop=True)


def anatomy_panels(cells: pd.DataFrame) -> plt.Figure:
    """Where the gap to the theory sits, per cell (seeds averaged; tms.persian_rug.anatomy):
    left, trained/theory against Gaussianised/theory (the gain survives Gaussianising above the
    line y = 1 only); middle, each of the loss's two parts (feature off, feature on) over the
    theory's same part; right, trained against the antipodal construction (both over the
    theory). One colour per p. cells: columns p, loss, loss_off, loss_on, gauss_loss,
    theory_loss, theory_off, theory_on, paired_loss."""
    ps = sorted(cells.p.unique())
    colors = dict(zip(ps, plt.cm.viridis(np.linspace(0, 0.9, max(len(ps), 1)))))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    for p in ps:
        c, col = cells[cells.p == p], colors[p]
        trained = c.loss / c.theory_loss
        axes[0].plot(trained, c.gauss_loss / c.theory_loss, "o", color=col, label=f"p = {p:g}")
        axes[1].plot(trained, c.loss_off / c.theory_off, "v", color=col, mfc="none",
                     label=f"p = {p:g}: feature off")
        axes[1].plot(trained, c.loss_on / c.theory_on, "^", color=col,
                     label=f"p = {p:g}: feature on")
        axes[2].plot(c.paired_loss / c.theory_loss, trained, "s", color=col, label=f"p = {p:g}")
    lo = min([0.3, *(cells.loss / cells.theory_loss)]) if len(cells) else 0.3
    axes[0].axhline(1.0, color="0.5", lw=0.8)
    axes[1].axhline(1.0, color="0.5", lw=0.8)
    axes[2].plot([lo, 1.5], [lo, 1.5], color="0.5", lw=0.8)
    for ax in axes[:2]:
        ax.axvline(1.0, color="0.5", lw=0.8, ls=":")
        ax.set_xlabel("trained loss / theory loss")
    axes[0].set_ylabel("Gaussianised loss / theory loss")
    axes[0].set_title("the interference made Gaussian", fontsize=10)
    axes[1].set_ylabel("trained part / theory's part")
    axes[1].set_yscale("log")
    axes[1].set_title("the loss while a feature is off and on", fontsize=10)
    axes[2].set_xlabel("antipodal construction / theory loss")
    axes[2].set_ylabel("trained loss / theory loss")
    axes[2].set_title("trained against the construction", fontsize=10)
    if len(cells):                           # no cell in the theory's regime: nothing to name
        axes[2].legend(fontsize=7)
        axes[1].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


def row_histograms(rows: Sequence[tuple[str, np.ndarray, float]]) -> plt.Figure:
    """One row's off-diagonal entries W_ij / W_ii (j ≠ i) per panel, beside the Gaussian of the
    same mean and variance: rows, (title, entries, the −1/4 line's x) for each panel. An entry
    below −1/4 alone silences the feature when its feature j is on: a few of them make the
    interference Σ_j W_ij x_j over the few active features far from Gaussian."""
    fig, axes = plt.subplots(1, max(len(rows), 1), figsize=(5.5 * max(len(rows), 1), 4))
    for ax, (title, entries, cut) in zip(np.atleast_1d(axes), rows):
        ax.hist(entries, bins=60, density=True, color="0.6", label="trained row")
        x = np.linspace(entries.min(), entries.max(), 400)
        m, s = entries.mean(), entries.std()
        ax.plot(x, np.exp(-0.5 * ((x - m) / s) ** 2) / (s * np.sqrt(2 * np.pi)), "C3-",
                label="Gaussian, same mean and variance")
        ax.axvline(cut, color="C0", ls=":", label="−1/4 of the diagonal")
        ax.set_yscale("log")
        ax.set_xlabel("off-diagonal W_ij / W_ii")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
