"""Figures of the Persian Rug paper's section 4.3 and appendix D: the initial loss L0(p), and the
upper and lower bounds of the loss in the regime p/r ≪ 1 against theory, rug and trained losses.

All losses are per-feature MSEs (averaged over features). Saved with tms.figures.save.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tms import bounds, theory
from tms.figures import plt


def initial_loss(trained: pd.DataFrame) -> plt.Figure:
    """Section 4.3.1: the trained ReLU models' loss at the smallest ratio of each n_s against p,
    beside L0(p) = Var(x) = p/3 − p²/4 (the ratio → 0 limit) and the paper's printed bound
    p/3 − p²/9 (an erratum: L0 lies below it).

    trained: mean-over-seeds table (tms.stats.over_seeds of the trained tables: columns model,
    n_s, ratio, p, loss, loss_se). Left: loss; right: loss / L0(p).
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


def bounds_panels(theory_grid: pd.DataFrame, rug: pd.DataFrame, trained: pd.DataFrame,
                  max_p_over_r: float, p_values) -> plt.Figure:
    """Section 4.3.2–4.3.3 and appendix D: loss against the ratio r on log–log axes, one panel per
    p of ``p_values``: the optimal symmetric loss, the lower bound p·mmse(σ) and the upper-bound
    construction (tms.bounds), the Persian rug and the trained ReLU models (mean ± s.e. over
    seeds, colour: n_s). The shaded band is the fits' regime p/r ≤ max_p_over_r.

    theory_grid: tms.scaling.THEORY_COLUMNS; rug: p, ratio, loss; trained: tms.stats.over_seeds
    of the trained tables (model, n_s, ratio, p, loss, loss_se). A p absent from a table simply
    has none of its points.
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
