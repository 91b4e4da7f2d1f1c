"""The anatomy of a trained model's loss against the "optimal symmetric" theory (Persian Rug
paper, section 4): where the loss sits, what Gaussian interference of the same variance would
cost, and the shape of the interference that the theory assumes Gaussian.

Output i of a model is ReLU(W_ii x_i + η_i + b_i), η_i = Σ_{j≠i} W_ij x_j, W = W_out W_in. Its
loss splits exactly by whether feature i is on (x_i > 0) or off; the theory's loss splits the
same way (tms.persian_rug.theory.symmetric_loss_parts). Section 4.1 takes ν_i = η_i / W_ii to be
Gaussian with variance σ_i² = Var(x)·Σ_{j≠i}(W_ij/W_ii)² (the Lyapunov step, eq. 3): the
*Gaussianised* loss of feature i keeps that variance, makes ν_i Gaussian and gives the feature
its best a and b (tms.persian_rug.theory.optimal_at_sigma), so that a model whose only departure
from the theory is its variances gets the theory's loss, and a gain that survives
Gaussianisation is not a gain of the interference's shape. Every number is per feature (the
paper's per-sample loss / n_s), averaged over the features (or the live ones, where named).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd
import torch
from scipy.interpolate import CubicSpline

from tms.engine.sampler import heldout_uniform, sparse_from_uniform
from tms.persian_rug import paired, theory
from tms.persian_rug.rows import live_features
from tms.persian_rug.stats import KEY_COLUMNS, antipodal_share, check_model

#: An off-diagonal entry W_ij is *strongly negative* when it is below −W_ii/4: a quarter of the
#: feature's own weight is enough for feature j alone to silence feature i's output.
NEGATIVE = 0.25
#: Cosine at or below which two live features' embeddings count as an exact antipodal pair.
PAIR_COS = -0.99

#: Columns of the anatomy tables (data/persian_rug/anatomy/n{n_s}.parquet), one row per model,
#: after the keys copied from the trained table (tms.persian_rug.stats.KEY_COLUMNS).
COLUMNS = {
    "loss_off": "the held-out loss while the feature is off (x_i = 0), per feature: (1 − p)·E"
                "[ReLU(η_i + b_i)²] on the held-out sample",
    "loss_on": "while it is on: p·E[(u − ReLU(W_ii u + η_i + b_i))²]; loss_off + loss_on = loss",
    "gauss_loss": "the Gaussianised loss: per feature, Gaussian interference of the feature's own "
                  "variance σ_i² and its best a and b (theory.optimal_at_sigma), averaged",
    "gauss_off": "its part while the feature is off",
    "gauss_on": "its part while the feature is on",
    "theory_loss": "the optimal symmetric theory at this p and the realised ratio (eq. 4–6)",
    "theory_off": "its part while the feature is off",
    "theory_on": "its part while the feature is on",
    "paired_loss": "the antipodal construction at this p and ratio (tms.persian_rug.paired)",
    "variance_ratio": "median over live features of σ_i² against the bound Var(x)(n_s/n_d − 1) "
                      "(eq. 6): 1 is the bound met",
    "skew": "median over live features of the skewness of their row's off-diagonal W_ij (j ≠ i)",
    "negative_energy": "mean over live features of the share of their row's off-diagonal energy "
                       "Σ W_ij² in strongly negative entries (W_ij < −W_ii/4)",
    "negative_count": "mean over live features of the number of strongly negative entries",
    "dead_fraction": "share of features with W_ii below half the median (tms.persian_rug.rows)",
    "paired": "share of live features whose embedding has a live partner at cosine ≤ −0.99",
}


#: The anatomy columns the report's panels draw (tms.persian_rug.figures.anatomy_panels).
PANEL_COLUMNS = ["loss", "loss_off", "loss_on", "gauss_loss", "theory_loss", "theory_off",
                 "theory_on", "paired_loss"]


def loss_split(W_in: np.ndarray, W_out: np.ndarray, b: np.ndarray, p: float, seed: int,
               n_vectors: int, device: str = "cpu", chunk: int = 4096) -> tuple[float, float]:
    """(off, on): the held-out loss of one model split by whether the feature is off or on, per
    feature, on the engine's held-out sample (tms.engine.sampler.heldout_uniform with ``seed``,
    ``n_vectors`` vectors; x in float32 as the engine draws it, the model in float64). off + on
    is the model's held-out loss (tms.engine.train.heldout_loss) up to float32 rounding.

    W_in: (n_d, n_s); W_out: (n_s, n_d); b: (n_s,); p in (0, 1]. Raises ValueError on shape
    mismatch or p outside (0, 1].
    """
    _, n_s = check_model(W_in, W_out, b, p)
    W_in64, W_out64, b64 = (_float64(a, device) for a in (W_in, W_out, b))
    off = on = torch.zeros((), dtype=torch.float64, device=device)
    for v in heldout_uniform(seed, n_vectors, n_s, chunk, device=device):
        x = sparse_from_uniform(v, p).double()
        err = (torch.relu(x @ W_in64.T @ W_out64.T + b64) - x).pow(2)
        is_on = v < p
        on = on + err[is_on].sum()
        off = off + err[~is_on].sum()
    return float(off) / (n_vectors * n_s), float(on) / (n_vectors * n_s)


def _float64(a: np.ndarray, device: str) -> torch.Tensor:
    """``a`` as a float64 tensor on ``device``, a copy: kept weights are read-only memory maps,
    which torch would wrap with a warning (one naming this file's path, so a report's bytes
    would depend on where the checkout lies)."""
    return torch.as_tensor(np.array(a, dtype=np.float64), device=device)


def row_shape(W_in: np.ndarray, W_out: np.ndarray, block: int = 1024, device: str = "cpu"
              ) -> dict[str, np.ndarray]:
    """Per row i of W = W_out W_in (formed block of rows by block of rows in float64 on
    ``device``), each (n_s,): ``diag`` W_ii, ``off2`` Σ_{j≠i} W_ij², ``skew`` the skewness of the
    off-diagonal entries (the biased moment ratio m₃/m₂^{3/2}, as scipy.stats.skew; NaN for a
    constant row), ``negative_energy`` the share of off2 in entries W_ij < −:data:`NEGATIVE`·W_ii
    (NaN where off2 is 0) and ``negative_count`` their number."""
    n_s = W_out.shape[0]
    W_in64, W_out64 = _float64(W_in, device), _float64(W_out, device)
    out = {k: np.empty(n_s) for k in ("diag", "off2", "skew", "negative_energy",
                                       "negative_count")}
    n = n_s - 1
    for lo in range(0, n_s, block):
        rows = W_out64[lo:lo + block] @ W_in64                  # (rows, n_s)
        idx = torch.arange(lo, lo + len(rows), device=device)
        diag = rows[idx - lo, idx].clone()
        rows[idx - lo, idx] = 0.0
        s1, s2, s3 = rows.sum(1), rows.pow(2).sum(1), rows.pow(3).sum(1)
        mean = s1 / n
        m2 = s2 / n - mean ** 2
        m3 = s3 / n - 3 * mean * s2 / n + 2 * mean ** 3
        strong = rows < -NEGATIVE * diag[:, None]
        strong[idx - lo, idx] = False
        part = slice(lo, lo + len(rows))
        out["diag"][part] = diag.cpu().numpy()
        out["off2"][part] = s2.cpu().numpy()
        with np.errstate(divide="ignore", invalid="ignore"):
            out["skew"][part] = (m3 / m2.pow(1.5)).cpu().numpy()
            out["negative_energy"][part] = ((rows.pow(2) * strong).sum(1) / s2).cpu().numpy()
        out["negative_count"][part] = strong.sum(1).cpu().numpy()
    return out


#: The grid of normalised noise s = σ/√Var(x) on which :class:`Gaussianised` interpolates: 40
#: points a decade from 10⁻⁴ to 10³ (a trained live feature has s near √(n_s/n_d − 1), 0.1–30);
#: outside it each σ is optimised on its own.
S_GRID = np.logspace(-4.0, 3.0, 281)


class Gaussianised:
    """The best loss of one feature under Gaussian interference of standard deviation σ, and its
    two parts, at one p: (loss, off, on) = theory.symmetric_loss_parts at theory.optimal_at_sigma
    (p, σ). Exact optimisations on :data:`S_GRID`, a cubic spline in log σ between them (the loss
    within 1e-5 of the exact optimum's, relative, its parts within 1e-4, from s = 10⁻³ up:
    tests/persian_rug/test_anatomy.py); σ outside the grid is
    optimised exactly; σ = ∞ (a feature whose W_ii ≤ 0) is the best constant output, p/2:
    loss Var(x). Raises ValueError for p outside (0, 1]."""

    def __init__(self, p: float):
        self.p, self.scale = float(p), float(np.sqrt(theory.var_x(p)))
        exact = np.array([self.exact(s * self.scale) for s in S_GRID])
        self.spline = CubicSpline(np.log(S_GRID), exact, axis=0)

    def exact(self, sigma: float) -> tuple[float, float, float]:
        """(loss, off, on) optimised at this σ."""
        if np.isinf(sigma):
            off = (1 - self.p) * (self.p / 2) ** 2
            return self.scale ** 2, off, self.scale ** 2 - off
        best = theory.optimal_at_sigma(self.p, sigma)
        off, on = theory.symmetric_loss_parts(best["a"], best["b"], self.p, sigma)
        return float(off + on), float(off), float(on)

    def __call__(self, sigma: np.ndarray) -> np.ndarray:
        """(len(sigma), 3): (loss, off, on) of each σ ≥ 0 (inf allowed)."""
        s = np.asarray(sigma, dtype=float) / self.scale
        inside = (s >= S_GRID[0]) & (s <= S_GRID[-1])
        out = np.empty((len(s), 3))
        out[inside] = self.spline(np.log(s[inside]))
        for k in np.flatnonzero(~inside):
            out[k] = self.exact(float(s[k] * self.scale))
        return out


@lru_cache(maxsize=64)
def gaussianised(p: float) -> Gaussianised:
    """The :class:`Gaussianised` table of p, built once per p."""
    return Gaussianised(p)


@lru_cache(maxsize=4096)
def references(p: float, ratio: float) -> dict[str, float]:
    """The theory's loss and its two parts, and the antipodal construction's loss, at p and ratio
    (in (0, 1])."""
    best = theory.optimal_symmetric(p, ratio)
    off, on = theory.symmetric_loss_parts(best["a"], best["b"], p, np.sqrt(best["sigma2"]))
    return {"theory_loss": best["loss"], "theory_off": float(off), "theory_on": float(on),
            "paired_loss": float(paired.construction_loss(p, ratio, _pair(p)))}


@lru_cache(maxsize=64)
def _pair(p: float) -> dict:
    return paired.optimal_pair(p)


def model_anatomy(W_in: np.ndarray, W_out: np.ndarray, b: np.ndarray, p: float, seed: int,
                  n_vectors: int, device: str = "cpu") -> dict[str, float]:
    """:data:`COLUMNS` of one model (W_in (n_d, n_s), W_out (n_s, n_d), b (n_s,), p in (0, 1]),
    its loss split on the held-out sample of ``seed`` and ``n_vectors`` (:func:`loss_split`).
    Raises ValueError as :func:`loss_split`."""
    n_d, n_s = W_in.shape
    off, on = loss_split(W_in, W_out, b, p, seed, n_vectors, device)
    rows = row_shape(W_in, W_out, device=device)
    var_x = float(theory.var_x(p))
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma = np.where(rows["diag"] > 0, np.sqrt(var_x * rows["off2"]) / rows["diag"], np.inf)
    gauss = gaussianised(float(p))(sigma).mean(0)
    live = live_features(rows["diag"])
    bound = var_x * (n_s / n_d - 1)
    return {"loss_off": off, "loss_on": on, "gauss_loss": float(gauss[0]),
            "gauss_off": float(gauss[1]), "gauss_on": float(gauss[2]),
            **references(float(p), n_d / n_s),
            "variance_ratio": float(np.median(sigma[live] ** 2) / bound) if bound > 0 else np.nan,
            "skew": float(np.nanmedian(rows["skew"][live])),
            "negative_energy": float(np.nanmean(rows["negative_energy"][live])),
            "negative_count": float(np.mean(rows["negative_count"][live])),
            "dead_fraction": float(1.0 - live.mean()),
            "paired": antipodal_share(np.asarray(W_in), live, device=device, cos=PAIR_COS)}


def grid_anatomy(trained: pd.DataFrame, kept: dict, seed: int, n_vectors: int,
                 device: str = "cpu", models: Sequence[str] = ("relu",)) -> pd.DataFrame:
    """The anatomy table of a trained grid: :func:`model_anatomy` of every model of ``trained``
    (a trained table, tms.persian_rug.training.TRAIN_COLUMNS) of the kinds ``models`` that is not
    diverged and whose weights ``kept`` holds ({(model, instance): (W_in, W_out, b)},
    tms.persian_rug.weights.read), one model in memory at a time. Returns the trained table's
    KEY_COLUMNS (tms.persian_rug.stats) and :data:`COLUMNS`, in its order."""
    chosen = trained[trained.model.isin(models) & ~trained.diverged.astype(bool)]
    chosen = chosen[np.array([(str(m), int(i)) in kept
                              for m, i in zip(chosen.model, chosen.instance)], dtype=bool)]
    rows = [model_anatomy(*(np.array(a) for a in kept[(str(m), int(i))]), float(p), seed,
                          n_vectors, device)         # a copy: the folder's arrays are read-only
            for m, i, p in zip(chosen.model, chosen.instance, chosen.p)]
    values = pd.DataFrame(rows, columns=list(COLUMNS))
    return pd.concat([chosen[KEY_COLUMNS].reset_index(drop=True), values], axis=1)


def example_rows(trained: pd.DataFrame, kept: dict, ratio: float = 0.25
                 ) -> list[tuple[str, np.ndarray, float]]:
    """One row's interference at the smallest and the largest p of a trained grid, for the
    report: the first ReLU model (not diverged, weights in ``kept``) at each of those p with
    ratio_target nearest ``ratio``, its live row of median skewness: (title, W_ij / W_ii for
    j ≠ i (n_s − 1,), −:data:`NEGATIVE`), [] without such a model."""
    relu = trained[(trained.model == "relu") & ~trained.diverged.astype(bool)]
    relu = relu[np.array([("relu", int(i)) in kept for i in relu.instance], dtype=bool)]
    out = []
    for p in sorted({relu.p.min(), relu.p.max()}) if len(relu) else []:
        at = relu[relu.p == p]
        row = at.iloc[int(np.argmin(np.abs(at.ratio_target.to_numpy() - ratio)))]
        W_in, W_out, _ = kept[("relu", int(row.instance))]
        shape = row_shape(W_in, W_out)
        live = np.flatnonzero(live_features(shape["diag"]) & np.isfinite(shape["skew"]))
        if not len(live):
            continue
        i = live[np.argsort(shape["skew"][live])[len(live) // 2]]
        W_i = np.asarray(W_out, np.float64)[i] @ np.asarray(W_in, np.float64)
        out.append((f"p = {p:g}, ratio {row.ratio:.2f}, feature {i} (skewness "
                    f"{shape['skew'][i]:+.2f})", np.delete(W_i, i) / W_i[i], -NEGATIVE))
    return out
