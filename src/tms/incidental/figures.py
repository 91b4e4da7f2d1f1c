"""One function per figure of *Incidental polysemanticity*: tables or arrays in, matplotlib
figure out (save with :func:`tms.core.savefig.save`). n features ↔ n_s, m neurons ↔ the
hidden width.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.patches import FancyArrowPatch

from tms.core.savefig import plt
from tms.incidental.sparsification import theory_l1, theory_m_prime
from tms.incidental.theory import random_unit_fourth_norm


def fig1_architecture(n: int = 4, m: int = 6) -> plt.Figure:
    """Fig. 1: the tied autoencoder, drawn with n inputs, m hidden neurons and n outputs: input
    e_i → h = Wᵀx + ξ (l1 penalty λ‖h‖₁ or noise ξ) → output ReLU(W h)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    cols = {"x": (0.0, n), "h": (1.0, m), "y": (2.0, n)}
    pos = {k: [(x, (c - 1) / 2 - i) for i in range(c)] for k, (x, c) in cols.items()}
    for a, b in (("x", "h"), ("h", "y")):
        for p in pos[a]:
            for q in pos[b]:
                ax.plot([p[0], q[0]], [p[1], q[1]], color="0.75", lw=0.6, zorder=1)
    colors = {"x": "tab:blue", "h": "tab:orange", "y": "tab:green"}
    for k, pts in pos.items():
        xs, ys = zip(*pts)
        ax.scatter(xs, ys, s=420, color=colors[k], edgecolor="k", zorder=2)
    top = (max(n, m) - 1) / 2 + 0.9
    ax.text(0.0, top, "input $x = e_i \\in \\mathbb{R}^n$", ha="center")
    ax.text(1.0, top, "hidden $h = W^{\\top}x + \\xi \\in \\mathbb{R}^m$", ha="center")
    ax.text(2.0, top, "output $y = \\mathrm{ReLU}(W h)$", ha="center")
    ax.text(0.5, -top + 0.2, "$W^{\\top}$ (encoder)", ha="center")
    ax.text(1.5, -top + 0.2, "$W$ (decoder, tied)", ha="center")
    ax.text(1.0, -top - 0.35, "loss $\\sum_i (\\|y_i - e_i\\|^2 + \\lambda \\|h_i\\|_1)$ "
            "$= \\sum_i \\|y_i - e_i\\|^2 + \\lambda \\sum_{ik} |W_{ik}|$;  "
            "noise $\\xi$: bipolar $\\pm\\sigma$ or $\\sigma\\,N(0, 1)$", ha="center")
    for x0 in (0.5, 1.5):
        ax.add_patch(FancyArrowPatch((x0 - 0.12, top - 0.45), (x0 + 0.12, top - 0.45),
                                     arrowstyle="-|>", mutation_scale=12, color="k"))
    ax.set_xlim(-0.4, 2.4)
    ax.set_ylim(-top - 0.6, top + 0.4)
    ax.axis("off")
    return fig


