"""The loss scalings of the Persian Rug paper's section 4.3, fitted (tms.persian_rug.fits) and
bounded (tms.persian_rug.bounds).

In the regime p/r ≪ 1 (r = n_d/n_s) the paper finds L ~ p²/r up to logarithms (eq. 13 and 31,
stated for r ≪ 1). Two laws are fitted by least squares in logs, each with bootstrap 95%
intervals, on the points with p/r ≤ ``max_p_over_r`` (and r < 1):

- ``p, r``: log L = α log p + β log r + c (the paper's form; exponents 2 and −1), on the
  points that also have r ≤ ``small_r`` (the paper's "r ≪ 1");
- ``p, n_s/n_d − 1``: log L = α′ log p + β′ log(n_s/n_d − 1) + c′ (the same law with the exact
  σ² = Var(x)(n_s/n_d − 1) of eq. 6, valid up to r = 1; exponents 2 and +1).

β differs from −1 by the factor (1 − r) that the first form leaves out (d log(1 − r)/d log r =
−r/(1 − r), large near r = 1: on the default theory grid, fitted up to r = 0.95 the theory gives
β ≈ −1.81, up to r = 0.05 β ≈ −1.04, up to r = 0.02 β ≈ −0.98), and α from 2 by the log(1/p) of
eq. 13.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tms.core import divergence
from tms.persian_rug import bounds, cells, fits, theory

#: The paper's exponents, by term of the two laws.
PAPER_EXPONENTS = {"p": 2.0, "r": -1.0, "n_s/n_d − 1": 1.0}

#: The two laws fitted, in the fit table's order.
LAWS = ("p, r", "p, n_s/n_d − 1")

#: The scales whose logarithm may multiply the law, which holds "up to logarithmic factors
#: whenever p/r ≪ 1" (sec. 4.3.3). Scale name → scale of (p, r), > 1 in the regime. 1/p: the
#: log(1/p) the paper names (eq. 13's upper bound). r/p: our reading of the rest, the log of the
#: statement's small parameter p/r (~ σ², eqs. 11–12). The paper's own optimal symmetric loss
#: carries it: on the shipped theory grids its residual from p²(n_s/n_d − 1) fits
#: log(1/p)^0.86–0.88 · log(r/p)^−0.25–0.26, a residual sum of squares 4.3–4.6× smaller than
#: with log(1/p) alone (docs/claims.md, "Tolerances").
LOG_FACTORS = {"log(1/p)": lambda p, r: 1 / p, "log(r/p)": lambda p, r: r / p}

#: Fewest points in the regime for a fit of three coefficients
#: (tms.persian_rug.fits.power_law needs 4).
MIN_POINTS = 4

#: Columns of the fit table (data/persian_rug/scaling_fits.parquet).
FIT_COLUMNS = ["source", "law", "term", "estimate", "low", "high", "paper", "points"]

#: Columns of the theory-and-bounds table (data/persian_rug/scaling_theory.parquet).
THEORY_COLUMNS = ["p", "ratio", "loss", "lower", "upper", "L0"]


def theory_grid(p_values: Sequence[float], ratios: Sequence[float]) -> pd.DataFrame:
    """Optimal symmetric loss and the bounds of section 4.3 on the grid p_values × ratios.

    One row per (p, ratio), p slowest; columns :data:`THEORY_COLUMNS`: ``loss``
    (tms.persian_rug.theory.optimal_symmetric), ``lower`` and ``upper`` (tms.persian_rug.bounds),
    ``L0`` = Var(x) (tms.persian_rug.theory.initial_loss). All per-feature MSEs. Raises ValueError
    for p outside (0, 1) or a ratio outside (0, 1].
    """
    table = theory.theory_table(p_values, ratios)
    pairs = list(zip(table.p, table.ratio))
    table["lower"] = [bounds.lower_bound(p, r) for p, r in pairs]
    table["upper"] = [bounds.upper_bound(p, r) for p, r in pairs]
    table["L0"] = [float(theory.initial_loss(p)) for p in table.p]
    return table[THEORY_COLUMNS]


def trained_source(n_s: int) -> str:
    """The fit table's source name of the trained grid of ``n_s`` (stage pr_scaling)."""
    return f"trained (n_s = {n_s})"


def in_regime(table: pd.DataFrame, max_p_over_r: float) -> pd.Series:
    """Boolean mask of the rows with p/ratio ≤ max_p_over_r and ratio < 1 (the fits' regime)."""
    return (table.p / table.ratio <= max_p_over_r) & (table.ratio < 1)


