"""The antipodal construction: features in antipodal pairs, a model whose loss has no n_s in it.

Not in the Persian Rug paper: a reference beside its "optimal symmetric" theory (section 4),
which assumes Gaussian interference. With n_d hidden dimensions and n_s features
(ratio r = n_d/n_s), put k features in antipodal pairs, one dimension per pair: feature i on
+e_h and its partner j on −e_h, so that h = x_i − x_j; each reads out ReLU(a·(±h) + b). The other
dimensions each carry one feature alone (exact: loss 0), and features without a dimension output
their best constant, E x = p/2 (loss Var(x)). The most pairs that help: k = min(n_d, n_s − n_d).
Per feature (averaged over all n_s):

    r ≤ 1/2:  L = 2r·L_pair(p) + (1 − 2r)·Var(x)
    r ≥ 1/2:  L = 2(1 − r)·L_pair(p)

L_pair(p) = min over a, b of the loss of one paired feature, x = c·u with c ~ Bernoulli(p),
u ~ U[0, 1] (section 2), its partner independent:

    (1 − p)²·ReLU(b)² + p(1 − p)·∫(u − ReLU(au + b))² du + p(1 − p)·∫ReLU(b − av)² dv
      + p²·∫∫(u − ReLU(a(u − v) + b))² du dv,

four cases by which of the two is on. Each integral is of a piecewise polynomial, exact here
with Gauss–Legendre nodes on the pieces (split where the ReLU switches on); a and b are found
by scipy.optimize.minimize. At a = 1, b = 0 the loss is p²/6 (the both-on case alone), so
L_pair ≤ p²/6: the interference costs O(p²), not O(p) as Gaussian interference of the same
variance would.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from tms.persian_rug.theory import var_x

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(6)    # exact for degree ≤ 11 per piece


def _pieces(cuts) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights on [0, 1] split at ``cuts`` (those inside (0, 1))."""
    edges = np.unique(np.clip(np.concatenate([[0.0, 1.0], np.ravel(cuts)]), 0.0, 1.0))
    left, right = edges[:-1, None], edges[1:, None]
    nodes = 0.5 * (left + right) + 0.5 * (right - left) * _NODES
    return nodes.ravel(), (0.5 * (right - left) * _WEIGHTS).ravel()


def _both_on(a: float, b: float) -> float:
    """∫∫ (u − ReLU(a(u − v) + b))² du dv over the unit square (a > 0): inner integral over v in
    closed form (v < v* = u + b/a the ReLU is on, the error (u − a(u − v) − b)²; beyond, u²),
    outer by Gauss–Legendre on the pieces where v* crosses 0 and 1."""
    u, w = _pieces([-b / a, 1.0 - b / a])
    vs = np.clip(u + b / a, 0.0, 1.0)
    c = (1.0 - a) * u - b                        # the error on the on-piece is c + a·v
    on = ((c + a * vs) ** 3 - c ** 3) / (3 * a)
    return float(np.sum(w * (on + u ** 2 * (1.0 - vs))))


def pair_loss(a: float, b: float, p: float) -> float:
    """The loss of one paired feature read out as ReLU(a(x_i − x_j) + b), for a > 0 and any b
    (module docstring; per feature, as the theory's losses). Raises ValueError for a ≤ 0 or p
    outside (0, 1]."""
    if not a > 0:
        raise ValueError(f"a must be > 0, got {a}")
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must be in (0, 1], got {p}")
    u, w = _pieces([-b / a, b / a])
    alone = np.sum(w * (u - np.maximum(a * u + b, 0.0)) ** 2)
    partner = np.sum(w * np.maximum(b - a * u, 0.0) ** 2)
    return float((1 - p) ** 2 * max(b, 0.0) ** 2 + p * (1 - p) * (alone + partner)
                 + p * p * _both_on(a, b))