def fig2_sparsification(traj: pd.DataFrame) -> plt.Figure:
    """Fig. 2: m′ and ‖W_i‖₁ against training time t for every m of ``traj``
    (tms.incidental.sparsification.TRAJECTORY_COLUMNS), with section 2's m′ = 1/(1/√m + λt)² and
    ‖W_i‖₁ = 1/(1/√m + λt) (dashed) and the times 1/(λ√m) and 1/λ (dotted). Log–log axes."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    colors = plt.cm.viridis(np.linspace(0, 0.8, traj.m.nunique()))
    for (m, tab), c in zip(traj.groupby("m"), colors):
        tab = tab[tab.t > 0]
        lam = float(tab.lam.iloc[0])
        for ax, col, th in ((axes[0], "m_prime", theory_m_prime), (axes[1], "l1", theory_l1)):
            ax.plot(tab.t, tab[col], color=c, lw=2, label=f"ODE, m = {m:.0e}")
            ax.plot(tab.t, th(tab.t, m, lam), "--", color=c, lw=1, label="theory")
            for tt in (1 / (lam * np.sqrt(m)), 1 / lam):
                ax.axvline(tt, color=c, ls=":", lw=0.8)
    axes[0].set_ylabel("non-zero weights m′")
    axes[1].set_ylabel("$\\|W_i\\|_1$")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("training time t")
        ax.legend(fontsize=8)
    fig.suptitle(f"Speed of sparsification (λ = {traj.lam.iloc[0]:g}, interference off); "
                 "dotted: t = 1/(λ√m) and 1/λ")
    fig.tight_layout()
    return fig


def fig7_relative_variance(traj: pd.DataFrame, m: int) -> plt.Figure:
    """Fig. 7 (appendix B): the relative variance Var[X]/E[X]² of the non-zero weights over
    time for one m (orange), with the lower and upper values from W_i(0) (red) and from the
    idealised W_i(0) at regular percentiles (pink, dashed). Rows with m′ >= 2."""
    tab = traj[(traj.m == m) & (traj.t > 0) & (traj.m_prime >= 2)]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(tab.t, tab.relvar, color="tab:orange", lw=2, label="simulation")
    ax.plot(tab.t, tab.relvar_lo, color="red", lw=1, label="lower / upper from $W_i(0)$")
    ax.plot(tab.t, tab.relvar_hi, color="red", lw=1)
    ax.plot(tab.t, tab.ideal_lo, "--", color="hotpink", lw=1,
            label="lower / upper, idealised $W_i(0)$")
    ax.plot(tab.t, tab.ideal_hi, "--", color="hotpink", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("training time t")
    ax.set_ylabel("Var[X] / E[X]²")
    ax.set_title(f"Relative variance of the non-zero weights (m = {m:.0e})")
    ax.legend(fontsize=8)
    return fig


def fig3_collisions(table: pd.DataFrame, fit: dict[str, float]) -> plt.Figure:
    """Fig. 3: polysemantic neurons of every model against m (points, slightly jittered), their
    mean per m, the prediction n²/(4m) and the fit ĉ·n²/m with its interval (shaded); hollow
    squares: benign collisions at initialisation (pairs whose largest weights share a neuron
    with opposite signs). ``table``: tms.incidental.training.COLLISION_COLUMNS; ``fit``:
    tms.incidental.stats.collision_constant."""
    n = int(table.n.iloc[0])
    ms = np.sort(table.m.unique())
    grid = np.geomspace(ms.min(), ms.max(), 100)
    fig, ax = plt.subplots(figsize=(7, 4.6))
    jitter = np.exp(np.linspace(-0.06, 0.06, table.groupby("m").size().max()))
    for m, tab in table.groupby("m"):
        ax.scatter(m * jitter[:len(tab)], tab.polysemantic, s=12, color="tab:blue", alpha=0.5)
    g = table.groupby("m")[["polysemantic", "benign_pairs_init"]]
    means, sem = g.mean(), g.sem().fillna(0.0)
    ax.errorbar(means.index, means.polysemantic, yerr=sem.polysemantic, fmt="o-",
                color="tab:blue", capsize=3, label="trained (mean ± s.e.)")
    ax.errorbar(means.index, means.benign_pairs_init, yerr=sem.benign_pairs_init, fmt="s",
                mfc="none", color="0.4", capsize=3,
                label="benign collisions at init (mean ± s.e.)")
    ax.plot(grid, n * n / (4 * grid), "k--", label="$n^2/(4m)$ (the paper)")
    ax.plot(grid, n * (n - 1) / (4 * grid), "k:",
            label="$n(n-1)/(4m)$: expected benign collisions at init")
    ax.plot(grid, fit["c"] * n * n / grid, color="tab:red",
            label=f"fit $c\\,n^2/m$, c = {fit['c']:.3f} [{fit['lo']:.3f}, {fit['hi']:.3f}]")
    ax.fill_between(grid, fit["lo"] * n * n / grid, fit["hi"] * n * n / grid, color="tab:red",
                    alpha=0.15)
    ax.set_xscale("log")
    ax.set_xticks(ms, [str(m) for m in ms])
    ax.minorticks_off()
    ax.set_xlabel("neurons m")
    ax.set_ylabel("polysemantic neurons")
    ax.set_title(f"n = {n}, {len(table)} models")
    ax.legend(fontsize=8)
    return fig


def fig4_fourth_norms(table: pd.DataFrame, steps: np.ndarray, fourth: np.ndarray, m: int
                      ) -> plt.Figure:
    """Fig. 4: mean ‖W_i‖₄⁴ over training, bipolar (solid) and normal (dashed) noise, one colour
    per σ (mean over instances of the mean over features), with 3/(m + 2), the fourth norm of a
    random unit vector (the paper draws 3/m). ``table``: tms.incidental.training.NOISE_COLUMNS;
    steps (T,); fourth (I, T), row k the instance k of the table (rows may be left out)."""
    fig, ax = plt.subplots(figsize=(8, 4.6))
    sigmas = sorted(table.sigma.unique())
    colors = dict(zip(sigmas, plt.cm.plasma(np.linspace(0.1, 0.8, len(sigmas)))))
    for (noise, sigma), tab in table.groupby(["noise", "sigma"]):
        ax.plot(steps, fourth[tab.instance.to_numpy()].mean(0), color=colors[sigma],
                ls="-" if noise == "bipolar" else "--", lw=1.2, label=f"{noise}, σ = {sigma:g}")
    ax.axhline(random_unit_fourth_norm(m), color="k", ls=":", label="3/(m + 2)")
    ax.set_xlabel("step")
    ax.set_ylabel("mean $\\|W_i\\|_4^4$")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8, ncol=2)
    return fig


def fig5_sweep(table: pd.DataFrame, m: int) -> plt.Figure:
    """Fig. 5: final mean ‖W_i‖₄⁴ against λ (l1, no noise; left) and against σ (noise; right),
    every model a point, means joined; grey band: the baseline models (λ = σ = 0, min–max);
    dotted: 3/(m + 2). ``table``: tms.incidental.training.SWEEP_COLUMNS."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    base = table[table.kind == "baseline"].fourth
    for ax, kind, col, label in ((axes[0], "l1", "lam", "l1 coefficient λ"),
                                 (axes[1], "noise", "sigma", "noise σ")):
        tab = table[table.kind == kind]
        if not len(tab):                         # every model of this kind diverged
            ax.text(0.5, 0.5, "no model", ha="center", transform=ax.transAxes)
            ax.set_xlabel(label)
            continue
        ax.scatter(tab[col], tab.fourth, s=12, color="tab:blue", alpha=0.6)
        mean = tab.groupby(col).fourth.mean()
        ax.plot(mean.index, mean.values, "o-", color="tab:blue", label="mean")
        if len(base):
            ax.axhspan(base.min(), base.max(), color="0.8", label="baseline (λ = σ = 0)")
        ax.axhline(random_unit_fourth_norm(m), color="k", ls=":", label="3/(m + 2)")
        ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("final mean $\\|W_i\\|_4^4$")
    fig.tight_layout()
    return fig


