"""Statistics of trained weights (Persian Rug paper, section 3 and figs. 3–7).

The per-model functions take one model's W_in (n_d × n_s), W_out (n_s × n_d) and b (n_s), as
numpy arrays, and never form more than they need (tms.persian_rug.rows). They run downstream of
training, on the weights it keeps (:func:`grid_statistics`, the pr_stats stage): a statistic added
here reruns no training. A table's means per grid cell are tms.persian_rug.cells'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from tms.persian_rug.rows import live_features, lyapunov, row_sums


#: Cosine at or below which two features' embeddings (columns of W_in) form an antipodal pair.
ANTIPODAL_COS = -0.9


def antipodal_share(W_in: np.ndarray, live: np.ndarray, block: int = 1024, device: str = "cpu",
                    cos: float = ANTIPODAL_COS) -> float:
    """Share of the live features whose embedding u_i = W_in[:, i] has an antipodal partner:
    another live feature j with cos(u_i, u_j) ≤ ``cos`` (default :data:`ANTIPODAL_COS`). Two features on one
    direction with opposite signs, told apart by the output ReLU and a negative bias: a structure
    the symmetric theory does not have.

    W_in: (n_d, n_s); live: (n_s,) bool (tms.persian_rug.rows.live_features). Cosines are formed
    block by block in float64 on ``device``. NaN with fewer than two live features; a zero column is
    nobody's partner.
    """
    U = torch.as_tensor(W_in[:, live], dtype=torch.float64, device=device)
    if U.shape[1] < 2:
        return float("nan")
    U = U / U.norm(dim=0).clamp_min(1e-300)
    paired = torch.zeros(U.shape[1], dtype=torch.bool, device=device)
    for lo in range(0, U.shape[1], block):
        cosine = U[:, lo:lo + block].T @ U                    # (block, live); cos(u, u) = 1
        paired[lo:lo + block] = (cosine <= cos).any(1)
    return float(paired.double().mean())


def check_model(W_in: np.ndarray, W_out: np.ndarray, b: np.ndarray, p: float
                ) -> tuple[int, int]:
    """(n_d, n_s) of one model, W_in (n_d, n_s), W_out (n_s, n_d), b (n_s,), at p. Raises
    ValueError on shape mismatch or p outside (0, 1]."""
    n_d, n_s = W_in.shape
    if W_out.shape != (n_s, n_d) or b.shape != (n_s,):
        raise ValueError(f"shapes do not match: W_in {W_in.shape}, W_out {W_out.shape}, b {b.shape}")
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must be in (0, 1], got {p}")
    return n_d, n_s


def weight_statistics(W_in: np.ndarray, W_out: np.ndarray, b: np.ndarray, p: float,
                      block: int = 1024, device: str = "cpu") -> dict[str, float]:
    """The statistics of the Persian Rug paper's figs. 4–7 and eq. 6 for one model.

    W = W_out W_in is formed block of rows by block of rows (never all at once), in float64 on
    ``device`` (a GPU makes n_s = 8192 cheap). Var(x) = (4p − 3p²)/12 is the variance of one
    input feature. Every value is a number per model:

    - ``diag_var``: variance over features of diag(W) (fig. 4).
    - ``bias_var``: variance over features of b (fig. 5).
    - ``dvar_nu``: variance over rows of Var(ν_i) = Var(x)·Σ_{j≠i} W_ij² (fig. 6, the paper's
      definition); ``dvar_nu_authors`` includes the diagonal in the sum (the authors' code);
      ``mean_var_nu``: the mean over rows of Var(ν_i), so that √dvar_nu / mean_var_nu is the
      relative spread of the interference variances (fig. 6: "identical" at n_s 8192).
    - ``lyapunov``: Λ = max_i Σ_{j≠i}|W_ij|³ / (Σ_{j≠i} W_ij²)^{3/2} (fig. 7, eq. 3);
      ``lyapunov_authors`` omits the 3/2 power (the authors' code).
    - ``var_nu_normalised``: mean_i Var(x)·Σ_{j≠i} (W_ij/W_ii)², the interference variance with
      each row's diagonal normalised to 1 (eq. 4: ν_i = W_ii⁻¹ Σ_{j≠i} W_ij x_j), over the rows
      with W_ii ≠ 0; ``variance_bound``: Var(x)(n_s/n_d − 1), eq. 6 / appendix C, n_d = rank
      bound; ``bound_ratio`` = var_nu_normalised / variance_bound. ≥ 1 for every W of rank ≤ n_d
      with a non-zero diagonal (D⁻¹W has rank ≤ n_d and unit diagonal, so its squared Frobenius
      norm is ≥ n_s²/n_d by Schur), = 1 for the Persian rug. Nearly dead features (W_ii ≈ 0)
      make it large; ``bound_ratio_live`` averages over the live rows only (W_ii at least half
      the median, as in tms.persian_rug.rows.summary), which no theorem keeps ≥ 1.
    - ``antipodal``: :func:`antipodal_share` over the live features.

    W_in: (n_d, n_s); W_out: (n_s, n_d); b: (n_s,); p in (0, 1]. Raises ValueError on shape
    mismatch or p outside (0, 1].
    """
    n_d, _ = check_model(W_in, W_out, b, p)
    rows = row_sums(W_in, W_out, block, device)
    return {**statistics_from_rows(*rows, b, p, n_d),
            "antipodal": antipodal_share(W_in, live_features(rows[0]), block, device)}


def statistics_from_rows(diag: np.ndarray, off2: np.ndarray, off3: np.ndarray, b: np.ndarray,
                         p: float, n_d: int) -> dict[str, float]:
    """:func:`weight_statistics` from the row sums (tms.persian_rug.rows.row_sums) of a model of
    hidden width n_d, its b (n_s,) and p in (0, 1] (p is not checked here)."""
    n_s = len(diag)
    var_x = (4 * p - 3 * p * p) / 12                      # Var(x), tms.persian_rug.theory.var_x
    with np.errstate(divide="ignore", invalid="ignore"):
        normalised = var_x * off2 / diag ** 2
    nonzero, live = diag != 0, live_features(diag)
    var_nu_norm = float(np.mean(normalised[nonzero])) if nonzero.any() else np.nan
    var_nu_live = float(np.mean(normalised[live & nonzero])) if (live & nonzero).any() else np.nan
    bound = var_x * (n_s / n_d - 1)
    return {"diag_var": float(diag.var()), "bias_var": float(np.asarray(b, np.float64).var()),
            "dvar_nu": float(np.var(var_x * off2)),
            "dvar_nu_authors": float(np.var(var_x * (off2 + diag ** 2))),
            "mean_var_nu": float(np.mean(var_x * off2)),
            **dict(zip(("lyapunov", "lyapunov_authors"), lyapunov(off2, off3))),
            "var_nu_normalised": var_nu_norm, "variance_bound": float(bound),
            "bound_ratio": var_nu_norm / bound if bound > 0 else np.nan,
            "bound_ratio_live": var_nu_live / bound if bound > 0 else np.nan}


#: Columns of the statistics tables (data/persian_rug/stats/n{n_s}.parquet) besides the keys
#: copied from the trained table; see :func:`weight_statistics`.
STAT_COLUMNS = ["diag_var", "bias_var", "dvar_nu", "dvar_nu_authors", "mean_var_nu", "lyapunov",
                "lyapunov_authors", "var_nu_normalised", "variance_bound", "bound_ratio",
                "bound_ratio_live", "antipodal"]

#: Columns copied from the trained table (tms.persian_rug.training.TRAIN_COLUMNS) into the
#: statistics table.
KEY_COLUMNS = ["instance", "model", "n_s", "n_d", "ratio", "ratio_target", "p", "seed_index",
               "diverged", "loss", "diag_mean", "bias_mean"]


def random_weights(n_s: int, n_d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Untrained weights of one model, the baseline of figs. 4–7: (W_in (n_d, n_s), W_out
    (n_s, n_d), b (n_s,)) float32, drawn as a model is initialised before training (PyTorch's
    default for a Linear layer, U(±1/√fan_in): W_in U(±1/√n_s), W_out and b U(±1/√n_d)) from
    numpy's generator seeded by (seed, 1), a stream of its own."""
    rng = np.random.default_rng([int(seed), 1])
    a_in, a_out = 1 / np.sqrt(n_s), 1 / np.sqrt(n_d)
    return (rng.uniform(-a_in, a_in, (n_d, n_s)).astype(np.float32),
            rng.uniform(-a_out, a_out, (n_s, n_d)).astype(np.float32),
            rng.uniform(-a_out, a_out, n_s).astype(np.float32))


def baseline_statistics(trained: pd.DataFrame, device: str = "cpu") -> pd.DataFrame:
    """:func:`weight_statistics` of untrained weights (:func:`random_weights` of each row's n_s,
    n_d and seed) for every row of a trained grid table, one model in memory at a time. Returns
    :data:`KEY_COLUMNS` (the trained row's) + :data:`STAT_COLUMNS`."""
    rows = [weight_statistics(*random_weights(n_s, n_d, seed), float(p), device=device)
            for n_s, n_d, seed, p in zip(trained.n_s, trained.n_d, trained.seed, trained.p)]
    return with_keys(trained, rows)


def with_keys(trained: pd.DataFrame, rows: Sequence[dict]) -> pd.DataFrame:
    """The statistics table of a trained grid: :data:`KEY_COLUMNS` of ``trained`` and, row by
    row, ``rows`` (dicts of :data:`STAT_COLUMNS`, one per row of ``trained``, in its order).
    Raises ValueError if the two differ in length."""
    if len(trained) != len(rows):
        raise ValueError(f"{len(trained)} table rows but {len(rows)} rows of statistics")
    stats = pd.DataFrame(list(rows), columns=STAT_COLUMNS)
    return pd.concat([trained[KEY_COLUMNS].reset_index(drop=True), stats], axis=1)


def grid_statistics(trained: pd.DataFrame, kept: Mapping[tuple[str, int], tuple],
                    measured: Mapping[tuple[str, int], dict], device: str = "cpu"
                    ) -> pd.DataFrame:
    """The statistics table of a trained grid (data/persian_rug/stats/n{n_s}.parquet, the pr_stats
    stage): :func:`weight_statistics` of every model of ``trained`` (a trained table,
    tms.persian_rug.training.TRAIN_COLUMNS) from its weights in ``kept`` ({(model, instance):
    (W_in (n_d, n_s), W_out (n_s, n_d), b (n_s,))}, tms.persian_rug.weights.read), one model
    in memory at a time; a model whose weights were not kept takes the statistics measured where
    it trained (``measured``, the same keys, tms.persian_rug.unkept.read). Returns
    :data:`KEY_COLUMNS` + :data:`STAT_COLUMNS`, one row per row of ``trained``, in its order.
    Raises KeyError naming a model in neither."""
    rows = []
    for model, instance, p in zip(trained.model, trained.instance, trained.p):
        key = (str(model), int(instance))
        if key in kept:
            weights = (np.array(a) for a in kept[key])   # a copy: the folder's are read-only
            rows.append(weight_statistics(*weights, float(p), device=device))
        elif key in measured:
            rows.append(measured[key])
        else:
            raise KeyError(f"{model} model {instance}: neither its weights nor its statistics "
                           "were kept")
    return with_keys(trained, rows)