def law_points(table: pd.DataFrame, law: str, max_p_over_r: float, small_r: float = 1.0,
               loss: str = "loss") -> pd.DataFrame:
    """The rows of ``table`` (columns p, ratio and ``loss``) that :func:`fit_laws` fits ``law``
    to: those in the regime with a positive loss, for the paper's form ``p, r`` only those with
    ratio ≤ small_r too. Raises KeyError for a law not in :data:`LAWS`."""
    regime = table[in_regime(table, max_p_over_r) & (table[loss] > 0)]
    small = regime.ratio <= small_r * (1 + 1e-9)            # grid values equal to it included
    return {"p, r": regime[small], "p, n_s/n_d − 1": regime}[law]


def regressors(law: str, p: np.ndarray, r: np.ndarray) -> dict[str, np.ndarray]:
    """The regressors of ``law`` at the points (p, r) (n,): term → (n,) values. Raises KeyError
    for a law not in :data:`LAWS`."""
    if law == "p, r":
        return {"p": p, "r": r}
    if law == "p, n_s/n_d − 1":
        return {"p": p, "n_s/n_d − 1": 1 / r - 1}
    raise KeyError(law)


def log_factor_shift(points: pd.DataFrame, law: str, term: str) -> tuple[float, str]:
    """How far one logarithmic factor of :data:`LOG_FACTORS` moves the exponent of ``term`` when
    ``law`` is fitted to ``points`` (:func:`law_points`): the largest |coefficient| of ``term``
    in the least-squares fit of log log(scale) on the law's regressors (the fit is linear in
    log L, so fitting L·log(scale) instead of L moves the exponent by exactly that), and the
    factor that gives it. Raises ValueError with fewer than :data:`MIN_POINTS` points or a
    scale ≤ 1 at a point (p ≥ r: persian_rug.scaling.max_p_over_r must be < 1), KeyError for a
    law or term it does not have."""
    p, r = points.p.to_numpy(float), points.ratio.to_numpy(float)
    shifts = {}
    for name, scale in LOG_FACTORS.items():
        s = scale(p, r)
        if np.any(s <= 1):
            raise ValueError(f"{name} needs its scale > 1 at every point, and it is "
                             f"{s.min():.3g} at the lowest (p/r = 1 is in the regime: "
                             f"persian_rug.scaling.max_p_over_r must be < 1)")
        shifts[name] = abs(fits.log_coefficients(np.log(np.log(s)), regressors(law, p, r))[term])
    top = max(shifts, key=shifts.get)
    return shifts[top], top


def trained_means(trained: pd.DataFrame) -> pd.DataFrame:
    """The points of a trained grid's fits (stage pr_scaling): its ReLU models that did not
    diverge (tms.core.divergence.split), their loss averaged over seeds per (p, ratio)
    (tms.persian_rug.cells.over_seeds)."""
    kept = divergence.split(trained)[0]
    return cells.over_seeds(kept[kept.model == "relu"], ["loss"])


def fit_laws(table: pd.DataFrame, source: str, max_p_over_r: float, n_boot: int,
             seed: int, small_r: float = 1.0, loss: str = "loss") -> pd.DataFrame:
    """Fit both laws to the positive losses of ``table`` in the regime (one point per row,
    :func:`law_points`), the paper's form ``p, r`` only where also ratio ≤ small_r.

    table: columns p, ratio and ``loss`` (per-feature MSE; one row per grid point, e.g. means
    over seeds). Returns rows of :data:`FIT_COLUMNS`: one per law and term (p, r or
    n_s/n_d − 1, const) with the estimate, its bootstrap 95% interval, the paper's exponent
    (NaN for const) and the number of points. With fewer than :data:`MIN_POINTS` points in the
    regime nothing is fitted: estimate, low and high are NaN.
    """
    out = []
    for law in LAWS:
        sel = law_points(table, law, max_p_over_r, small_r, loss)
        p, r, y = sel.p.to_numpy(), sel.ratio.to_numpy(), sel[loss].to_numpy()
        regs = regressors(law, p, r)
        if len(sel) >= MIN_POINTS:
            fit = fits.power_law(y, regs, n_boot=n_boot, seed=seed)
        else:
            fit = pd.DataFrame({"term": list(regs) + ["const"], "estimate": np.nan,
                                "low": np.nan, "high": np.nan})
        fit.insert(0, "law", law)
        fit.insert(0, "source", source)
        fit["paper"] = [PAPER_EXPONENTS.get(t, np.nan) for t in fit.term]
        fit["points"] = len(sel)
        out.append(fit)
    return pd.concat(out, ignore_index=True)[FIT_COLUMNS]
