"""The rows of one model's W = W_out W_in, formed block by block and never whole: its diagonal,
the live and dead features, the sums over each row's off-diagonal, and Λ (Persian Rug paper,
section 3 and eq. 3).

What training keeps of every model besides its weights (:func:`summary`, the trained tables'
diag and bias columns) and the convergence check's Λ come from here, so that the statistics of
figs. 4–7 (tms.persian_rug.stats, computed downstream of the kept weights) can grow without
retraining anything. Each function takes one model's W_in (n_d × n_s), W_out (n_s × n_d) and
b (n_s), as numpy arrays.
"""

from __future__ import annotations

import numpy as np
import torch


def diagonal(W_in: np.ndarray, W_out: np.ndarray) -> np.ndarray:
    """diag(W) of W = W_out W_in, shape (n_s,), without forming W: W_ii = Σ_k W_out[i,k] W_in[k,i]."""
    return np.einsum("ik,ki->i", W_out.astype(np.float64), W_in.astype(np.float64))


def live_features(diag: np.ndarray) -> np.ndarray:
    """The live features of a diagonal (n_s,): W_ii at least half the median diagonal, (n_s,)
    bool (see :func:`summary`; the others are dead)."""
    return diag >= 0.5 * np.median(diag)


def summary(W_in: np.ndarray, W_out: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Mean and standard deviation (ddof 0) over features of diag(W) and of b (fig. 3 caption),
    and the same for diag(W) over live features only.

    A feature is *dead* when its diagonal W_ii is below half the median diagonal: the model
    has given it up (its output stays off). ``dead_fraction`` is their share of the n_s features.
    """
    d = diagonal(W_in, W_out)
    b = b.astype(np.float64)
    live = live_features(d)
    return {"diag_mean": float(d.mean()), "diag_std": float(d.std()),
            "bias_mean": float(b.mean()), "bias_std": float(b.std()),
            "dead_fraction": float(1.0 - live.mean()),
            "diag_live_mean": float(d[live].mean()), "diag_live_std": float(d[live].std())}


def row_sums(W_in: np.ndarray, W_out: np.ndarray, block: int = 1024, device: str = "cpu"
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """diag(W), Σ_{j≠i} W_ij² and Σ_{j≠i} |W_ij|³ per row i of W = W_out W_in, each (n_s,)
    float64: W formed block of rows by block of rows in float64 on ``device``. The part of
    :func:`weight_statistics` that does not depend on p (a model's rows for every p at once).
    """
    n_s = W_out.shape[0]
    W_in64 = torch.as_tensor(W_in, dtype=torch.float64, device=device)
    W_out64 = torch.as_tensor(W_out, dtype=torch.float64, device=device)
    diag, off2, off3 = (torch.empty(n_s, dtype=torch.float64, device=device) for _ in range(3))
    for lo in range(0, n_s, block):
        rows = W_out64[lo:lo + block] @ W_in64                 # (rows, n_s)
        idx = torch.arange(lo, lo + len(rows), device=device)
        diag[idx] = rows[idx - lo, idx]
        rows[idx - lo, idx] = 0.0
        off2[idx] = rows.pow(2).sum(1)
        off3[idx] = rows.abs().pow(3).sum(1)
    return tuple(t.cpu().numpy() for t in (diag, off2, off3))


def lyapunov(off2: np.ndarray, off3: np.ndarray) -> tuple[float, float]:
    """Λ = max_i Σ_{j≠i}|W_ij|³ / (Σ_{j≠i} W_ij²)^{3/2} (fig. 7, eq. 3) from the off-diagonal
    sums of :func:`row_sums` (each (n_s,)), and the authors' variant without the 3/2 power
    (their code): (Λ, Λ_authors). Rows without an off-diagonal entry are skipped; NaN if every
    row is."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lyap = np.where(off2 > 0, off3 / off2 ** 1.5, np.nan)
        lyap_authors = np.where(off2 > 0, off3 / off2, np.nan)
    return float(np.nanmax(lyap)), float(np.nanmax(lyap_authors))
