"""Closed forms of *Incidental polysemanticity* (section 2.1, section 3, appendix C) and the
Monte Carlo or exact computations that check them.

Symbols: n features (the project's n_s), m neurons (the hidden width), encodings W_i ∈ R^m
(rows of W, n × m), noise ξ ∈ R^m with variance σ² and fourth moment μ₄ per coordinate,
η the SGD learning rate. Monte Carlo functions return (estimate, standard error) and draw from
numpy's PCG64 seeded with ``seed``; all work in float64.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from numpy.polynomial.hermite_e import hermegauss
from scipy.integrate import solve_ivp

#: Gauss–Hermite nodes per coordinate for normal noise: the one-step loss is a polynomial of
#: degree 8 in each ξ_k, integrated exactly by 6 nodes (exact up to degree 11).
HERMITE_NODES = 6


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(len(x)))


def _chunks(total: int, width: int):
    """Sizes of the draws of ``total`` samples of ``width`` values each: at most 2^14 samples and
    2^22 values (32 MiB of float64) a draw, and one sample where ``width`` alone exceeds that
    (the params bound it: incidental_polysemanticity.checks)."""
    size = max(1, min(1 << 14, (1 << 22) // width))
    for start in range(0, total, size):
        yield min(size, total - start)


# ----------------------------------------------------------------------------- section 2.1


def collision_probability(m: int) -> float:
    """P(the largest |weight| of W_i and of W_j sit on the same neuron with opposite signs) =
    1/m · 1/2 = 1/(2m) for i.i.d. symmetric weights (section 2.1, a *benign* collision)."""
    return 1.0 / (2.0 * m)


def collision_probability_mc(m: int, samples: int, seed: int) -> tuple[float, float]:
    """Monte Carlo of :func:`collision_probability`: ``samples`` pairs of Gaussian encodings.
    Returns (estimate, standard error)."""
    rng, hits = _rng(seed), 0
    for size in _chunks(samples, 2 * m):
        w = rng.standard_normal((size, 2, m))
        top = np.abs(w).argmax(-1)
        same = top[:, 0] == top[:, 1]
        signs = np.sign(np.take_along_axis(w, top[..., None], -1)[..., 0])
        hits += int((same & (signs[:, 0] != signs[:, 1])).sum())
    p = hits / samples
    return p, float(np.sqrt(p * (1 - p) / samples))


def interference_at_init(n: int, m: int) -> float:
    """E Σ_{j≠i} ReLU(W_i·W_j)² = (n − 1)/(2m) for W_ik ~ N(0, 1/m) (section 2.1: Θ(n/m)).

    E (W_i·W_j)² = m·(1/m)² = 1/m and W_i·W_j is symmetric, so its positive part squared has half
    of that."""
    return (n - 1) / (2.0 * m)


def interference_at_init_mc(n: int, m: int, samples: int, seed: int) -> tuple[float, float]:
    """Monte Carlo of :func:`interference_at_init`: ``samples`` matrices W (n × m), each giving the
    mean over i of Σ_{j≠i} ReLU(W_i·W_j)². Returns (estimate, standard error)."""
    rng, vals = _rng(seed), []
    for size in _chunks(samples, n * m):
        W = rng.standard_normal((size, n, m)) / np.sqrt(m)
        G = np.maximum(W @ W.transpose(0, 2, 1), 0.0) ** 2
        off = G.sum((1, 2)) - np.trace(G, axis1=1, axis2=2)
        vals.append(off / n)
    return _mean_se(np.concatenate(vals))


def pair_inner_product(q0: float, s0: float, t: np.ndarray) -> np.ndarray:
    """Exact W_i·W_j(t) (T,) at times t (T,) of two encodings under interference alone
    (section 2.1), dW_i/dt = −ReLU(W_i·W_j) W_j, dW_j/dt = −ReLU(W_i·W_j) W_i, from
    q0 = W_i·W_j > 0 and s0 = ‖W_i‖² + ‖W_j‖².

    With q = W_i·W_j (the paper names it no symbol; p is the feature probability) and
    s = ‖W_i‖² + ‖W_j‖²: dq/dt = −q·s (the paper's decay) and ds/dt = −4q², so C = s² − 4q² is
    conserved and dq/dt = −q√(C + 4q²), solved by
    q(t) = √C / (2 sinh(asinh(√C/(2q0)) + √C t)): exponential decay at rate s → √C.
    Raises ValueError unless 0 < 2q0 < s0.
    """
    if not 0 < 2 * q0 < s0:
        raise ValueError(f"need 0 < 2·q0 < s0, got q0 = {q0}, s0 = {s0}")
    rc = np.sqrt(s0 * s0 - 4 * q0 * q0)
    return rc / (2 * np.sinh(np.arcsinh(rc / (2 * q0)) + rc * np.asarray(t, dtype=float)))


def pair_decay(Wi: np.ndarray, Wj: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integrate the interference-only pair dynamics numerically (the full 2m-dimensional ODE,
    DOP853, rtol 1e-12) from encodings Wi, Wj (m,); returns q = W_i·W_j and
    s = ‖W_i‖² + ‖W_j‖² (T,) at times t (T,), increasing from 0."""
    m = len(Wi)

    def rhs(_t, y):
        r = max(y[:m] @ y[m:], 0.0)
        return np.concatenate([-r * y[m:], -r * y[:m]])

    t = np.asarray(t, dtype=float)
    sol = solve_ivp(rhs, (0.0, t[-1]), np.concatenate([Wi, Wj]), method="DOP853",
                    rtol=1e-12, atol=1e-15, t_eval=t)
    a, b = sol.y[:m], sol.y[m:]
    return (a * b).sum(0), (a * a).sum(0) + (b * b).sum(0)


def interference_decay_check(m: int, seed: int, t_max: float = 5.0, n_times: int = 2001
                             ) -> dict[str, float]:
    """Section 2.1's decay of a positive W_i·W_j under interference, checked two ways on a random
    pair (W ~ N(0, 1/m), W_j's sign chosen so that W_i·W_j > 0), over t ∈ [0, t_max]:

    ``exact_error``: max |q_numeric/q_exact − 1| (q = W_i·W_j) against
    :func:`pair_inner_product`;
    ``rate_error``: max |(−d ln q/dt)/s − 1|, the rate taken by finite differences of the
    numerical trajectory (the paper: rate ‖W_i‖² + ‖W_j‖²).
    """
    rng = _rng(seed)
    Wi, Wj = rng.standard_normal((2, m)) / np.sqrt(m)
    Wj = Wj * np.sign(Wi @ Wj)
    t = np.linspace(0.0, t_max, n_times)
    q, s = pair_decay(Wi, Wj, t)
    rate = -np.gradient(np.log(q), t, edge_order=2)
    return {"exact_error": float(np.abs(q / pair_inner_product(q[0], s[0], t) - 1).max()),
            "rate_error": float(np.abs(rate / s - 1).max())}


# ------------------------------------------------------------------- section 3, appendix C


def noise_moments(sigma: float, noise: str) -> tuple[float, float]:
    """(σ², μ₄) of one noise coordinate: bipolar ±σ has μ₄ = σ⁴ (excess kurtosis −2), normal
    σ·N(0, 1) has μ₄ = 3σ⁴ (excess kurtosis 0). Raises ValueError on another kind."""
    if noise == "bipolar":
        return sigma ** 2, sigma ** 2 * sigma ** 2
    if noise == "normal":
        return sigma ** 2, 3 * sigma ** 2 * sigma ** 2
    raise ValueError(f"noise must be 'bipolar' or 'normal', got {noise!r}")


def projected_fourth_moment(w: np.ndarray, sigma: float, noise: str) -> float:
    """Appendix C: E[(w·ξ)⁴] = 3σ⁴‖w‖₂⁴ + ‖w‖₄⁴(μ₄ − 3σ⁴); the second term carries the excess
    kurtosis μ₄/σ⁴ − 3 of the noise."""
    s2, mu4 = noise_moments(sigma, noise)
    return 3 * s2 * s2 * float(w @ w) ** 2 + float((w ** 4).sum()) * (mu4 - 3 * s2 * s2)


def _noise(rng: np.random.Generator, shape: tuple[int, ...], sigma: float, noise: str
           ) -> np.ndarray:
    noise_moments(sigma, noise)
    if noise == "bipolar":
        return sigma * (2.0 * rng.integers(0, 2, shape) - 1.0)
    return sigma * rng.standard_normal(shape)


def printed_fourth_moment(w: np.ndarray, sigma: float, noise: str) -> float:
    """Appendix C's E[(w·ξ)⁴] as printed: Σ_j w_j⁴μ₄ + 6Σ_{j≠j'} w_j²w_j'²σ⁴. Over ordered pairs
    j ≠ j' the coefficient is 3 (6 belongs to unordered pairs j < j'): an erratum, which
    :func:`projected_fourth_moment` corrects."""
    s2, mu4 = noise_moments(sigma, noise)
    w2, w4 = float(w @ w), float((w ** 4).sum())
    return mu4 * w4 + 6 * s2 * s2 * (w2 * w2 - w4)


def projected_fourth_moment_mc(w: np.ndarray, sigma: float, noise: str, samples: int,
                               seed: int) -> tuple[float, float]:
    """Monte Carlo of :func:`projected_fourth_moment` over ``samples`` noise vectors of the
    kind ``noise``. Returns (estimate, standard error); raises ValueError for an unknown kind."""
    rng, vals = _rng(seed), []
    for size in _chunks(samples, len(w)):
        vals.append((_noise(rng, (size, len(w)), sigma, noise) @ w) ** 4)
    return _mean_se(np.concatenate(vals))


def random_unit_fourth_norm(m: int) -> float:
    """E‖u‖₄⁴ = 3/(m + 2) for u uniform on the sphere of R^m (section 4 uses its limit 3/m)."""
    return 3.0 / (m + 2)


def random_unit_fourth_norm_mc(m: int, samples: int, seed: int) -> tuple[float, float]:
    """Monte Carlo of :func:`random_unit_fourth_norm`: u = g/‖g‖ for Gaussian g (m,). Returns
    (estimate, standard error)."""
    rng, vals = _rng(seed), []
    for size in _chunks(samples, m):
        g = rng.standard_normal((size, m))
        vals.append(((g * g).sum(1) ** -2) * (g ** 4).sum(1))
    return _mean_se(np.concatenate(vals))


def noise_nodes(m: int, sigma: float, noise: str) -> tuple[np.ndarray, np.ndarray]:
    """An exact quadrature of the noise law on R^m: nodes (K, m) and probabilities (K,).

    Bipolar: all 2^m sign vectors, probability 2^-m each. Normal: the tensor Gauss–Hermite rule
    with :data:`HERMITE_NODES` nodes per coordinate (6^m nodes), exact for polynomials of degree
    <= 11 in each coordinate. Raises ValueError on an unknown kind or m > 12.
    """
    noise_moments(sigma, noise)
    if m > 12:
        raise ValueError(f"m = {m} is too large for exact quadrature (<= 12)")
    if noise == "bipolar":
        pts, prob = np.array([-1.0, 1.0]), np.array([0.5, 0.5])
    else:
        pts, prob = hermegauss(HERMITE_NODES)
        prob = prob / prob.sum()
    nodes = np.array(list(itertools.product(pts, repeat=m))) * sigma
    probs = np.prod(np.array(list(itertools.product(prob, repeat=m))), axis=1)
    return nodes, probs


def expected_next_loss(w: np.ndarray, eta: float, sigma: float, noise: str) -> float:
    """Appendix C: the expected loss on e_i one SGD step after a fully learned, interference-free
    state, E[(‖w′‖² − 1 + w′·ξ′)²] with w′ = w − 2η(w·ξ)(2w + ξ), ξ and ξ′ independent noise.

    Exact: ξ′ enters as σ²‖w′‖² (independent, mean 0) and ξ by :func:`noise_nodes`.
    w: (m,) the encoding W_i (unit length in the paper's setting).
    """
    nodes, probs = noise_nodes(len(w), sigma, noise)
    a = nodes @ w
    w1 = w - 2 * eta * a[:, None] * (2 * w + nodes)
    n2 = (w1 * w1).sum(1)
    return float(probs @ ((n2 - 1) ** 2 + sigma * sigma * n2))


def loss_polynomial(w: np.ndarray, sigma: float, noise: str) -> np.ndarray:
    """The expected next-step loss is a polynomial of degree 4 in η: its coefficients (5,)
    [η⁰, …, η⁴], interpolated exactly from :func:`expected_next_loss` at η = −2, …, 2."""
    etas = np.arange(-2.0, 3.0)
    vals = [expected_next_loss(w, e, sigma, noise) for e in etas]
    return np.linalg.solve(np.vander(etas, 5, increasing=True), vals)


def fourth_norm_coefficient(sigma: float, noise: str) -> float:
    """The η² coefficient of ‖W_i‖₄⁴ in the expected next-step loss: 16σ⁴·(μ₄/σ⁴ − 3), i.e. 16σ⁴
    times the excess kurtosis: −32σ⁴ for bipolar noise (sparsity rewarded), 0 for normal."""
    s2, mu4 = noise_moments(sigma, noise)
    return 16 * (mu4 - 3 * s2 * s2)


def unit_encodings(m: int, count: int, seed: int) -> np.ndarray:
    """``count`` unit vectors of R^m from dense to sparse (fourth norms spread over (1/m, 1)):
    g·|g|^k normalised, Gaussian g, k from 0 to 6. Shape (count, m)."""
    rng = _rng(seed)
    g = rng.standard_normal((count, m))
    w = g * np.abs(g) ** np.linspace(0.0, 6.0, count)[:, None]
    return w / np.linalg.norm(w, axis=1, keepdims=True)


def fourth_norm_slope(m: int, sigma: float, noise: str, count: int, seed: int) -> float:
    """The ‖W_i‖₄⁴ coefficient measured: least-squares slope of the exact η² coefficient
    (:func:`loss_polynomial`) against ‖w‖₄⁴ over :func:`unit_encodings` (count, m)."""
    W = unit_encodings(m, count, seed)
    c2 = [loss_polynomial(w, sigma, noise)[2] for w in W]
    return float(np.polyfit((W ** 4).sum(1), c2, 1)[0])


#: The check of :func:`checks` that holds appendix C's printed E(w·ξ)⁴ against the Monte Carlo.
PRINTED_FOURTH_MOMENT = "E(w·ξ)⁴ as printed (6Σ_{j≠j'}), bipolar noise"

#: Columns of :func:`checks`.
CHECK_COLUMNS = {
    "check": "which closed form",
    "estimate": "our computation (Monte Carlo mean, or an exact numerical computation)",
    "se": "its standard error (Monte Carlo), 0 for an exact computation",
    "closed_form": "the paper's closed form",
}


def checks(n: int, m: int, sigma: float, samples: int, seed: int, m_exact: int) -> pd.DataFrame:
    """Every closed form of this module against its check, one row each (:data:`CHECK_COLUMNS`).

    Monte Carlo with ``samples`` draws (check k seeded with seed + k) for: the collision
    probability (m), the interference at init (n, m), E(w·ξ)⁴ for bipolar and normal noise (σ,
    on a unit encoding of R^m with ‖w‖₄⁴ about ½; the bipolar one also against appendix C's
    printed form, :func:`printed_fourth_moment`) and the random-unit-vector fourth norm (m);
    exact computations for the interference decay and the ‖W_i‖₄⁴ coefficient of the
    next-step loss (m_exact neurons, 8 encodings).
    """
    w = unit_encodings(m, 5, seed)[3]
    rows = [
        ("collision probability", *collision_probability_mc(m, samples, seed),
         collision_probability(m)),
        ("interference at init", *interference_at_init_mc(n, m, samples // n, seed + 1),
         interference_at_init(n, m)),
        ("random unit vector fourth norm", *random_unit_fourth_norm_mc(m, samples, seed + 2),
         random_unit_fourth_norm(m)),
    ]
    for k, noise in enumerate(("bipolar", "normal")):
        mc = projected_fourth_moment_mc(w, sigma, noise, samples, seed + 3 + k)
        rows.append((f"E(w·ξ)⁴, {noise} noise", *mc, projected_fourth_moment(w, sigma, noise)))
        if noise == "bipolar":
            rows.append((PRINTED_FOURTH_MOMENT, *mc, printed_fourth_moment(w, sigma, noise)))
        rows.append((f"‖W_i‖₄⁴ coefficient of the next-step loss, {noise} noise",
                     fourth_norm_slope(m_exact, sigma, noise, 8, seed + 5), 0.0,
                     fourth_norm_coefficient(sigma, noise)))
    decay = interference_decay_check(m, seed + 6)
    rows += [("interference decay: numerical W_i·W_j / exact solution − 1 (max)",
              decay["exact_error"], 0.0, 0.0),
             ("interference decay: rate −d ln(W_i·W_j)/dt / (‖W_i‖² + ‖W_j‖²) − 1 (max)",
              decay["rate_error"], 0.0, 0.0)]
    return pd.DataFrame(rows, columns=list(CHECK_COLUMNS))
