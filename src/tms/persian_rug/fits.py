"""Scaling-law fits with bootstrap confidence intervals (Persian Rug paper, section 4.3, app. D).

A power law L = C · Π_k v_k^{α_k} is fitted as a linear least-squares problem in logs,
log L = Σ_k α_k log v_k + c; the 95% intervals come from a seeded bootstrap over the points.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd


def power_law(y: np.ndarray, regressors: Mapping[str, np.ndarray], n_boot: int = 2000,
              seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Fit log y = Σ_k α_k log regressors[k] + c by least squares, with bootstrap intervals.

    y: (n,) positive values (e.g. per-feature losses); regressors: name → (n,) positive values
    (e.g. {"p": p, "r": n_d/n_s}). Returns one row per coefficient (the regressors' names and
    "const") with columns ``term, estimate, low, high`` (percentile bootstrap at ``level``,
    ``n_boot`` resamples of the n points with replacement, seeded). Raises ValueError on
    non-positive values or fewer points than coefficients + 1.
    """
    y = np.asarray(y, dtype=float)
    names = list(regressors)
    cols = [np.asarray(regressors[k], dtype=float) for k in names]
    if np.any(y <= 0) or any(np.any(c <= 0) for c in cols):
        raise ValueError("power_law needs positive y and regressors (it fits logs)")
    if len(y) < len(names) + 2:
        raise ValueError(f"{len(y)} points are too few to fit {len(names) + 1} coefficients")
    X = np.column_stack([np.log(c) for c in cols] + [np.ones_like(y)])
    ly = np.log(y)
    est = np.linalg.lstsq(X, ly, rcond=None)[0]
    rng = np.random.default_rng(seed)
    boot = np.empty((n_boot, X.shape[1]))
    for k in range(n_boot):
        idx = rng.integers(0, len(y), len(y))
        boot[k] = np.linalg.lstsq(X[idx], ly[idx], rcond=None)[0]
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail], axis=0)
    return pd.DataFrame({"term": names + ["const"], "estimate": est, "low": low, "high": high})
