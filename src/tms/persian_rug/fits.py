"""Scaling-law fits with bootstrap confidence intervals (Persian Rug paper, section 4.3, app. D).

A power law L = C · Π_k v_k^{α_k} is fitted as a linear least-squares problem in logs,
log L = Σ_k α_k log v_k + c; the 95% intervals come from a seeded bootstrap over the points.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd


def _design(regressors: Mapping[str, np.ndarray], n: int) -> tuple[list[str], np.ndarray]:
    """The names and the least-squares design (n, k + 1) of a fit in logs: the regressors'
    logs, then 1. Raises ValueError on non-positive regressors or fewer than k + 2 points."""
    names = list(regressors)
    cols = [np.asarray(regressors[k], dtype=float) for k in names]
    if any(np.any(c <= 0) for c in cols):
        raise ValueError("the regressors must be positive (their logs are fitted)")
    if n < len(names) + 2:
        raise ValueError(f"{n} points are too few to fit {len(names) + 1} coefficients")
    return names, np.column_stack([np.log(c) for c in cols] + [np.ones(n)])


def log_coefficients(log_y: np.ndarray, regressors: Mapping[str, np.ndarray]
                     ) -> dict[str, float]:
    """The least-squares exponents of :func:`power_law` fitted to ``log_y`` (n,) itself, without
    an interval: regressor name → coefficient. The fit is linear in log y, so those for
    log(y·f) are those for log y plus those for log f. Raises ValueError as :func:`power_law`."""
    names, X = _design(regressors, len(log_y))
    return dict(zip(names, np.linalg.lstsq(X, np.asarray(log_y, dtype=float), rcond=None)[0]
                    .tolist()))


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
    if np.any(y <= 0):
        raise ValueError("power_law needs positive y (it fits logs)")
    names, X = _design(regressors, len(y))
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
