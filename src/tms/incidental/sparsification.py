"""The speed of sparsification under l1 (*Incidental polysemanticity*, sec. 2, fig. 2, appendix B).

One encoding W_i ∈ R^m with the interference force off evolves by feature benefit and
regularisation only. With w = |W_i| (the signs never change), constants 4 dropped as in the
paper (footnote 5) and t the training time (learning rate × steps), each non-zero weight obeys

    dw_k/dt = (1 − ‖w‖²) w_k − λ,        a weight that reaches 0 stays 0 (dropped),

which is the authors' Euler scheme (docs/paper-gaps.md: dt = 0.5, run until one weight is left).
m is the number of neurons (the project's hidden width), m′ the number of non-zero weights.

Appendix B shows that the non-zero weights move by one common affine map. Written out:
w_k(t) = A(t)·(w_k(0) − B(t)) for every k with w_k(0) > B(t), and 0 otherwise, where

    dA/dt = A·(1 − A² Q(B)),   dB/dt = λ / A,   A(0) = 1, B(0) = 0,
    Q(B) = Σ_{k: w_k(0) > B} (w_k(0) − B)²     (so ‖w‖² = A² Q(B)).

So the m-dimensional system is exactly a 2-dimensional one. With the initial weights sorted and
their suffix sums Σw, Σw² precomputed, Q(B), m′, ‖w‖₁ and ‖w‖² cost one binary search, and
:func:`integrate` solves it with a stiff high-order solver at tolerance far below the Euler error:
m = 1e7 takes seconds. :func:`euler` is the direct m-dimensional reference.

Fig. 7: the relative variance Var[X]/E[X]² of the non-zero weights (A cancels) and the bounds of
appendix B: when m′ weights are left, the common shift B lies between the (m′+1)-th and the m′-th
largest initial weight, so the relative variance lies between that of the top m′ initial weights
shifted by the former (lower) and by the latter (upper).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.integrate import solve_ivp
from scipy.special import ndtri

from tms.core.schema import ParamsError
from tms.incidental.params import KEY

#: Columns of the trajectory table of :func:`trajectory`.
TRAJECTORY_COLUMNS = {
    "m": "number of neurons m (length of the encoding)",
    "lam": "l1 coefficient λ",
    "t": "training time t (ODE time; the paper's constants 4 dropped)",
    "m_prime": "number of non-zero weights m′",
    "l1": "‖W_i‖₁",
    "l2sq": "‖W_i‖²",
    "relvar": "relative variance Var[X]/E[X]² of the non-zero weights (nan when m′ < 2)",
    "relvar_lo": "appendix B lower value at this m′, from W_i(0)",
    "relvar_hi": "appendix B upper value at this m′, from W_i(0)",
    "ideal_lo": "lower value from the idealised W_i(0) at regular percentiles",
    "ideal_hi": "upper value from the idealised W_i(0) at regular percentiles",
}


def initial_weights(m: int, init_std: float, seed: int) -> np.ndarray:
    """|W_i(0)|: m values |N(0, (init_std/√m)²)| (paper: init_std 0.9), shape (m,), float64.

    Drawn with numpy's PCG64 from ``seed``. Raises ValueError if m < 2 or init_std <= 0.
    """
    if m < 2 or init_std <= 0:
        raise ValueError(f"need m >= 2 and init_std > 0, got m = {m}, init_std = {init_std}")
    rng = np.random.Generator(np.random.PCG64(seed))
    return np.abs(rng.standard_normal(m)) * (init_std / np.sqrt(m))


def ideal_weights(m: int) -> np.ndarray:
    """An idealised |W_i(0)| that hits regular percentiles of the half-normal law (fig. 7, pink):
    the (j − ½)/m quantiles, j = 1..m, descending, shape (m,), unit scale (relative variances do
    not depend on the scale)."""
    return ndtri(1.0 - (np.arange(1, m + 1) - 0.5) / (2.0 * m))


def theory_l1(t: np.ndarray, m: int, lam: float) -> np.ndarray:
    """Section 2's prediction (fig. 2) with the Θ constants set to 1: ‖W_i‖₁ = 1/(1/√m + λt),
    for training times t (any shape; the ODE's time, the paper's constant 4 dropped), m neurons
    and λ the l1 coefficient. Returns the shape of t."""
    return 1.0 / (1.0 / np.sqrt(m) + lam * np.asarray(t, dtype=float))


def theory_m_prime(t: np.ndarray, m: int, lam: float) -> np.ndarray:
    """Section 2's prediction (fig. 2) of m′, the nonzero coordinates of W_i: ‖W_i‖₁² =
    1/(1/√m + λt)², as :func:`theory_l1` (the shape of t)."""
    return theory_l1(t, m, lam) ** 2


class SortedWeights:
    """Initial weights sorted ascending with suffix sums: m′, Σ(w−B), Σ(w−B)² in O(log m).

    w0: (m,) positive initial weights. Raises ValueError if any is <= 0 or fewer than 2.
    """

    def __init__(self, w0: np.ndarray):
        w = np.sort(np.asarray(w0, dtype=np.float64))
        if len(w) < 2 or w[0] <= 0:
            raise ValueError("need at least two initial weights, all > 0")
        self.w = w
        self.s1 = np.concatenate([np.cumsum(w[::-1])[::-1], [0.0]])
        self.s2 = np.concatenate([np.cumsum((w * w)[::-1])[::-1], [0.0]])

    def sums(self, B: float | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(m′, Σ_{w>B} (w − B), Σ_{w>B} (w − B)²) for a shift B (scalar or array)."""
        j = np.searchsorted(self.w, B, side="right")
        k = len(self.w) - j
        s1, s2 = self.s1[j], self.s2[j]
        return k, s1 - k * B, s2 - 2.0 * B * s1 + k * B * B


