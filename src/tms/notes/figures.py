"""Figures of the notes on toy autoencoding: tables in, matplotlib figure out.

The notes have no figures of their own; each function draws one proposition or equation
against its measurement. Tables are the stage outputs under data/autoencoding_notes/
(tms.notes.data, tms.notes.training, tms.notes.theory, tms.notes.flows). Save with
tms.core.savefig.save.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tms.core.savefig import plt
from tms.notes import data
from tms.notes.flows import RISE_TOL


def _markers(n: int) -> list[str]:
    """n marker styles, cycling through eight."""
    return [["o", "s", "^", "D", "v", "P", "X", "*"][i % 8] for i in range(n)]


def moments(table: pd.DataFrame) -> plt.Figure:
    """Section 2.1: Monte Carlo moments of the sparse data against the closed forms.

    table: tms.notes.data.moments_table. Left: (MC − exact) in standard errors (closed form) for
    E x_i² and E x_i x_j against 1 − S, one marker per D, the band ±1.96 (95%). Right: the two
    eigenvalues of Σ (λ_1 once, λ_rest D − 1 times; lines exact, markers the MC largest and
    mean of the rest).
    """
    fig, (ax, axl) = plt.subplots(1, 2, figsize=(12, 4.6))
    Ds = sorted(table.D.unique())
    ax.axhspan(-1.96, 1.96, color="0.9")
    for k, (D, mk) in enumerate(zip(Ds, _markers(len(Ds)))):
        t = table[table.D == D].sort_values("S")
        q = 1 - t.S
        for col, color, shift in (("diag", "C0", 0.9), ("off", "C1", 1.1)):
            z = (t[f"{col}_mc"] - t[col]) / t[f"{col}_se"]
            ax.plot(q * shift * 1.04**k, z, mk, color=color, ms=6,
                    label=f"{'E x_i²' if col == 'diag' else 'E x_i x_j'}, D = {D}")
        axl.plot(q, t.lambda1, "-", color=f"C{Ds.index(D)}", lw=1)
        axl.plot(q, t.lambda1_mc, mk, color=f"C{Ds.index(D)}", mfc="none",
                 label=f"λ_1, D = {D}")
    rest = table.drop_duplicates("S").sort_values("S")
    axl.plot(1 - rest.S, rest.lambda_rest, "k--", lw=1, label="λ_2 = … = λ_D (exact)")
    for D, mk in zip(Ds, _markers(len(Ds))):
        t = table[table.D == D]
        axl.plot(1 - t.S, t.lambda_rest_mc, mk, color="k", ms=3)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("1 − S")
    ax.set_ylabel("(Monte Carlo − closed form) / standard error")
    ax.set_title("E x_i² = (1 − S)/3 and E x_i x_j = (1 − S)²/4")
    ax.legend(fontsize=7, ncol=2)
    axl.set_xscale("log")
    axl.set_yscale("log")
    axl.set_xlabel("1 − S")
    axl.set_ylabel("eigenvalue of Σ = E[x xᵀ]")
    axl.set_title("one large eigenvalue, the rest degenerate")
    axl.legend(fontsize=7)
    fig.tight_layout()
    return fig


def spectra(lam_sparse: np.ndarray, lam_scaled: np.ndarray, S: float) -> plt.Figure:
    """The eigenvalues λ_1 ≥ … ≥ λ_D of Σ for the sparse data and the scaled data (D,) each."""
    fig, ax = plt.subplots(figsize=(6, 4))
    i = np.arange(1, len(lam_sparse) + 1)
    ax.plot(i, lam_sparse, "o-", label="sparse data (λ_2 = … = λ_D)")
    ax.plot(i, lam_scaled, "s-", label="features scaled by distinct s_i")
    ax.set_yscale("log")
    ax.set_xlabel("i")
    ax.set_ylabel("λ_i")
    ax.set_title(f"spectrum of Σ, S = {S:g}, D = {len(i)}")
    ax.legend()
    return fig


def linear_convergence(table: pd.DataFrame) -> plt.Figure:
    """Proposition 1 / Corollary 2 for trained x ↦ ABx (tms.notes.training.linear_table).

    Against the step cap, one line per (d, S): the relative loss gap L/L_min − 1, the largest
    principal angle between col(A) and the top-d eigenvectors, the angle between u_1 and
    col(A), and ‖ΣP_A − P_AΣ‖/‖Σ‖. Solid: scaled data (distinct eigenvalues); dashed: the
    sparse data (degenerate: its top-d eigenvectors are not unique for d ≥ 2).
    """
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    cols = [("gap", "L / (tr Σ − Σ_{i≤d} λ_i) − 1"),
            ("angle_top_deg", "largest principal angle, col(A) vs top-d eigenvectors (°)"),
            ("angle_u1_deg", "angle between u_1 and col(A) (°)"),
            ("commutator", "‖ΣP_A − P_AΣ‖_F / ‖Σ‖_F")]
    ds = sorted(table.d.unique())
    marker = dict(zip(sorted(table.S.unique()), _markers(table.S.nunique())))
    for (spectrum, style) in (("scaled", "-"), ("sparse", "--")):
        for (d, S), t in table[table.spectrum == spectrum].groupby(["d", "S"]):
            t = t.sort_values("steps_cap")
            for ax, (col, _) in zip(axes.flat, cols):
                ax.plot(t.steps_cap, t[col], style, marker=marker[S],
                        color=f"C{ds.index(d)}", ms=4,
                        label=f"{spectrum}, d = {d}, S = {S:g}")
    for ax, (col, label) in zip(axes.flat, cols):
        ax.set_xscale("log")
        ax.set_yscale("linear" if col == "angle_top_deg" else "log")
        ax.set_xlabel("training steps (Adam)")
        ax.set_ylabel(label)
    axes[0, 0].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


def saddle(table: pd.DataFrame, critical: pd.DataFrame, summary: dict) -> plt.Figure:
    """Proposition 3. Left: loss decrease along the proof's perturbation against ε, measured
    and ε²/(1 + ε²)(λ_k − λ_j) (tms.notes.theory.saddle_table). Right: every critical point
    (tms.notes.theory.critical_points_table): its loss and its number of negative Hessian
    eigenvalues, measured and predicted (#{j ∈ I, k ∉ I, k < j})."""
    fig, (ax, axr) = plt.subplots(1, 2, figsize=(12, 4.6))
    ax.plot(table.eps, table.predicted, "-", color="k", lw=1,
            label="ε²/(1 + ε²)(λ_k − λ_j)")
    ax.plot(table.eps, table.decrease, "o", mfc="none", label="L(A, B) − L(Ã, B̃), measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("loss decrease")
    ax.set_title(f"I = {{{', '.join(map(str, summary['I']))}}}, j = {summary['j']}, "
                 f"k = {summary['k']}")
    ax.legend()
    axr.plot(critical.loss, critical.inversions, "o", ms=9, mfc="none", color="k",
             label="predicted #{(j, k): j ∈ I, k ∉ I, k < j}")
    axr.plot(critical.loss, critical.n_negative, ".", color="C3",
             label="negative Hessian eigenvalues")
    top = critical[critical.top]
    axr.plot(top.loss, top.n_negative, "*", ms=14, color="C2", label="I = {1, …, d} (minimum)")
    axr.set_xlabel("L at the critical point = tr Σ − Σ_{i∈I} λ_i")
    axr.set_ylabel("count")
    axr.set_title(f"all {len(critical)} critical points (⋆)")
    axr.legend(fontsize=8)
    fig.tight_layout()
    return fig


def flows(table: pd.DataFrame) -> plt.Figure:
    """Eq. 22 against gradient descent on the tied loss (tms.notes.flows.flows_table): the
    excess loss L − L_min against flow time, one panel per Σ, and ‖W_flow − W_GD‖_F."""
    names = list(dict.fromkeys(table.spectrum))
    fig, axes = plt.subplots(1, len(names), figsize=(4.4 * len(names), 4.2), squeeze=False)
    for ax, name in zip(axes[0], names):
        t = table[(table.spectrum == name) & (table.t > 0)]
        floor = 1e-16 * t.loss_min.max()
        ax.plot(t.t, np.maximum(t.loss_flow - t.loss_min, floor), "-", label="eq. 22 flow")
        ax.plot(t.t, np.maximum(t.loss_gd - t.loss_min, floor), "--",
                label="gradient descent, tied loss")
        ax.plot(t.t, t.distance, ":", color="k", label="‖W_flow − W_GD‖_F")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("flow time t (GD step k at t = 4ηk)")
        ax.set_title(f"Σ: {name}")
    axes[0, 0].set_ylabel("L(W) − min L;  ‖W_flow − W_GD‖_F (dotted)")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def energy(table: pd.DataFrame) -> plt.Figure:
    """Eq. 28's energy along the flow with Σ = I (tms.notes.flows.energy_along_flow): E over
    unordered pairs and the printed ordered-pairs reading (left); dE/dt against −‖dW/dt‖²
    (right, the gradient-flow identity)."""
    fig, (ax, axr) = plt.subplots(1, 2, figsize=(12, 4.4))
    t = table[table.t > 0]
    ax.plot(t.t, t.E, "-", label="E, ½Σ_{i<j}⟨w_i, w_j⟩² (unordered pairs)")
    ax.plot(t.t, t.E_ordered, "--", label="E as printed, ½Σ_{i≠j} (ordered pairs)")
    ax.set_xscale("log")
    ax.set_xlabel("t")
    ax.set_ylabel("energy")
    ax.legend(fontsize=8)
    axr.plot(t.t, -t.minus_speed_sq, "-", color="k", lw=3, alpha=0.3, label="‖dW/dt‖²_F")
    axr.plot(t.t, -t.dE_dt, "o", mfc="none", ms=4, label="−dE/dt (unordered pairs)")
    axr.plot(t.t, np.abs(t.dE_ordered_dt), "x", ms=4, label="|dE/dt|, E as printed")
    rise = t[t.dE_ordered_dt > RISE_TOL]          # above round-off: a rise
    axr.plot(rise.t, rise.dE_ordered_dt, "x", color="C3", ms=7,
             label=f"dE/dt > {RISE_TOL:g}: the printed E rises")
    axr.set_xscale("log")
    axr.set_yscale("log")
    axr.set_xlabel("t")
    axr.legend(fontsize=8)
    fig.tight_layout()
    return fig


def skeletons(table: pd.DataFrame) -> plt.Figure:
    """Section 3.1: μ(∪_{l≥2} Q_l) = 1 − S^D − D(1 − S)S^(D−1) against 1 − S, one line per D
    (exact, dense), markers the Monte Carlo shares with ±1.96 standard errors
    (tms.notes.data.skeletons_table)."""
    fig, ax = plt.subplots(figsize=(6.5, 4.6))
    q = np.geomspace(1 - table.S.max(), 1 - table.S.min(), 200)
    for k, (D, t) in enumerate(table.groupby("D")):
        ax.plot(q, data.mass_ge2(1 - q, D), "-", color=f"C{k}", label=f"D = {D}")
        ax.errorbar(1 - t.S, t.mass_ge2_mc, yerr=1.96 * t.mass_ge2_se, fmt="o", color=f"C{k}",
                    ms=4, mfc="none", capsize=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1e-6, 1.5)
    ax.set_xlabel("1 − S")
    ax.set_ylabel("μ(∪_{l≥2} Q_l)")
    ax.set_title("mass of inputs with ≥ 2 active features")
    ax.legend()
    return fig


def relu_share(table: pd.DataFrame, strata: pd.DataFrame) -> plt.Figure:
    """Section 3's open question (tms.notes.training.relu_tables). Left: share of a trained
    ReLU-output model's loss from inputs with ≥ 2 active features (95% interval) and their
    mass μ(∪_{l≥2} Q_l), against 1 − S. Right: each skeleton's share of the loss
    μ(Q_l) m_l / Σ μ m against l, one line per S (first seed)."""
    fig, (ax, axr) = plt.subplots(1, 2, figsize=(12, 4.6))
    g = table.groupby("S").agg(share=("share_ge2", "mean"), ci=("share_ci", "max"),
                               mass=("mass_ge2", "first")).reset_index()
    ax.errorbar(1 - g.S, g.share, yerr=g.ci, fmt="o-", capsize=2, label="share of the loss")
    ax.plot(1 - g.S, g.mass, "s--", mfc="none", label="share of the inputs, μ(∪_{l≥2} Q_l)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("1 − S")
    ax.set_ylabel("inputs with ≥ 2 active features")
    ax.set_title(f"trained ReLU-output models, D = {table.D.iloc[0]}, d = {table.d.iloc[0]}")
    ax.legend()
    first = strata[strata.seed_index == 0]
    colors = plt.cm.viridis(np.linspace(0, 0.9, first.S.nunique()))
    for c, (S, t) in zip(colors, first.groupby("S")):
        t = t[t.contribution > 1e-6]
        axr.plot(t.l, t.contribution, "o-", color=c, ms=3, label=f"S = {S:g}")
    axr.set_yscale("log")
    axr.set_xlabel("l (active features)")
    axr.set_ylabel("share of the loss from Q_l")
    axr.legend(fontsize=7)
    fig.tight_layout()
    return fig
