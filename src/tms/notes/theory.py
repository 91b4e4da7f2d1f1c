"""Notes on toy autoencoding, section 1: critical points of the linear autoencoder x ↦ ABx.

Symbols are the notes'. D input/output features, d < D hidden units, B (d × D) the input
weights, A (D × d) the output weights, S the sparsity, Σ the second-moment matrix of the data
with eigenvalues λ_1 ≥ … ≥ λ_D and orthonormal eigenvectors u_1, …, u_D (columns of U).
In the project's names: D = n_s, d = n_d, p = 1 − S, B = W_in, A = W_out of a bias-free
linear stack (tms.engine.models with relu=False, bias=False).

Normalisation: the notes' Σ is Σ_t x_t x_tᵀ over a data set and their loss L the sum over it.
Here Σ = E[x xᵀ] (the data-set sum divided by T, T → ∞) and L(A, B) = E‖x − ABx‖²
= tr((I − AB) Σ (I − AB)ᵀ), the expected per-sample loss; every proposition is linear in Σ,
so its statements are unchanged. Tables divide by D where they report per-feature losses.

Data (section 2.1): x_i = c_i u_i, c_i ~ Bernoulli(1 − S), u_i ~ U[0, 1], so
E x_i² = (1 − S)/3 and E x_i x_j = (1 − S)²/4 (i ≠ j). Σ = a·I + b·11ᵀ with
a = (1 − S)/3 − (1 − S)²/4 and b = (1 − S)²/4: one eigenvalue a + bD on the all-ones direction
and a (D − 1)-fold degenerate eigenvalue a, so the notes' assumption (b), distinct eigenvalues,
fails. Scaling feature i by s_i (x ↦ s ⊙ x, distinct s_i) gives diag(s) Σ diag(s), whose
eigenvalues are distinct: the case in which the propositions apply as stated.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch


def check_sparsity(S: float) -> float:
    """S as a float; raises ValueError unless 0 ≤ S < 1."""
    if not 0.0 <= S < 1.0:
        raise ValueError(f"S must be in [0, 1) (S = 1 gives Σ = 0), got S={S!r}")
    return float(S)


def scale_factors(D: int, scale_min: float) -> np.ndarray:
    """Distinct per-feature factors s (D,), geometric from 1 down to ``scale_min``:
    s_i = scale_min^((i − 1)/(D − 1)). Raises ValueError unless 0 < scale_min < 1 and D ≥ 2."""
    if not 0.0 < scale_min < 1.0 or D < 2:
        raise ValueError(f"need 0 < scale_min < 1 and D >= 2, got scale_min={scale_min!r}, D={D}")
    return np.geomspace(1.0, scale_min, D)


def sparse_sigma(S: float, D: int, scale: Sequence[float] | None = None) -> np.ndarray:
    """Σ = E[x xᵀ] (D, D) of the sparse data (notes section 2.1), float64.

    Diagonal (1 − S)/3, off-diagonal (1 − S)²/4; with ``scale`` (D,) the data is s ⊙ x and
    Σ becomes diag(s) Σ diag(s). Raises ValueError for S outside [0, 1), D < 1 or a scale of
    the wrong length.
    """
    q = 1.0 - check_sparsity(S)
    if D < 1:
        raise ValueError(f"D must be >= 1, got {D}")
    sigma = np.full((D, D), q * q / 4)
    np.fill_diagonal(sigma, q / 3)
    if scale is not None:
        s = np.asarray(scale, dtype=float)
        if s.shape != (D,):
            raise ValueError(f"scale must have D = {D} entries, got shape {s.shape}")
        sigma = sigma * np.outer(s, s)
    return sigma


def sparse_spectrum(S: float, D: int) -> tuple[float, float]:
    """Eigenvalues of the unscaled sparse Σ in closed form: (λ_1, λ_rest).

    λ_1 = (1 − S)/3 + (D − 1)(1 − S)²/4 (eigenvector 1/√D) and λ_2 = … = λ_D =
    (1 − S)/3 − (1 − S)²/4 = Var(x_i). Raises ValueError for S outside [0, 1).
    """
    q = 1.0 - check_sparsity(S)
    return q / 3 + (D - 1) * q * q / 4, q / 3 - q * q / 4


def spectrum(sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """λ (D,) in decreasing order and U (D, D) with the matching orthonormal eigenvectors
    as columns (Σ = U diag(λ) Uᵀ, eq. 8)."""
    lam, U = np.linalg.eigh(np.asarray(sigma, dtype=float))
    return lam[::-1].copy(), U[:, ::-1].copy()


def loss(A: np.ndarray, B: np.ndarray, sigma: np.ndarray) -> float:
    """L(A, B) = E‖x − ABx‖² = tr((I − AB) Σ (I − AB)ᵀ) for A (D, d), B (d, D), Σ (D, D)."""
    R = np.eye(len(sigma)) - A @ B
    return float(np.trace(R @ sigma @ R.T))


def critical_loss(lam: np.ndarray, I: Sequence[int]) -> float:
    """L at the critical point of index set I (Proposition 1): tr Σ − Σ_{i∈I} λ_i, with λ (D,)
    the eigenvalues of Σ in decreasing order and I distinct 1-based indices (the notes'
    convention). Raises ValueError for an index outside 1..D or a repeated one."""
    _zero_based(I, len(lam))
    return float(lam.sum() - lam[[i - 1 for i in I]].sum())


def min_loss(sigma: np.ndarray, d: int) -> float:
    """The minimum of L (Corollary 2): tr Σ − Σ_{i≤d} λ_i = Σ_{i>d} λ_i, for Σ (D, D) symmetric
    and 0 ≤ d ≤ D hidden units (d ≥ D gives 0)."""
    return float(spectrum(sigma)[0][d:].sum())


def _orthonormal_basis(M: np.ndarray) -> np.ndarray:
    Q, _ = np.linalg.qr(np.asarray(M, dtype=float))
    return Q


def largest_angle(A: np.ndarray, V: np.ndarray) -> float:
    """Largest principal angle (radians) between col(A) and col(V), both d-dimensional:
    arcsin ‖(I − P_A) Q_V‖₂, accurate for small angles. A, V: (D, d) of full rank."""
    Q, Qv = _orthonormal_basis(A), _orthonormal_basis(V)
    sine = np.linalg.norm(Qv - Q @ (Q.T @ Qv), 2)
    return float(np.arcsin(min(1.0, sine)))


def angle_to_vector(A: np.ndarray, u: np.ndarray) -> float:
    """Angle (radians) between the vector u (D,) and the subspace col(A), A (D, d) of full
    column rank (Proposition 1's eigenvectors against a trained A). Raises ValueError for u = 0
    (no direction)."""
    Q = _orthonormal_basis(A)
    norm = np.linalg.norm(u)
    if not norm > 0:
        raise ValueError(f"u must be a nonzero vector, got norm {norm}")
    u = np.asarray(u, dtype=float) / norm
    return float(np.arcsin(min(1.0, np.linalg.norm(u - Q @ (Q.T @ u)))))


def projector(A: np.ndarray) -> np.ndarray:
    """P_A = A(AᵀA)⁻¹Aᵀ (D, D), the orthogonal projection onto col(A) (eq. 5), for A (D, d) of
    full column rank, computed from its QR factors (a rank-deficient A would give a projection
    onto d dimensions that hold col(A), not onto col(A))."""
    Q = _orthonormal_basis(A)
    return Q @ Q.T


def commutator(A: np.ndarray, sigma: np.ndarray) -> float:
    """‖Σ P_A − P_A Σ‖_F / ‖Σ‖_F: zero iff col(A) is spanned by eigenvectors of Σ (eq. 7)."""
    P = projector(A)
    return float(np.linalg.norm(sigma @ P - P @ sigma) / np.linalg.norm(sigma))


def projection_residual(A: np.ndarray, B: np.ndarray) -> float:
    """‖AB − P_A‖_F: zero iff AB is the orthogonal projection onto col(A) (eqs. 4–5)."""
    return float(np.linalg.norm(A @ B - projector(A)))


def gradient(A: np.ndarray, B: np.ndarray, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """∇L in closed form (eq. 19): ∂L/∂A = −2(ΣBᵀ − ABΣBᵀ) (D, d),
    ∂L/∂B = −2(AᵀΣ − AᵀABΣ) (d, D)."""
    return (-2 * (sigma @ B.T - A @ B @ sigma @ B.T),
            -2 * (A.T @ sigma - A.T @ A @ B @ sigma))


def gradient_norm(A: np.ndarray, B: np.ndarray, sigma: np.ndarray) -> float:
    """‖∇L(A, B)‖_F over both blocks of eq. 19, for A (D, d), B (d, D), Σ (D, D): zero at a
    critical point (Proposition 1)."""
    gA, gB = gradient(A, B, sigma)
    return float(np.sqrt((gA**2).sum() + (gB**2).sum()))


def critical_point(U: np.ndarray, I: Sequence[int], C: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The critical point (⋆) of index set I: A = U_I C (D, d), B = C⁻¹ U_Iᵀ (d, D).

    U: eigenvectors as columns (spectrum order); I: d distinct 1-based indices (the notes'
    convention, λ_1 largest); C: invertible (d, d). Raises ValueError for a bad I.
    """
    cols = _zero_based(I, U.shape[1])
    U_I = U[:, cols]
    return U_I @ C, np.linalg.solve(C, U_I.T)


def _zero_based(I: Sequence[int], D: int) -> list[int]:
    if len(set(I)) != len(I) or not all(1 <= i <= D for i in I):
        raise ValueError(f"I must be distinct indices in 1..{D}, got {list(I)}")
    return [i - 1 for i in sorted(I)]


def swap_pair(I: Sequence[int], D: int) -> tuple[int, int]:
    """The pair (j, k) of the proof of Proposition 3 (1-based): j ∈ I, k ∉ I, k < j, taking
    k the smallest index outside I and j the largest inside. Raises ValueError if
    I = {1, …, d} (the minimum: no such pair)."""
    cols = _zero_based(I, D)
    k = min(set(range(1, D + 1)) - {c + 1 for c in cols})
    j = max(c + 1 for c in cols)
    if k > j:
        raise ValueError(f"I = {sorted(I)} is the top index set: no j in I, k not in I with k < j")
    return j, k


def perturbed(U: np.ndarray, I: Sequence[int], C: np.ndarray, j: int, k: int, eps: float
              ) -> tuple[np.ndarray, np.ndarray]:
    """(Ã, B̃) of eqs. 13–14: U_I with u_j replaced by ũ_j = (u_j + ε u_k)/√(1 + ε²),
    Ã = Ũ_I C, B̃ = C⁻¹ Ũ_Iᵀ. j, k 1-based (j ∈ I, k ∉ I)."""
    cols = _zero_based(I, U.shape[1])
    U_I = U[:, cols].copy()
    U_I[:, cols.index(j - 1)] = (U[:, j - 1] + eps * U[:, k - 1]) / np.sqrt(1 + eps * eps)
    return U_I @ C, np.linalg.solve(C, U_I.T)


def predicted_decrease(lam: np.ndarray, j: int, k: int, eps):
    """Loss decrease of the proof of Proposition 3: ε²/(1 + ε²)(λ_k − λ_j) (1-based j, k);
    ε scalar or array, same shape out."""
    eps = np.asarray(eps, dtype=float)
    return eps**2 / (1 + eps**2) * (lam[k - 1] - lam[j - 1])


def hessian(A: np.ndarray, B: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Hessian of L with respect to (vec A, vec B), shape (2Dd, 2Dd), for A (D, d), B (d, D),
    Σ (D, D), by float64 autograd: its negative eigenvalues at a critical point are the
    directions of Proposition 3's proof (:func:`inversions`)."""
    S_t = torch.as_tensor(sigma, dtype=torch.float64)
    D, d = A.shape

    def f(theta: torch.Tensor) -> torch.Tensor:
        a, b = theta[:D * d].reshape(D, d), theta[D * d:].reshape(d, D)
        R = torch.eye(D, dtype=torch.float64) - a @ b
        return torch.trace(R @ S_t @ R.T)

    theta = torch.cat([torch.as_tensor(A, dtype=torch.float64).ravel(),
                       torch.as_tensor(B, dtype=torch.float64).ravel()])
    return torch.autograd.functional.hessian(f, theta).numpy()


def inversions(I: Sequence[int], D: int) -> int:
    """#{(j, k): j ∈ I, k ∉ I, k < j}: the number of directions the proof of Proposition 3
    lowers the loss along, i.e. the negative eigenvalues of the Hessian at the critical point
    of I when the eigenvalues are distinct (each pair spans a 2 × 2 block of determinant
    λ_k(λ_j − λ_k) < 0)."""
    inside = {c + 1 for c in _zero_based(I, D)}
    return sum(1 for j in inside for k in range(1, j) if k not in inside)


def invertible_c(d: int, seed: int) -> np.ndarray:
    """A seeded invertible C (d, d) for the critical points (⋆): a standard normal matrix
    plus d·I, which keeps it well conditioned."""
    return np.random.default_rng(seed).standard_normal((d, d)) + d * np.eye(d)


#: Relative size below which a Hessian eigenvalue counts as zero (float64 round-off).
ZERO_EIG = 1e-9


def critical_points_table(sigma: np.ndarray, d: int, C: np.ndarray) -> pd.DataFrame:
    """Every critical point (⋆) of Proposition 1, one row per index set I of size d.

    Columns: I (1-based, as text), top (I = {1..d}), loss (L at the point), loss_formula
    (tr Σ − Σ_{i∈I} λ_i), grad_norm (‖∇L‖_F, eq. 19), hess_min (smallest Hessian eigenvalue),
    hess_max, n_negative and n_zero (eigenvalues below −ZERO_EIG·hess_max and within
    ±ZERO_EIG·hess_max), inversions (predicted n_negative, :func:`inversions`).
    """
    lam, U = spectrum(sigma)
    D = len(lam)
    rows = []
    for I in itertools.combinations(range(1, D + 1), d):
        A, B = critical_point(U, I, C)
        eig = np.linalg.eigvalsh(hessian(A, B, sigma))
        tol = ZERO_EIG * eig[-1]
        rows.append({"I": " ".join(map(str, I)), "top": I == tuple(range(1, d + 1)),
                     "loss": loss(A, B, sigma),
                     "loss_formula": critical_loss(lam, I),
                     "grad_norm": gradient_norm(A, B, sigma),
                     "hess_min": float(eig[0]), "hess_max": float(eig[-1]),
                     "n_negative": int((eig < -tol).sum()), "n_zero": int((abs(eig) <= tol).sum()),
                     "inversions": inversions(I, D)})
    return pd.DataFrame(rows)


def saddle_table(sigma: np.ndarray, I: Sequence[int], C: np.ndarray, eps: Sequence[float]
                 ) -> tuple[pd.DataFrame, dict]:
    """Proposition 3's perturbation of the critical point of I, for each ε.

    Returns a table with columns eps, loss (L(Ã, B̃)), decrease (L(A, B) − L(Ã, B̃)) and
    predicted (ε²/(1 + ε²)(λ_k − λ_j)), and a summary dict: I, j, k (tms.notes.theory.swap_pair),
    lambda_j, lambda_k, loss_critical (L at the point), loss_formula (:func:`critical_loss`),
    grad_norm, curvature (d²L/dε² at ε = 0, by a central difference of the exact loss),
    curvature_predicted (−2(λ_k − λ_j): the gradient vanishes there, so the curvature along
    the path is vᵀHv for its tangent v), hess_min (smallest Hessian eigenvalue at the point),
    rayleigh (vᵀHv/vᵀv, an upper bound of hess_min) and rayleigh_predicted
    (−2(λ_k − λ_j)/vᵀv). Raises ValueError if I is the top index set.
    """
    lam, U = spectrum(sigma)
    D = len(lam)
    j, k = swap_pair(I, D)
    A, B = critical_point(U, I, C)
    L0 = loss(A, B, sigma)
    losses = np.array([loss(*perturbed(U, I, C, j, k, e), sigma) for e in eps])
    table = pd.DataFrame({"eps": np.asarray(eps, dtype=float), "loss": losses,
                          "decrease": L0 - losses, "predicted": predicted_decrease(lam, j, k, eps)})
    h = 1e-4
    curv = (loss(*perturbed(U, I, C, j, k, h), sigma) - 2 * L0
            + loss(*perturbed(U, I, C, j, k, -h), sigma)) / h**2
    H = hessian(A, B, sigma)
    tangent = np.zeros_like(A)
    tangent[:, sorted(I).index(j)] = U[:, k - 1]
    v = np.concatenate([(tangent @ C).ravel(),
                        np.linalg.solve(C, tangent.T).ravel()])
    summary = {"I": [int(i) for i in sorted(I)], "j": j, "k": k,
               "lambda_j": float(lam[j - 1]), "lambda_k": float(lam[k - 1]),
               "loss_critical": L0, "loss_formula": critical_loss(lam, I),
               "grad_norm": gradient_norm(A, B, sigma),
               "curvature": float(curv),
               "curvature_predicted": float(-2 * (lam[k - 1] - lam[j - 1])),
               "hess_min": float(np.linalg.eigvalsh(H)[0]),
               "rayleigh": float(v @ H @ v / (v @ v)),
               "rayleigh_predicted": float(-2 * (lam[k - 1] - lam[j - 1]) / (v @ v))}
    return table, summary
