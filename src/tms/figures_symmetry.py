"""Figures of the Persian Rug paper's section 3: the statistical permutation symmetry that emerges
as n_s grows (figs. 4–7), and the interference-variance bound of eq. 6 / appendix C.

Tables in (tms.stats: one row per model, several n_s), matplotlib figures out; saved with
tms.figures.save (byte-stable).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm, Normalize

from tms.figures import plt
from tms.stats import cell_means

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
    colour scale (logarithmic when the values span more than a decade), as the paper's figs. 4–7.

    stats: tms.stats tables of every n_s concatenated (columns n_s, p, ratio_target, model,
    ``column``); ReLU models only. Cells are labelled with the grid values (rows: ratio, bottom
    to top; columns: p).
    """
    cells = cell_means(stats, [column])[column]
    sizes = sorted(cells.index.unique("n_s"))
    norm = _norm(cells.to_numpy(dtype=float))
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes) + 1.2, 4.0), squeeze=False)
    for ax, n_s in zip(axes[0], sizes):
        grid = cells.loc[n_s].unstack("p").sort_index()
        im = ax.imshow(grid.to_numpy(dtype=float), origin="lower", aspect="auto", cmap="viridis",
                       norm=norm, interpolation="nearest")
        ax.set_xticks(range(grid.shape[1]), [f"{p:.3g}" for p in grid.columns], rotation=60,
                      fontsize=7)
        ax.set_yticks(range(grid.shape[0]), [f"{r:.2f}" for r in grid.index], fontsize=7)
        ax.set_xlabel("p")
        ax.set_title(f"$n_s$ = {n_s}")
    axes[0][0].set_ylabel("ratio $n_d/n_s$ (grid value)")
    fig.colorbar(im, ax=axes[0].tolist(), label=label, shrink=0.9)
    return fig


def variance_bound(stats: pd.DataFrame, rug: pd.DataFrame) -> plt.Figure:
    """Eq. 6 / appendix C: mean_i Var(ν_i) (each row's diagonal normalised to 1) against the bound
    Var(x)(n_s/n_d − 1), for every trained ReLU model (colour: n_s) and every Persian rug.

    Left: measured against bound, log–log, with the equality line; right: measured / bound
    against the ratio n_d/n_s (≥ 1 always; = 1 for the rug), filled over every row with
    W_ii ≠ 0, open over the live rows only (bound_ratio_live). stats: tms.stats tables
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