def optimal_pair(p: float) -> dict[str, float]:
    """L_pair(p): the best a > 0 and b of one paired feature and its loss, {"loss", "a", "b"}
    (scipy.optimize.minimize from a = 1, b = 0 and from the best of a few starts; the result is
    never above p²/6, the loss at a = 1, b = 0). Raises ValueError for p outside (0, 1]."""
    def loss(z):
        return pair_loss(float(np.exp(z[0])), float(z[1]), p)

    starts = [(0.0, 0.0), (0.0, -0.1), (0.2, -0.2), (-0.2, 0.05)]
    best = min((minimize(loss, s, method="Nelder-Mead",
                         options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 4000})
                for s in starts), key=lambda r: r.fun)
    return {"loss": float(best.fun), "a": float(np.exp(best.x[0])), "b": float(best.x[1])}


def pairs_share(ratio):
    """The share of the n_s features in pairs, 2·min(r, 1 − r), and alone on a dimension,
    max(0, 2r − 1), at ratio r = n_d/n_s in (0, 1] (arrays broadcast)."""
    r = np.asarray(ratio, dtype=float)
    return 2 * np.minimum(r, 1 - r), np.maximum(0.0, 2 * r - 1)


def construction_loss(p: float, ratio, pair: dict | None = None):
    """The per-feature loss of the construction at p and ratio (module docstring), a float or an
    array like ``ratio``; ``pair``: :func:`optimal_pair` of p when already computed. Raises
    ValueError for p or a ratio outside (0, 1]."""
    r = np.asarray(ratio, dtype=float)
    if np.any(~((r > 0) & (r <= 1))):
        raise ValueError(f"ratio must lie in (0, 1], got {ratio!r}")
    pair = pair or optimal_pair(p)
    paired, alone = pairs_share(r)
    return paired * pair["loss"] + (1 - paired - alone) * float(var_x(p))


def construction_weights(n_s: int, n_d: int, p: float, pair: dict | None = None
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The construction as a model of the paper's form ReLU(W_out W_in x + b): (W_in (n_d, n_s),
    W_out (n_s, n_d), b (n_s,)) float64. Features 2h and 2h + 1 share dimension h (h below the
    number of pairs, min(n_d, n_s − n_d)), the next dimensions carry one feature each, and the
    features left over output p/2 through their bias. Raises ValueError unless 1 ≤ n_d ≤ n_s."""
    if not 1 <= n_d <= n_s:
        raise ValueError(f"need 1 <= n_d <= n_s, got n_d = {n_d}, n_s = {n_s}")
    pair = pair or optimal_pair(p)
    k = min(n_d, n_s - n_d)
    W_in, W_out, b = np.zeros((n_d, n_s)), np.zeros((n_s, n_d)), np.full(n_s, p / 2)
    for h in range(k):
        for i, sign in ((2 * h, 1.0), (2 * h + 1, -1.0)):
            W_in[h, i], W_out[i, h], b[i] = sign, sign * pair["a"], pair["b"]
    for h in range(k, n_d):
        i = k + h
        W_in[h, i], W_out[i, h], b[i] = 1.0, 1.0, 0.0
    return W_in, W_out, b


def construction_table(p_values, ratios) -> pd.DataFrame:
    """The construction on the cartesian product p_values × ratios (p slowest), as the theory's
    table (tms.persian_rug.theory.theory_table): columns p, ratio, loss (per feature), a, b and
    loss_pair (L_pair, the paired features' own loss), paired (their share of the features)."""
    rows = []
    for p in np.atleast_1d(p_values):
        pair = optimal_pair(float(p))
        for r in np.atleast_1d(ratios):
            rows.append({"p": float(p), "ratio": float(r),
                         "loss": float(construction_loss(float(p), float(r), pair)),
                         "a": pair["a"], "b": pair["b"], "loss_pair": pair["loss"],
                         "paired": float(pairs_share(r)[0])})
    return pd.DataFrame(rows, columns=["p", "ratio", "loss", "a", "b", "loss_pair", "paired"])
