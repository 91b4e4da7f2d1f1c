"""One function per paper figure: tables or arrays in, matplotlib figure out.

The report notebooks call these and :func:`save`, which writes PNG and SVG atomically and
without timestamps or software metadata, so equal inputs give equal bytes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402

from tms.io import atomic_path  # noqa: E402

plt.rcParams["svg.hashsalt"] = "tms-repro"


def save(fig: plt.Figure, stem: str | os.PathLike) -> list[Path]:
    """Write ``stem``.png (150 dpi) and ``stem``.svg, atomically and byte-stable; returns paths."""
    out = []
    for ext, meta in (("png", {"Software": None}),
                      ("svg", {"Date": None, "Creator": None})):
        path = Path(f"{stem}.{ext}")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=150, metadata=meta, bbox_inches="tight")
        out.append(path)
    return out


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


def fig2_loss(trained: pd.DataFrame, rug: pd.DataFrame, theory: pd.DataFrame,
              p_targets: Sequence[float]) -> plt.Figure:
    """Fig. 2: per-feature loss against the ratio n_d/n_s, one colour per p.

    trained: columns model, p, ratio, loss, seed_index (mean ± standard error over seeds is
    drawn; relu models only, the grid p nearest each target); rug: p, ratio, loss; theory:
    p, ratio, loss, loss_linear. Left: per-feature loss (log scale); right: the same divided by
    p/3, the loss of the all-zero output.
    """
    relu = trained[trained.model == "relu"]
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(p_targets)))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for p, c in zip(p_targets, colors):
        th = theory[np.isclose(theory.p, p)].sort_values("ratio")
        rg = rug[np.isclose(rug.p, p)].sort_values("ratio")
        p_tr = nearest(relu.p, p) if len(relu) else None
        tr = (relu[np.isclose(relu.p, p_tr)].groupby("ratio").loss.agg(["mean", "sem", "size"])
              .reset_index() if p_tr is not None else pd.DataFrame())
        th = th[th.loss > 0]                      # ratio 1 has loss 0: off a log axis
        for ax, scale in zip(axes, (1.0, 3.0 / p)):
            ax.plot(th.ratio, th.loss * scale, "-", color=c, lw=1.5,
                    label=f"p = {p:g}: theory")
            ax.plot(th.ratio, th.loss_linear * scale, ":", color=c, lw=1.2,
                    label="optimal linear")
            ax.plot(rg.ratio, rg.loss * scale, "s--", color=c, ms=4, lw=0.8, mfc="none",
                    label="Persian rug")
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
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7)
    fig.tight_layout()
    return fig


def fig3_weights(W_block: np.ndarray, b_block: np.ndarray) -> plt.Figure:
    """Fig. 3: a k×k block of W = W_out W_in and the matching k components of the bias b."""
    k = W_block.shape[0]
    fig, (ax, axb) = plt.subplots(1, 2, figsize=(7.5, 6), width_ratios=[k, 1])
    lim = float(np.abs(W_block).max())
    im = ax.imshow(W_block, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    ax.set_title(f"W (first {k}×{k})")
    ax.set_xlabel("j")
    ax.set_ylabel("i")
    blim = float(np.abs(b_block).max())
    axb.imshow(b_block.reshape(-1, 1), cmap="RdBu_r", vmin=-max(lim, blim),
               vmax=max(lim, blim), interpolation="nearest")
    axb.set_title("b")
    axb.set_xticks([])
    axb.set_yticks([])
    fig.colorbar(im, ax=[ax, axb], shrink=0.8)
    return fig