def fig6_single(steps: np.ndarray, fourth: np.ndarray, W: np.ndarray, stuck: int | None
                ) -> plt.Figure:
    """Fig. 6: one instance — per-encoding ‖W_i‖₄⁴ over training (left; the stuck encoding, if
    any, thick orange) and the final W (n × m) as a heat map (right; the stuck row outlined).
    steps (T,); fourth (T, n); W (n, m); stuck: its feature index or None."""
    n = W.shape[0]
    fig, (ax, axw) = plt.subplots(1, 2, figsize=(12, 4.2), width_ratios=[1, 1.3])
    others = [c for k, c in enumerate(plt.cm.tab10.colors) if k != 1]     # orange: the stuck one
    for i in range(n):
        is_stuck = i == stuck
        ax.plot(steps, fourth[:, i], lw=2.2 if is_stuck else 0.9,
                color="tab:orange" if is_stuck else others[i % len(others)],
                label=f"$W_{{{i}}}$" + (" (stuck)" if is_stuck else ""),
                zorder=3 if is_stuck else 2)
    ax.set_xlabel("step")
    ax.set_ylabel("$\\|W_i\\|_4^4$")
    ax.set_ylim(0, 1.1)
    ax.legend(fontsize=7, ncol=2)
    lim = float(np.abs(W).max())
    im = axw.imshow(W, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    if stuck is not None:
        axw.add_patch(plt.Rectangle((-0.5, stuck - 0.5), W.shape[1], 1, fill=False, lw=2,
                                    edgecolor="tab:orange"))
    axw.set_xlabel("neuron k")
    axw.set_ylabel("feature i")
    fig.colorbar(im, ax=axw, shrink=0.8, label="$W_{ik}$")
    return fig


def fig3_curve(col: pd.DataFrame) -> pd.DataFrame:
    """Fig. 3 as a table for DVC plots, one row per m: mean polysemantic neurons and benign
    collisions at initialisation over instances, and the paper's n²/(4m). col: COLLISION_COLUMNS
    (empty: an empty table)."""
    out = col.groupby("m", as_index=False).agg(polysemantic=("polysemantic", "mean"),
                                                benign_init=("benign_pairs_init", "mean"))
    out["n2_over_4m"] = col.n.max() ** 2 / (4 * out.m)
    return out


#: The most recorded steps per curve of :func:`fig4_curves` (a plot of more shows no more).
CURVE_POINTS = 500


def fig4_curves(noise: pd.DataFrame, steps: np.ndarray, fourth: np.ndarray,
                 m: int) -> pd.DataFrame:
    """Fig. 4 as a long table for DVC plots, rows ``series, step, fourth``: the mean over
    instances of the mean ‖W_i‖₄⁴ per (noise, σ), and a random unit vector's 3/(m + 2), at
    most :data:`CURVE_POINTS` evenly spaced recorded steps per series, the first and the last
    among them (the values there are exact; the figure of the report draws every step).

    noise: NOISE_COLUMNS, a row's ``instance`` its row of ``fourth`` (rows may be left out);
    steps (T,); fourth (I, T).
    """
    keep = np.unique(np.linspace(0, len(steps) - 1, min(len(steps), CURVE_POINTS)).round()
                     .astype(int))
    steps, fourth = steps[keep], fourth[:, keep]
    parts = [pd.DataFrame({"series": f"{kind} σ={sigma:g}", "step": steps,
                           "fourth": fourth[tab.instance.to_numpy()].mean(0)})
             for (kind, sigma), tab in noise.groupby(["noise", "sigma"])]
    parts.append(pd.DataFrame({"series": "random unit vector 3/(m+2)", "step": steps,
                               "fourth": random_unit_fourth_norm(m)}))
    return pd.concat(parts, ignore_index=True)