@dataclass(frozen=True)
class Solution:
    """The affine map of :func:`integrate`: ``at(t)`` gives the scale A and shift B at times t
    (arrays (T,), t within [0, t_end]); t_end is when the second-largest weight reaches 0
    (m′ = 1)."""

    weights: SortedWeights
    dense: object
    t_end: float

    def at(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(A, B) at times t (T,). Raises ValueError for a time outside [0, t_end]."""
        t = np.asarray(t, dtype=np.float64)
        if t.min() < 0 or t.max() > self.t_end:
            raise ValueError(f"times must lie in [0, t_end = {self.t_end:.6g}]")
        y = self.dense(t)
        w = self.weights.w
        return np.exp(y[0]), np.minimum(y[1] * w[-1], w[-2])

    def table(self, t: np.ndarray) -> pd.DataFrame:
        """Columns t, m_prime, l1 (‖W_i‖₁), l2sq (‖W_i‖²) at times t, one row per time."""
        A, B = self.at(t)
        k, l1, q = self.weights.sums(B)
        return pd.DataFrame({"t": t, "m_prime": k, "l1": A * l1, "l2sq": A * A * q})


def integrate(weights: SortedWeights, lam: float, rtol: float = 1e-10) -> Solution:
    """Solve dA/dt = A(1 − A²Q(B)), dB/dt = λ/A from A = 1, B = 0 until m′ = 1 (appendix B).

    The state is (ln A, B / max w(0)); LSODA (stiff: ‖w‖² relaxes on time scale 1 while
    t_end ~ 1/λ) at relative tolerance ``rtol``, with dense output. Raises ValueError if λ <= 0.
    """
    if lam <= 0:
        raise ValueError(f"lam must be > 0, got {lam}")
    scale = weights.w[-1]
    second = weights.w[-2] / scale

    def rhs(_t, y):
        _, _, q = weights.sums(y[1] * scale)
        A = np.exp(y[0])
        return [1.0 - A * A * q, lam / (A * scale)]

    def last_but_one_gone(_t, y):
        return y[1] - second

    last_but_one_gone.terminal = True
    t_max = 1e3 / lam + 1e3                    # far past t_end ~ 1/λ; the event stops first
    sol = solve_ivp(rhs, (0.0, t_max), [0.0, 0.0], method="LSODA", rtol=rtol,
                    atol=[rtol, rtol * 1e-3], events=last_but_one_gone, dense_output=True)
    if sol.status != 1:
        raise RuntimeError(f"the sparsification ODE did not reach m' = 1: {sol.message}")
    return Solution(weights, sol.sol, float(sol.t_events[0][0]))


def log_times(t_end: float, n_times: int) -> np.ndarray:
    """t = 0, then ``n_times`` − 1 log-spaced times from t_end·1e-6 to t_end, shape (n_times,)."""
    return np.concatenate([[0.0], np.geomspace(t_end * 1e-6, t_end, n_times - 1)])


def relvar_bounds(desc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Appendix B's lower and upper relative variance for every m′ = 1..m (arrays (m,), index
    m′ − 1), from initial weights sorted descending ``desc`` (m,).

    Lower: the top m′ shifted by the (m′+1)-th largest (by 0 when m′ = m); upper: shifted by the
    m′-th largest. Both have the variance of the top m′; the upper has the smaller mean. nan
    where undefined (m′ = 1).
    """
    k = np.arange(1, len(desc) + 1, dtype=np.float64)
    mean = np.cumsum(desc) / k
    var = np.maximum(np.cumsum(desc * desc) / k - mean * mean, 0.0)
    below = np.concatenate([desc[1:], [0.0]])
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = var / (mean - below) ** 2
        hi = var / (mean - desc) ** 2
    lo[0] = hi[0] = np.nan
    return lo, hi


def trajectory(m: int, lam: float, init_std: float, seed: int, n_times: int) -> pd.DataFrame:
    """Fig. 2 and fig. 7 for one encoding of m weights: a table with :data:`TRAJECTORY_COLUMNS`,
    one row per time of :func:`log_times` (up to m′ = 1)."""
    weights = SortedWeights(initial_weights(m, init_std, seed))
    sol = integrate(weights, lam)
    out = sol.table(log_times(sol.t_end, n_times))
    k = out.m_prime.to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = out.l1.to_numpy() / k
        relvar = np.where(k >= 2, (out.l2sq.to_numpy() / k - mean * mean) / (mean * mean),
                          np.nan)
    lo, hi = relvar_bounds(weights.w[::-1])
    ilo, ihi = relvar_bounds(ideal_weights(m))
    out = out.assign(m=m, lam=lam, relvar=relvar, relvar_lo=lo[k - 1], relvar_hi=hi[k - 1],
                     ideal_lo=ilo[k - 1], ideal_hi=ihi[k - 1])
    return out[list(TRAJECTORY_COLUMNS)]


def euler(w0: np.ndarray, lam: float, dt: float, times: np.ndarray) -> pd.DataFrame:
    """Direct Euler integration of dw/dt = (1 − ‖w‖²)w − λ on all weights, dropping those that
    become <= 0 (the authors' scheme), recorded at ``times`` (rounded to multiples of dt).

    w0: (m,) positive initial weights. Returns columns t, m_prime, l1, l2sq (one row per time).
    Raises ValueError if dt <= 0.
    """
    if dt <= 0:
        raise ValueError(f"dt must be > 0, got {dt}")
    marks = np.round(np.asarray(times) / dt).astype(np.int64)
    w = np.asarray(w0, dtype=np.float64)
    w = w[w > 0]
    rows, step = [], 0
    for mark in marks:
        while step < mark:
            w = w + dt * ((1.0 - w @ w) * w - lam)
            w = w[w > 0]
            step += 1
        rows.append((mark * dt, len(w), w.sum(), w @ w))
    return pd.DataFrame(rows, columns=["t", "m_prime", "l1", "l2sq"])


#: Most weight updates of the Euler reference, Σ over dt of its steps × max(m, 1000) (a step
#: costs about that many weight updates' time even at small m): the default's are 6.3e7.
MAX_EULER_WORK = 10**10
_EULER_KEY = f"{KEY}.sparsification.euler"


def euler_comparison(m: int, lam: float, init_std: float, seed: int, dts: list[float],
                     n_times: int = 200) -> pd.DataFrame:
    """The Euler reference against the affine-map solution on the same initial weights.

    Times: ``n_times`` multiples of max(dts), evenly spread over [0, 0.99·t_end]. Returns one row
    per (dt, time): dt, t, m_prime, l1, l2sq (Euler) and exact_m_prime, exact_l1, exact_l2sq.
    Raises ParamsError, before any Euler step, if the steps exceed :data:`MAX_EULER_WORK`.
    """
    w0 = initial_weights(m, init_std, seed)
    sol = integrate(SortedWeights(w0), lam)
    coarse = max(dts)
    times = np.unique(np.round(np.linspace(0.0, 0.99 * sol.t_end, n_times) / coarse) * coarse)
    work = sum(times[-1] / dt for dt in dts) * max(m, 1000)
    if work > MAX_EULER_WORK:
        raise ParamsError(f"{_EULER_KEY}.dt = {list(dts)}: the Euler steps to t = "
                          f"{times[-1]:.4g} times max(m, 1000) = {work:.3g} weight updates; at "
                          f"most {MAX_EULER_WORK:.3g} (minutes of Euler steps): give a larger "
                          f"smallest dt, a smaller {_EULER_KEY}.m or a larger {_EULER_KEY}.lam "
                          f"(t ends near 1/λ)")
    exact = sol.table(times).add_prefix("exact_").drop(columns="exact_t")
    return pd.concat([euler(w0, lam, dt, times).join(exact).assign(dt=dt) for dt in dts],
                     ignore_index=True)[["dt", "t", "m_prime", "l1", "l2sq", "exact_m_prime",
                                         "exact_l1", "exact_l2sq"]]
