"""Notes on toy autoencoding, section 2.2: gradients, the tied-weight flow and its energy.

Symbols as in tms.notes.theory (D = n_s features, d = n_d hidden, p = 1 − S; Σ = E[x xᵀ]). The tied
model is x ↦ WᵀWx with W (d × D), i.e. B = W and A = Wᵀ; its columns w_1, …, w_D ∈ R^d are the
features' hidden representations.

- eq. 19: ∇L(A, B) in closed form (tms.notes.theory.gradient), checked against autograd of the
  data-set loss Σ_t ‖x_t − ABx_t‖² with Σ = Σ_t x_t x_tᵀ.
- eqs. 20–22: dB/dt = Aᵀ(Σ − ABΣ) (−½∇_B L) with A = Bᵀ gives dW/dt = W(Σ − WᵀWΣ) = F(W).
  The tied loss L(W) = E‖x − WᵀWx‖² has −∇L = 2(F + G) with G = W(Σ − ΣWᵀW) (the transposed
  A-update), so eq. 22 is its gradient flow only when F = G, e.g. Σ = I. Every W with
  orthonormal rows is a rest point of eq. 22 (F = (I − WWᵀ)WΣ), so it need not reach PCA.
  Time scales: gradient descent with step η on L(W) follows dW/dt = (F + G)/2 at t = 4ηk.
- eq. 23: with W = W̄Uᵀ, dW̄/dt = W̄(I − W̄ᵀW̄)Λ; eq. 28 is the same, column by column.
- eq. 28 (the energy): with Σ = I the flow is −∇E for E = ¼Σ_i(1 − |w_i|²)² + ½Σ_{i<j}⟨w_i, w_j⟩²
  (each unordered pair once). Read with ½ over ordered pairs i ≠ j, as printed, the cross term
  is doubled and E is not the flow's energy: it can rise along the flow.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from scipy.integrate import solve_ivp

#: A change of the energy per unit time above this is a rise; below, round-off of the flow's
#: float64 integration (eq. 28's figure and its erratum row).
RISE_TOL = 1e-9

from tms.engine import sampler
from tms.notes import theory
from tms.notes.params import NotesFlows


def tied_flow(W: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """The right-hand side of eq. 22, F(W) = W(Σ − WᵀWΣ), shape (d, D)."""
    return W @ (sigma - W.T @ W @ sigma)


def tied_loss(W: np.ndarray, sigma: np.ndarray) -> float:
    """L(W) = E‖x − WᵀWx‖² = tr((I − WᵀW) Σ (I − WᵀW)ᵀ) for W (d, D)."""
    return theory.loss(W.T, W, sigma)


def tied_loss_grad(W: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """∇L(W) of the tied loss in closed form: −2[W(Σ − WᵀWΣ) + W(Σ − ΣWᵀW)], shape (d, D)."""
    return -2 * (tied_flow(W, sigma) + W @ (sigma - sigma @ W.T @ W))


def bar_flow(W_bar: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Eq. 23: dW̄/dt = W̄(I − W̄ᵀW̄)Λ for W̄ (d, D), Λ = diag(lam)."""
    return (W_bar - W_bar @ W_bar.T @ W_bar) * lam


