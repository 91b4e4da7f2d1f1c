"""Notes on toy autoencoding, sections 2.1 and 3.1: the sparse data and its skeletons.

Symbols as in tms.notes.theory: D features (n_s), sparsity S (feature probability p = 1 − S),
x_i = c_i u_i with c_i ~ Bernoulli(1 − S), u_i ~ U[0, 1] (the project's sampler,
tms.engine.sampler).

- Moments (section 2.1): E x_i² = (1 − S)/3, E x_i x_j = (1 − S)²/4 (i ≠ j); an entry of
  x ⊗ x is zero with probability S on the diagonal and 1 − (1 − S)² off it.
- Skeletons (section 3.1): Q_l, the points of the cube with exactly l non-zero coordinates,
  has mass μ(Q_l) = C(D, l)(1 − S)^l S^(D−l) (binomial), and μ(∪_{l≥2} Q_l) = 1 − S^D −
  D(1 − S)S^(D−1).
- The open question of section 3.1 (may the inputs with ≥ 2 active features be ignored?) is
  answered by the share of a trained model's loss that comes from them, estimated by strata:
  E‖x − f(x)‖² = Σ_l μ(Q_l) m_l with m_l the mean loss over inputs with exactly l active
  features, each m_l from its own sample (:func:`exactly_l_active`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from scipy.stats import binom

from tms.engine import sampler
from tms.engine.models import AutoencoderStack, forward
from tms.engine.threads import torch_threads
from tms.notes import theory

#: Two-sided 95% normal quantile for the confidence intervals.
Z95 = 1.959963984540054


def moments_exact(S: float) -> dict[str, float]:
    """Closed forms of section 2.1 for sparsity S: diag = E x_i², off = E x_i x_j (i ≠ j),
    zero_diag = P(x_i² = 0), zero_off = P(x_i x_j = 0). Raises ValueError unless 0 ≤ S < 1."""
    q = 1.0 - theory.check_sparsity(S)
    return {"diag": q / 3, "off": q * q / 4, "zero_diag": 1 - q, "zero_off": 1 - q * q}


def sample(S: float, D: int, n_vectors: int, seed: int) -> torch.Tensor:
    """n_vectors sparse vectors (n_vectors, D), float32, from tms.engine.sampler with p = 1 − S."""
    p = torch.tensor([1.0 - theory.check_sparsity(S)])
    return sampler.sparse_features(p, n_vectors, D, sampler.generators([seed]))[0]


def sample_bytes(n_vectors: int, D: int) -> int:
    """An upper estimate of the memory (bytes) of :func:`moments_mc` and :func:`skeletons_table`
    at one grid point: the draw in float32, its float64 copy and two float64 temporaries of
    the same shape (n_vectors, D)."""
    return 28 * n_vectors * D


def _mean_ci(z: np.ndarray) -> tuple[float, float]:
    """Mean of per-vector statistics z (n,) and the half-width of its 95% interval."""
    return float(z.mean()), float(Z95 * z.std(ddof=1) / np.sqrt(len(z)))


def moments_mc(S: float, D: int, n_vectors: int, seed: int) -> dict[str, float]:
    """Monte Carlo Σ of the sparse data against the closed forms (section 2.1).

    From n_vectors draws: diag_mc and off_mc, the means over entries of the diagonal and the
    off-diagonal of Σ̂ = mean of x xᵀ, with 95% half-widths diag_ci, off_ci (from the per-vector
    averages, which are i.i.d.) and diag_se, off_se, their standard errors in closed form under
    the stated law (with m_k = E x^k = (1 − S)/(k + 1): Var(Σ_i x_i²/D) = (m_4 − m_2²)/D and
    Var(Σ_{i≠j} x_i x_j/(D(D − 1))) = [2(m_2² − m_1⁴) + 4(D − 2)(m_2 m_1² − m_1⁴)]/(D(D − 1)),
    each over n_vectors; exact even where few draws are non-zero); zero_diag_mc, zero_off_mc
    (share of zero entries of x ⊗ x); lambda1_mc, lambda_rest_mc (largest eigenvalue of Σ̂ and
    the mean of the others) with the closed forms lambda1, lambda_rest
    (tms.notes.theory.sparse_spectrum); and the exact values of :func:`moments_exact`.
    Raises ValueError for D < 2 or S outside [0, 1).
    """
    if D < 2:
        raise ValueError(f"D must be >= 2 for off-diagonal moments, got {D}")
    x = sample(S, D, n_vectors, seed).double()
    sq = (x * x).sum(dim=1).numpy()
    diag_mc, diag_ci = _mean_ci(sq / D)
    off_mc, off_ci = _mean_ci((x.sum(dim=1).numpy() ** 2 - sq) / (D * (D - 1)))
    sigma = (x.T @ x).numpy() / n_vectors                   # (D, D) product in torch
    nonzero = (x != 0).sum(dim=1).double().numpy()
    lam = theory.spectrum(sigma)[0]
    lam1, lam_rest = theory.sparse_spectrum(S, D)
    q = 1.0 - S
    m1, m2, m4 = q / 2, q / 3, q / 5
    off_var = (2 * (m2**2 - m1**4) + 4 * (D - 2) * (m2 * m1**2 - m1**4)) / (D * (D - 1))
    return {**moments_exact(S), "diag_mc": diag_mc, "diag_ci": diag_ci, "off_mc": off_mc,
            "off_ci": off_ci, "diag_se": float(np.sqrt((m4 - m2**2) / (D * n_vectors))),
            "off_se": float(np.sqrt(off_var / n_vectors)),
            "zero_diag_mc": float(1 - nonzero.sum() / (n_vectors * D)),
            "zero_off_mc": float(1 - (nonzero * (nonzero - 1)).sum() / (n_vectors * D * (D - 1))),
            "lambda1": lam1, "lambda1_mc": float(lam[0]),
            "lambda_rest": lam_rest, "lambda_rest_mc": float(lam[1:].mean())}


@torch_threads(1)
def moments_table(S_values: Sequence[float], D_values: Sequence[int], n_vectors: int,
                  seed: int) -> pd.DataFrame:
    """:func:`moments_mc` on the grid S × D (S slowest); point k uses seed + k.
    Columns: S, D, n_vectors, then the keys of :func:`moments_mc`."""
    rows = []
    for S in S_values:
        for D in D_values:
            rows.append({"S": float(S), "D": int(D), "n_vectors": n_vectors,
                         **moments_mc(S, D, n_vectors, seed + len(rows))})
    return pd.DataFrame(rows)


def skeleton_mass(S: float, D: int) -> np.ndarray:
    """μ(Q_l) = C(D, l)(1 − S)^l S^(D−l) for l = 0, …, D, shape (D + 1,) (section 3.1)."""
    return binom.pmf(np.arange(D + 1), D, 1.0 - theory.check_sparsity(S))


def mass_ge2(S, D):
    """μ(∪_{l≥2} Q_l) = 1 − S^D − D(1 − S)S^(D−1), computed as a binomial tail (accurate when
    small). S and D broadcast; raises ValueError for S outside [0, 1)."""
    S = np.asarray(S, dtype=float)
    if np.any((S < 0) | (S >= 1)):
        raise ValueError(f"S must be in [0, 1), got {S!r}")
    return binom.sf(1, D, 1.0 - S)


@torch_threads(1)
def skeletons_table(S_values: Sequence[float], D_values: Sequence[int], n_vectors: int,
                    seed: int) -> pd.DataFrame:
    """The mass of ∪_{l≥2} Q_l on the grid S × D (S slowest), exact and by Monte Carlo.

    Columns: S, D, n_vectors, mean_active ((1 − S)D), mass_ge2 (exact), mass_ge2_mc (share of
    n_vectors tms.engine.sampler draws with ≥ 2 non-zero entries; point k uses seed + k),
    mass_ge2_se (its standard error at the exact mass, sqrt(μ(1 − μ)/n_vectors), which stays
    meaningful when no draw lands in the set), mass_1 (μ(Q_1), exact).
    """
    rows = []
    for S in S_values:
        for D in D_values:
            active = (sample(S, D, n_vectors, seed + len(rows)) != 0).sum(dim=1)
            mass = float(mass_ge2(S, D))
            rows.append({"S": float(S), "D": int(D), "n_vectors": n_vectors,
                         "mean_active": (1 - S) * D, "mass_ge2": mass,
                         "mass_ge2_mc": float((active >= 2).double().mean()),
                         "mass_ge2_se": float(np.sqrt(mass * (1 - mass) / n_vectors)),
                         "mass_1": float(skeleton_mass(S, D)[1])})
    return pd.DataFrame(rows)


def exactly_l_active(n: int, D: int, l: int, gen: torch.Generator) -> torch.Tensor:
    """n vectors (n, D) with exactly l non-zero entries: positions uniform among the C(D, l)
    subsets, values U[0, 1]: the sparse data conditioned on Q_l. Raises ValueError unless
    0 ≤ l ≤ D."""
    if not 0 <= l <= D:
        raise ValueError(f"l must be in [0, D = {D}], got {l}")
    ranks = torch.rand(n, D, generator=gen, device=gen.device).argsort(dim=1).argsort(dim=1)
    return torch.rand(n, D, generator=gen, device=gen.device) * (ranks < l)


def loss_by_active_count(model: AutoencoderStack, n_per_stratum: int, seed: int
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Mean per-sample loss ‖x − f(x)‖² of every instance on each skeleton Q_l.

    One sample of n_per_stratum vectors per l = 0, …, D (:func:`exactly_l_active`, generator
    seeded with ``seed``), shared by all instances. Returns m (I, D + 1), the mean loss per
    stratum, and se (I, D + 1), its standard error. The stratum law does not depend on S.
    """
    D = model.W_in.shape[2]
    gen = sampler.generators([seed], model.W_in.device)[0]
    m = np.empty((len(model.n_d), D + 1))
    se = np.empty_like(m)
    with torch.no_grad():
        for l in range(D + 1):
            x = exactly_l_active(n_per_stratum, D, l, gen)
            _, y = forward(model, x.expand(len(model.n_d), -1, -1))
            e = (y - x).double().pow(2).sum(dim=2).cpu().numpy()
            m[:, l] = e.mean(axis=1)
            se[:, l] = e.std(axis=1, ddof=1) / np.sqrt(n_per_stratum)
    return m, se


def loss_share(m: np.ndarray, se: np.ndarray, S: float) -> dict[str, float]:
    """Share of the expected loss from inputs with ≥ 2 active features, by strata.

    m, se: (D + 1,) per-stratum mean loss and standard error (:func:`loss_by_active_count`).
    Returns loss (Σ_l μ_l m_l / D, per-feature), loss_ci, share_ge2 (Σ_{l≥2} μ_l m_l /
    Σ_l μ_l m_l), share_ci (95% half-widths by the delta method over independent strata),
    and mass_ge2 (μ(∪_{l≥2} Q_l)).
    """
    D = len(m) - 1
    mu = skeleton_mass(S, D)
    total = float(mu @ m)
    ge2 = float(mu[2:] @ m[2:])
    share = ge2 / total
    dshare = np.where(np.arange(D + 1) >= 2, 1 - share, -share) * mu / total
    return {"loss": total / D, "loss_ci": float(Z95 * np.sqrt(((mu * se) ** 2).sum()) / D),
            "share_ge2": share, "share_ci": float(Z95 * np.sqrt(((dshare * se) ** 2).sum())),
            "mass_ge2": float(mass_ge2(S, D))}
