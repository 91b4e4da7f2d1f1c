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


def weight_statistics(W_in: np.ndarray, W_out: np.ndarray, b: np.ndarray, p: float,
                      block: int = 1024) -> dict[str, float]:
    """The statistics of the Persian Rug paper's figs. 4–7 and eq. 6 for one model.

    W = W_out W_in is formed block of rows by block of rows (never all at once), float64.
    Var(x) = (4p − 3p²)/12 is the variance of one input feature.

    - ``diag_var``: variance over features of diag(W) (fig. 4).
    - ``bias_var``: variance over features of b (fig. 5).
    - ``dvar_nu``: variance over rows of Var(ν_i) = Var(x)·Σ_{j≠i} W_ij² (fig. 6, the paper's
      definition); ``dvar_nu_authors`` includes the diagonal in the sum (the authors' code).
    - ``lyapunov``: Λ = max_i Σ_{j≠i}|W_ij|³ / (Σ_{j≠i} W_ij²)^{3/2} (fig. 7, eq. 3);
      ``lyapunov_authors`` omits the 3/2 power (the authors' code).
    - ``var_nu_normalised``: mean_i Var(x)·Σ_{j≠i} (W_ij/W_ii)², the interference variance with
      each row's diagonal normalised to 1 (eq. 4: ν_i = W_ii⁻¹ Σ_{j≠i} W_ij x_j), over rows with
      W_ii > 0; ``variance_bound``: Var(x)(n_s/n_d − 1), eq. 6 / appendix C, n_d = rank bound;
      ``bound_ratio`` = var_nu_normalised / variance_bound, ≥ 1 for every W of rank ≤ n_d whose
      diagonal is positive, = 1 for the Persian rug.

    W_in: (n_d, n_s); W_out: (n_s, n_d); b: (n_s,); p in (0, 1]. Raises ValueError on shape
    mismatch.
    """
    n_d, n_s = W_in.shape
    if W_out.shape != (n_s, n_d) or b.shape != (n_s,):
        raise ValueError(f"shapes do not match: W_in {W_in.shape}, W_out {W_out.shape}, b {b.shape}")
    var_x = (4 * p - 3 * p * p) / 12
    W_in64, W_out64 = W_in.astype(np.float64), W_out.astype(np.float64)
    diag, off2, off3, all2 = (np.empty(n_s) for _ in range(4))
    for lo in range(0, n_s, block):
        rows = W_out64[lo:lo + block] @ W_in64                 # (rows, n_s)
        idx = np.arange(lo, lo + len(rows))
        d = rows[idx - lo, idx].copy()
        rows[idx - lo, idx] = 0.0
        diag[idx], all2[idx] = d, (rows ** 2).sum(1) + d ** 2
        off2[idx] = (rows ** 2).sum(1)
        off3[idx] = (np.abs(rows) ** 3).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lyap = np.where(off2 > 0, off3 / off2 ** 1.5, np.nan)
        lyap_authors = np.where(off2 > 0, off3 / off2, np.nan)
    live = diag > 0
    var_nu_norm = float(np.mean(var_x * off2[live] / diag[live] ** 2)) if live.any() else np.nan
    bound = var_x * (n_s / n_d - 1)
    return {"diag_var": float(diag.var()), "bias_var": float(b.astype(np.float64).var()),
            "dvar_nu": float(np.var(var_x * off2)),
            "dvar_nu_authors": float(np.var(var_x * all2)),
            "lyapunov": float(np.nanmax(lyap)), "lyapunov_authors": float(np.nanmax(lyap_authors)),
            "var_nu_normalised": var_nu_norm, "variance_bound": float(bound),
            "bound_ratio": var_nu_norm / bound if bound > 0 else np.nan}
