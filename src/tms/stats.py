"""Statistics of trained weights (Persian Rug paper, section 3 and figs. 3–7).

All functions take one model's W_in (n_d × n_s), W_out (n_s × n_d) and b (n_s), as numpy
arrays, and never form more than they need.
"""

from __future__ import annotations

import numpy as np


def diagonal(W_in: np.ndarray, W_out: np.ndarray) -> np.ndarray:
    """diag(W) of W = W_out W_in, shape (n_s,), without forming W: W_ii = Σ_k W_out[i,k] W_in[k,i]."""
    return np.einsum("ik,ki->i", W_out.astype(np.float64), W_in.astype(np.float64))


def summary(W_in: np.ndarray, W_out: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Mean and standard deviation (ddof 0) over features of diag(W) and of b (fig. 3 caption),
    and the same for diag(W) over live features only.

    A feature is *dead* when its diagonal W_ii is below half the median diagonal: the model
    has given it up (its output stays off). ``dead_fraction`` is their share of the n_s features.
    """
    d = diagonal(W_in, W_out)
    b = b.astype(np.float64)
    live = d >= 0.5 * np.median(d)
    return {"diag_mean": float(d.mean()), "diag_std": float(d.std()),
            "bias_mean": float(b.mean()), "bias_std": float(b.std()),
            "dead_fraction": float(1.0 - live.mean()),
            "diag_live_mean": float(d[live].mean()), "diag_live_std": float(d[live].std())}
