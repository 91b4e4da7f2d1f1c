"""Statistics of trained tied weights (*Incidental polysemanticity*, figs. 3–6) and the fig. 3 fit.

W is (…, n, m): n features (the project's n_s), m neurons (the hidden width), any leading axes
(instances first). Works on numpy arrays; :func:`fourth_norms` also on torch tensors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.stats import norm

#: A weight counts as *representing* its feature when BAND[0] <= |W_ik| <= BAND[1]
#: (docs/paper-gaps.md).
BAND = (0.8, 1.2)

#: Columns of :func:`stuck_encodings`.
STUCK_COLUMNS = {
    "instance": "index of the instance in its stack",
    "feature": "i, the stuck encoding W_i",
    "fourth": "its final fourth norm ‖W_i‖₄⁴",
    "coords": "its significant coordinates (|W_ik| ≥ half its largest)",
    "owned_by_others": "how many of those neurons another encoding owns (has their largest |W_·k|)",
    "opposite_sign": "how many of those carry the sign opposite to the owner's weight",
    "others_fourth": "the median fourth norm of the instance's other encodings (near 1: they "
                     "sparsified around it; near 3/(m + 2): nothing has)",
}


def fourth_norms(W):
    """‖W_i‖₄⁴ = Σ_k W_ik⁴ of every encoding: shape (…, n) for W (…, n, m) (numpy or torch)."""
    return (W ** 4).sum(-1)


def encoding_shape(W: np.ndarray) -> np.ndarray:
    """Mean over the encodings W_i ≠ 0 of ‖W_i‖₄⁴ / ‖W_i‖₂⁴, shape (…,) for W (…, n, m): how
    concentrated the encodings are whatever their length (1: one nonzero weight; about 3/m: a
    random direction); NaN where every W_i = 0. Unlike mean ‖W_i‖₄⁴ / (mean ‖W_i‖²)², a ratio
    of means, it never exceeds 1 (fig. 5's "the encodings stay sparse" as they shrink)."""
    W = np.asarray(W, dtype=np.float64)
    fourth, norm2 = fourth_norms(W), (W ** 2).sum(-1)
    live = norm2 > 0
    ratio = np.divide(fourth, norm2 ** 2, out=np.zeros_like(fourth), where=live)
    count = live.sum(-1)
    return np.divide(ratio.sum(-1), count, out=np.full(count.shape, np.nan), where=count > 0)


def in_band(W: np.ndarray, band: tuple[float, float] = BAND) -> np.ndarray:
    """Which weights represent their feature: band[0] <= |W_ik| <= band[1], a boolean array of
    W's shape (…, n, m) (docs/paper-gaps.md)."""
    a = np.abs(W)
    return (a >= band[0]) & (a <= band[1])


def polysemantic_neurons(W: np.ndarray, band: tuple[float, float] = BAND) -> np.ndarray:
    """Number of polysemantic neurons, shape (…,) for W (…, n, m): neurons k (columns) on which
    at least two features i have band[0] <= |W_ik| <= band[1] (docs/paper-gaps.md; fig. 3)."""
    return (in_band(W, band).sum(-2) >= 2).sum(-1)


def benign_pairs(W: np.ndarray) -> np.ndarray:
    """Pairs of features whose largest |weight| sits on the same neuron with opposite signs —
    the benign collisions of section 2.1 (probability 1/(2m) per pair at a random init).

    W: (…, n, m); returns (…,) integer counts.
    """
    top = np.abs(W).argmax(-1)                                    # (…, n)
    sign = np.sign(np.take_along_axis(W, top[..., None], -1)[..., 0])
    same = top[..., :, None] == top[..., None, :]
    opposite = sign[..., :, None] * sign[..., None, :] < 0
    return np.triu(same & opposite, k=1).sum((-2, -1))


def polysemantic_from_init(W: np.ndarray, W0: np.ndarray, band: tuple[float, float] = BAND
                           ) -> int:
    """How many polysemantic neurons trace back to a collision at init (section 2.1:
    "polysemanticity will happen when the largest coordinates in encodings W_i and W_j get into
    a benign collision").

    W, W0: (n, m), one model's final and initial weights. A polysemantic neuron k (at least two
    features with band[0] ≤ |W_ik| ≤ band[1] at the end, :func:`polysemantic_neurons`) is traced
    when at least two of those features had their largest |W0_ik| on k at init. (The sign needs
    no test: two features share a neuron at the end only with opposite signs, and weights in the
    band keep their sign from init.) By chance a given pair's largest coordinates both fall on
    k with probability 1/m².
    """
    held = in_band(W, band)                                      # (n, m)
    top = np.abs(W0).argmax(-1)                                  # (n,)
    poly = np.flatnonzero(held.sum(0) >= 2)
    return int(sum((top[held[:, k]] == k).sum() >= 2 for k in poly))


def winner_ranks(W: np.ndarray, W0: np.ndarray, band: tuple[float, float] = BAND) -> np.ndarray:
    """The race of footnote 6 (section 2.1): for each feature that ends represented (exactly one
    weight with band[0] ≤ |W_ik| ≤ band[1]), the rank at init of the neuron k that won it, 1
    being the feature's largest |W0_ik| ("the largest weight at initialization is still the most
    likely to win the race").

    W, W0: (n, m), one model's final and initial weights. Returns (f,) integer ranks in 1..m, f
    the represented features, in feature order (rank: 1 + the coordinates larger at init). With
    no advantage from size, every rank wins with probability 1/m.
    """
    held = in_band(W, band)
    won = held.sum(-1) == 1
    k = held[won].argmax(-1)
    a0 = np.abs(W0[won])
    return (a0 > a0[np.arange(len(k)), k][:, None]).sum(-1) + 1


def stuck_encodings(W: np.ndarray, stuck_below: float) -> pd.DataFrame:
    """Encodings stuck the way fig. 6 describes, one row per encoding (:data:`STUCK_COLUMNS`).

    W: (I, n, m) final weights. Encoding i of an instance is stuck when its fourth norm is below
    ``stuck_below`` while it has at least two significant coordinates (|W_ik| ≥ ½ max_k |W_ik|)
    and most of them sit on neurons owned by other encodings: it compromises between those
    neurons instead of taking one (the paper: one encoding below 0.2, spread over the 7 neurons
    of the others, with signs opposite to theirs).
    """
    rows = []
    owner = np.abs(W).argmax(-2)                                  # (I, m) owner of each neuron
    f4 = fourth_norms(W)
    for k, i in zip(*np.nonzero(f4 < stuck_below)):
        a = np.abs(W[k, i])
        coords = np.flatnonzero(a >= 0.5 * a.max())
        others = coords[owner[k, coords] != i]
        if len(coords) < 2 or 2 * len(others) <= len(coords):
            continue
        opposite = int((np.sign(W[k, i, others]) != np.sign(W[k, owner[k, others], others])).sum())
        rows.append([int(k), int(i), float(f4[k, i]), len(coords), len(others), opposite,
                     float(np.median(np.delete(f4[k], i)))])
    return pd.DataFrame(rows, columns=list(STUCK_COLUMNS))


def collision_constant(counts: np.ndarray, n: int, m: np.ndarray, level: float = 0.95
                       ) -> dict[str, float]:
    """Fit count ≈ c·n²/m (section 2.1: c = 1/4) with a confidence interval.

    counts: (N,) polysemantic neurons of N models; m: (N,) their neuron counts; n features.
    ĉ = Σcounts / Σ(n²/m) is the Poisson maximum-likelihood estimate; its interval is the Wald
    interval ĉ ± z·√(φ ĉ / Σ(n²/m)) with dispersion φ = max(1, Pearson χ²/(N − 1)) (quasi-Poisson:
    never narrower than Poisson). Returns c, lo, hi, dispersion, n_models. Raises ValueError when
    N < 2 or level is not in (0, 1).
    """
    counts = np.asarray(counts, dtype=np.float64)
    x = n * n / np.asarray(m, dtype=np.float64)
    if len(counts) < 2 or not 0 < level < 1:
        raise ValueError(f"need >= 2 models and level in (0, 1), got {len(counts)}, {level}")
    c = counts.sum() / x.sum()
    mu = c * x
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = float(np.where(mu > 0, (counts - mu) ** 2 / mu, 0.0).sum())
    phi = max(1.0, chi2 / (len(counts) - 1))
    half = norm.ppf(0.5 + level / 2) * np.sqrt(phi * c / x.sum())
    return {"c": float(c), "lo": float(c - half), "hi": float(c + half), "dispersion": phi,
            "n_models": float(len(counts))}


def m_exponent(counts: np.ndarray, m: np.ndarray, level: float = 0.95) -> dict[str, float]:
    """Fit count ≈ A·m^β at fixed n (section 2.1: β = −1, from c·n²/m) with a confidence interval.

    counts: (N,) polysemantic neurons of N models; m: (N,) their neuron counts, at least two
    distinct. (log A, β) maximise the Poisson likelihood (scipy.optimize.minimize, exact
    gradient); the interval is the Wald interval of β from the Fisher information scaled by the
    quasi-Poisson dispersion φ = max(1, Pearson χ²/(N − 2)). Returns beta, lo, hi, dispersion.
    Raises ValueError when fewer than two distinct m, a negative count, no count above zero, or
    level outside (0, 1).
    """
    counts = np.asarray(counts, dtype=np.float64)
    x = np.log(np.asarray(m, dtype=np.float64))
    if len(np.unique(x)) < 2 or not 0 < level < 1 or (counts < 0).any() or counts.sum() <= 0:
        raise ValueError(f"need >= 2 distinct m, counts >= 0 with one above 0, level in (0, 1); "
                         f"got m {np.unique(np.exp(x)).tolist()}, level {level}")
    X = np.column_stack([np.ones_like(x), x - x.mean()])      # centred: a well-posed problem

    def nll(theta):
        eta = X @ theta
        mu = np.exp(eta)
        return float((mu - counts * eta).sum()), X.T @ (mu - counts)

    start = np.array([np.log(counts.mean()), 0.0])
    theta = minimize(nll, start, jac=True, method="BFGS", options={"gtol": 1e-10}).x
    mu = np.exp(X @ theta)
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = float(np.where(mu > 0, (counts - mu) ** 2 / mu, 0.0).sum())
    phi = max(1.0, chi2 / max(len(counts) - 2, 1))
    cov = phi * np.linalg.inv(X.T @ (mu[:, None] * X))
    half = norm.ppf(0.5 + level / 2) * np.sqrt(cov[1, 1])
    return {"beta": float(theta[1]), "lo": float(theta[1] - half), "hi": float(theta[1] + half),
            "dispersion": phi}