def column_flow(W_bar: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Eq. 28 column by column: dw̄_j/dt = (1 − |w̄_j|²)λ_j w̄_j − Σ_{k≠j}⟨w̄_k, w̄_j⟩λ_j w̄_k."""
    out = np.empty_like(W_bar)
    for j in range(W_bar.shape[1]):
        w = W_bar[:, j]
        out[:, j] = (1 - w @ w) * lam[j] * w
        for k in range(W_bar.shape[1]):
            if k != j:
                out[:, j] -= (W_bar[:, k] @ w) * lam[j] * W_bar[:, k]
    return out


def energy(W: np.ndarray, ordered: bool = False) -> float:
    """Eq. 28's energy with Σ = I: ¼Σ_i(1 − |w_i|²)² + c·Σ_{i<j}⟨w_i, w_j⟩² for W (d, D).

    c = 1/2 (each unordered pair once: the flow's energy); ``ordered=True`` gives the printed
    reading ½Σ_{i≠j} over ordered pairs, c = 1.
    """
    G = W.T @ W
    norms = np.diag(G)
    cross = 0.5 * float((G**2).sum() - (norms**2).sum())       # Σ_{i<j}⟨w_i, w_j⟩²
    return float(0.25 * ((1 - norms) ** 2).sum() + (1.0 if ordered else 0.5) * cross)


def gradient_checks(S: float, D: int, d: int, T: int, seed: int, scale_min: float
                    ) -> pd.DataFrame:
    """Closed forms of eqs. 19–28 against independent computations, one row per identity.

    Data: T vectors of the scaled sparse data (tms.engine.sampler, p = 1 − S, then s ⊙ x with
    tms.notes.theory.scale_factors) and Σ = Σ_t x_t x_tᵀ; A, B, W standard normal from ``seed``.
    Columns: identity, equation, max_abs_diff, scale (max |reference|), rel_diff.
    Raises ValueError for d ≥ D or S outside [0, 1).
    """
    if not 1 <= d < D:
        raise ValueError(f"need 1 <= d < D, got d={d}, D={D}")
    x = sampler.sparse_features(torch.tensor([1.0 - theory.check_sparsity(S)]), T, D,
                                sampler.generators([seed]))[0].double()
    x = x * torch.as_tensor(theory.scale_factors(D, scale_min))
    sigma = (x.T @ x).numpy()
    rng = np.random.default_rng(seed)
    A, B, W = (rng.standard_normal(shape) for shape in [(D, d), (d, D), (d, D)])
    lam, U = theory.spectrum(sigma)
    rows = []

    def add(identity, eq, ours, ref):
        diff = float(np.max(np.abs(ours - ref)))
        scale = float(np.max(np.abs(ref)))
        rows.append({"identity": identity, "equation": eq, "max_abs_diff": diff,
                     "scale": scale, "rel_diff": diff / scale})

    a_t = torch.tensor(A, requires_grad=True)
    b_t = torch.tensor(B, requires_grad=True)
    ((x - x @ (a_t @ b_t).T) ** 2).sum().backward()
    gA, gB = theory.gradient(A, B, sigma)
    add("∂L/∂A closed form = autograd of Σ_t‖x_t − ABx_t‖²", "19", gA, a_t.grad.numpy())
    add("∂L/∂B closed form = autograd of Σ_t‖x_t − ABx_t‖²", "19", gB, b_t.grad.numpy())
    add("eq. 22 = −½ ∂L/∂B at A = Wᵀ", "20–22", tied_flow(W, sigma),
        -0.5 * theory.gradient(W.T, W, sigma)[1])
    w_t = torch.tensor(W, requires_grad=True)
    ((x - x @ (w_t.T @ w_t).T) ** 2).sum().backward()
    add("tied-loss gradient −2(F + G) = autograd", "22 (tied loss)",
        tied_loss_grad(W, sigma), w_t.grad.numpy())
    add("eq. 23 (W̄ = WU) = eq. 22 times U", "23", bar_flow(W @ U, lam), tied_flow(W, sigma) @ U)
    add("eq. 28 column by column = eq. 23", "24–28", column_flow(W @ U, lam), bar_flow(W @ U, lam))
    w_t = torch.tensor(W, requires_grad=True)
    G = w_t.T @ w_t
    n = torch.diagonal(G)
    (0.25 * ((1 - n) ** 2).sum() + 0.25 * ((G**2).sum() - (n**2).sum())).backward()
    add("eq. 28 flow at Σ = I = −∇E (E over unordered pairs)", "28",
        column_flow(W, np.ones(D)), -w_t.grad.numpy())
    return pd.DataFrame(rows)


def _flow_solution(W0: np.ndarray, sigma: np.ndarray, t_max: float):
    d, D = W0.shape
    sol = solve_ivp(lambda t, w: tied_flow(w.reshape(d, D), sigma).ravel(), (0.0, t_max),
                    W0.ravel(), method="DOP853", rtol=1e-11, atol=1e-13, dense_output=True)
    if not sol.success:
        raise RuntimeError(f"integration of eq. 22 failed: {sol.message}")
    return lambda t: sol.sol(t).reshape(d, D)


def record_steps(n_steps: int, n_t: int) -> np.ndarray:
    """Gradient-descent steps at which the flows are recorded: 0 and ~n_t log-spaced steps
    up to n_steps (unique integers, increasing)."""
    return np.unique(np.concatenate([[0], np.geomspace(1, n_steps, n_t).round().astype(int)]))


def compare_flows(sigma: np.ndarray, d: int, init_std: float, seed: int, t_max: float,
                  lr: float, n_t: int) -> pd.DataFrame:
    """The tied flow of eq. 22 against gradient descent on the tied loss, from one W(0).

    W(0) (d, D) has N(0, init_std²) entries from ``seed``. Eq. 22 is integrated (DOP853, rtol
    1e-11); gradient descent W ← W − lr·∇L(W) runs ⌈t_max/(4·lr)⌉ steps, step k compared at
    flow time t = 4·lr·k (both reduce to the same flow when Σ = I). Columns: step, t,
    loss_flow, loss_gd (tied loss, per sample), loss_min (Σ_{i>d} λ_i), orth_flow, orth_gd
    (max |WWᵀ − I|), distance (‖W_flow(t) − W_gd‖_F). Raises ValueError for d ≥ D.
    """
    D = len(sigma)
    if not 1 <= d < D:
        raise ValueError(f"need 1 <= d < D, got d={d}, D={D}")
    W0 = np.random.default_rng(seed).normal(0.0, init_std, (d, D))
    n_steps = int(np.ceil(t_max / (4 * lr)))
    flow = _flow_solution(W0, sigma, 4 * lr * n_steps)
    keep = set(record_steps(n_steps, n_t).tolist())
    L_min = theory.min_loss(sigma, d)
    rows, W = [], W0.copy()
    for k in range(n_steps + 1):
        if k in keep:
            Wf = flow(4 * lr * k)
            rows.append({"step": k, "t": 4 * lr * k, "loss_flow": tied_loss(Wf, sigma),
                         "loss_gd": tied_loss(W, sigma), "loss_min": L_min,
                         "orth_flow": float(np.abs(Wf @ Wf.T - np.eye(d)).max()),
                         "orth_gd": float(np.abs(W @ W.T - np.eye(d)).max()),
                         "distance": float(np.linalg.norm(Wf - W))})
        W = W - lr * tied_loss_grad(W, sigma)
    return pd.DataFrame(rows)


def spectra(S: float, D: int, scale_min: float) -> dict[str, np.ndarray]:
    """The Σ (D, D) the flows run on: 'identity' (the notes' Σ = I), 'sparse' (the sparse data,
    tms.notes.theory.sparse_sigma) and 'scaled' (the same data times
    tms.notes.theory.scale_factors)."""
    return {"identity": np.eye(D), "sparse": theory.sparse_sigma(S, D),
            "scaled": theory.sparse_sigma(S, D, theory.scale_factors(D, scale_min))}


def flows_table(f: NotesFlows, scale_min: float) -> pd.DataFrame:
    """:func:`compare_flows` on each Σ of :func:`spectra` (of f.S, f.D and ``scale_min``), with
    the hidden width, W(0), step and times of ``f`` (the params autoencoding_notes.flows), one
    W(0) for all; columns spectrum, then those of :func:`compare_flows`."""
    return pd.concat([compare_flows(sigma, f.d, f.init_std, f.seed, f.t_max, f.lr, f.n_t)
                      .assign(spectrum=name)[["spectrum", "step", "t", "loss_flow", "loss_gd",
                                              "loss_min", "orth_flow", "orth_gd", "distance"]]
                      for name, sigma in spectra(f.S, f.D, scale_min).items()], ignore_index=True)


def energy_along_flow(D: int, d: int, init_std: float, seed: int, t_max: float, n_t: int
                      ) -> pd.DataFrame:
    """Eq. 28's energy along the flow with Σ = I (where eq. 22 is dW/dt = W − WWᵀW).

    Same W(0) as :func:`compare_flows` for this seed. At n_t log-spaced times in (0, t_max]
    and t = 0: E (unordered pairs), E_ordered (the printed ½Σ_{i≠j}), dE_dt and
    dE_ordered_dt (central differences of the integrated solution, step 1e-4·max(t, 1)), and
    minus_speed_sq = −‖dW/dt‖²_F (equal to dE/dt exactly when the flow is −∇E).
    """
    W0 = np.random.default_rng(seed).normal(0.0, init_std, (d, D))
    h_max = 1e-4 * max(t_max, 1.0)
    flow = _flow_solution(W0, np.eye(D), t_max + h_max)
    times = np.concatenate([[0.0], np.geomspace(1e-3 * t_max, t_max, n_t)])
    rows = []
    for t in times:
        h = min(1e-4 * max(t, 1.0), t) if t > 0 else 0.0
        W = flow(t)
        row = {"t": float(t), "E": energy(W), "E_ordered": energy(W, ordered=True),
               "minus_speed_sq": -float((tied_flow(W, np.eye(D)) ** 2).sum())}
        for name, ordered in (("dE_dt", False), ("dE_ordered_dt", True)):
            row[name] = ((energy(flow(t + h), ordered) - energy(flow(t - h), ordered)) / (2 * h)
                         if h > 0 else float("nan"))
        rows.append(row)
    return pd.DataFrame(rows)
