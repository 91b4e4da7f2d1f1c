"""Notes on toy autoencoding: the models trained by the batched engine (tms.engine.train).

Symbols as in tms.notes.theory: D = n_s features, d = n_d hidden units, p = 1 − S, A = W_out,
B = W_in. Instance k of a grid is trained with seed ``seed + k`` (init and data).

- Proposition 1 / Corollary 2 (:func:`linear_table`): bias-free linear autoencoders x ↦ ABx
  on the sparse data ("sparse": Σ with one large and D − 1 equal eigenvalues) and on the same
  data with feature i scaled by s_i ("scaled": distinct eigenvalues,
  tms.notes.theory.scale_factors), over d × S, each trained afresh to every step count of a ladder
  (same seeds, so each rung is the same run stopped earlier).
- Section 3 (:func:`relu_tables`): ReLU-output models ReLU(W_out W_in x + b) over S, their loss
  split by the number of active features (tms.notes.data).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from tms.core import machine
from tms.engine.grid import Instance, Schedule, StackSpec, chunk_bytes
from tms.engine.precision import gpu_path
from tms.engine.threads import torch_threads
from tms.engine.train import heldout_loss, stack_of, train_grid
from tms.notes import data, theory

#: Columns of data/autoencoding_notes/linear.parquet.
LINEAR_COLUMNS = {
    "spectrum": "'sparse' (Σ of the notes' data) or 'scaled' (features times distinct s_i)",
    "S": "sparsity (p = 1 − S)", "D": "features (n_s)", "d": "hidden units (n_d)",
    "seed": "torch seed of the model (init and data)",
    "steps_cap": "step cap of this rung of the ladder", "steps": "optimiser steps taken",
    "stopped": "True if the stopping rule ended training",
    "diverged": "True if training diverged (NaN/inf loss, or above diverge_factor times its "
                "loss scale, the larger of the first minibatch's and the zero output's, "
                "tms.engine.train.loss_scale): excluded from claims and figures",
    "loss": "exact expected per-feature loss tr((I − AB)Σ(I − AB)ᵀ)/D of the trained A, B",
    "loss_min": "(tr Σ − Σ_{i≤d} λ_i)/D, Corollary 2, per feature",
    "gap": "loss / loss_min − 1",
    "loss_heldout": "per-feature MSE on the fixed held-out sample (Monte Carlo, tms.engine.train)",
    "angle_top_deg": "largest principal angle between col(A) and the top-d eigenvectors of Σ "
                     "(numpy's basis: arbitrary within a degenerate eigenspace), degrees",
    "angle_u1_deg": "angle between the top eigenvector u_1 and col(A), degrees",
    "commutator": "‖ΣP_A − P_AΣ‖_F/‖Σ‖_F: 0 iff col(A) is spanned by eigenvectors (eq. 7)",
    "projection_residual": "‖AB − P_A‖_F: 0 iff AB is the projection onto col(A) (eq. 5)",
}


#: The statistics of :func:`_linear_row` for a model that diverged: none.
_NO_LINEAR_ROW = dict.fromkeys(["loss", "loss_min", "gap", "angle_top_deg", "angle_u1_deg",
                                "commutator", "projection_residual"], float("nan"))


def _linear_row(A: np.ndarray, B: np.ndarray, sigma: np.ndarray) -> dict[str, float]:
    D, d = A.shape
    U = theory.spectrum(sigma)[1]
    L, L_min = theory.loss(A, B, sigma) / D, theory.min_loss(sigma, d) / D
    return {"loss": L, "loss_min": L_min, "gap": L / L_min - 1,
            "angle_top_deg": float(np.degrees(theory.largest_angle(A, U[:, :d]))),
            "angle_u1_deg": float(np.degrees(theory.angle_to_vector(A, U[:, 0]))),
            "commutator": theory.commutator(A, sigma),
            "projection_residual": theory.projection_residual(A, B)}


def _check_fits(D: int, insts: Sequence[Instance], sched: Schedule, device: str,
                key: str, precision: str) -> None:
    """Raise ParamsError, naming the params section ``key``, if the stack of ``insts`` (one
    stack: the notes' grids are small) does not fit this machine (tms.core.machine)."""
    bucketed = gpu_path(device, precision)
    machine.check_fits(chunk_bytes(D, insts, range(len(insts)), sched, bucketed), device,
                       f"training {key} ({len(insts)} models of D = {D})",
                       f"make {key} smaller")


@dataclass(frozen=True)
class Run:
    """How the notes' models are trained and scored (:func:`linear_table`, :func:`relu_tables`):
    instance k of a grid seeded ``seed + k`` (init and data), Adam's learning rate ``lr`` and the
    schedule ``sched`` (tms.engine.grid.Schedule), the held-out sample (``n_eval`` vectors drawn
    with ``eval_seed``), the torch ``device`` and the ``precision`` of the products
    (tms.engine.precision)."""

    seed: int
    lr: float
    sched: Schedule
    eval_seed: int
    n_eval: int
    device: str = "cpu"
    precision: str = "fp32"


@torch_threads(1)
def linear_table(D: int, d_values: Sequence[int], S_values: Sequence[float],
                 steps: Sequence[int], scale_min: float, run: Run) -> pd.DataFrame:
    """Trained linear autoencoders x ↦ ABx (no bias) against Proposition 1 / Corollary 2.

    Grid d × S (S fastest; instance k has seed run.seed + k) for each spectrum ('sparse', then
    'scaled' with tms.notes.theory.scale_factors(D, scale_min)) and each step cap in ``steps``
    (replacing run.sched.max_steps), trained and scored as ``run`` says (:class:`Run`). Returns
    one row per (spectrum, cap, instance), columns :data:`LINEAR_COLUMNS`. Raises ValueError if
    some d is not in [1, D); ParamsError if the stack does not fit this machine.
    """
    seed, lr, sched, device, precision = run.seed, run.lr, run.sched, run.device, run.precision
    if any(not 1 <= d < D for d in d_values):
        raise ValueError(f"every d must be in [1, D = {D}), got {list(d_values)}")
    grid = [(d, float(S)) for d in d_values for S in S_values]
    insts = [Instance(1.0 - S, d, seed + k, lr) for k, (d, S) in enumerate(grid)]
    _check_fits(D, insts, dataclasses.replace(sched, max_steps=max(steps)), device,
                "autoencoding_notes.linear", precision)
    p = torch.tensor([i.p for i in insts], device=device)
    rows = []
    for spectrum, scale in (("sparse", None), ("scaled", theory.scale_factors(D, scale_min))):
        for cap in steps:
            spec = StackSpec(D, dataclasses.replace(sched, max_steps=cap), relu=False, bias=False,
                             scale=None if scale is None else scale.tolist(), device=device,
                             precision=precision, label=f"notes {spectrum} ")
            results = train_grid(spec, insts)
            held = heldout_loss(stack_of(results, D, False, device, bias=False), p, run.eval_seed,
                                run.n_eval, scale=None if scale is None else scale.tolist())
            for (d, S), inst, res, h in zip(grid, insts, results, held):
                sigma = theory.sparse_sigma(S, D, scale)
                A, B = res.W_out.astype(np.float64), res.W_in.astype(np.float64)
                fine = not res.diverged and np.isfinite(A).all() and np.isfinite(B).all()
                rows.append({"spectrum": spectrum, "S": S, "D": D, "d": d, "seed": inst.seed,
                             "steps_cap": cap, "steps": res.steps, "stopped": res.stopped,
                             "diverged": res.diverged,
                             **(_linear_row(A, B, sigma) if fine else _NO_LINEAR_ROW),
                             "loss_heldout": float(h)})
    return pd.DataFrame(rows, columns=list(LINEAR_COLUMNS))


#: Columns of data/autoencoding_notes/relu.parquet.
RELU_COLUMNS = {
    "S": "sparsity (p = 1 − S)", "D": "features (n_s)", "d": "hidden units (n_d)",
    "seed_index": "which model at this S (0-based)", "seed": "torch seed of the model",
    "steps": "optimiser steps taken", "stopped": "True if the stopping rule ended training",
    "diverged": "True if training diverged (as in LINEAR_COLUMNS): excluded from claims and "
                "figures",
    "loss_heldout": "per-feature MSE on the fixed held-out sample (tms.engine.train)",
    "loss": "per-feature loss Σ_l μ(Q_l) m_l / D from the strata",
    "loss_ci": "95% half-width of loss",
    "share_ge2": "share of the loss from inputs with ≥ 2 active features (strata)",
    "share_ci": "95% half-width of share_ge2 (delta method)",
    "mass_ge2": "μ(∪_{l≥2} Q_l), exact",
}


@torch_threads(1)
def relu_tables(D: int, d: int, S_values: Sequence[float], seeds: int, run: Run,
                n_per_stratum: int, strata_seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ReLU-output models trained on the grid seeds × S (S fastest, instance k seed
    run.seed + k) and scored as ``run`` says (:class:`Run`), their held-out loss and the share of
    it from inputs with ≥ 2 active features (n_per_stratum vectors per skeleton drawn with
    ``strata_seed``, tms.notes.data.loss_by_active_count).

    Returns (table with columns :data:`RELU_COLUMNS`, strata table with columns S,
    seed_index, l, mu (μ(Q_l)), m (mean per-sample loss on Q_l), se, contribution
    (μ_l m_l / Σ_l μ_l m_l)). Raises ValueError unless 1 ≤ d < D; ParamsError if the stack
    does not fit this machine.
    """
    seed, lr, sched, device, precision = run.seed, run.lr, run.sched, run.device, run.precision
    if not 1 <= d < D:
        raise ValueError(f"need 1 <= d < D, got d={d}, D={D}")
    grid = [(si, float(S)) for si in range(seeds) for S in S_values]
    insts = [Instance(1.0 - S, d, seed + k, lr) for k, (_, S) in enumerate(grid)]
    _check_fits(D, insts, sched, device, "autoencoding_notes.relu", precision)
    results = train_grid(StackSpec(D, sched, relu=True, device=device, precision=precision,
                                   label="notes relu "), insts)
    model = stack_of(results, D, True, device)
    held = heldout_loss(model, torch.tensor([i.p for i in insts], device=device), run.eval_seed,
                        run.n_eval)
    m, se = data.loss_by_active_count(model, n_per_stratum, strata_seed)
    rows, strata = [], []
    for k, ((si, S), inst, res) in enumerate(zip(grid, insts, results)):
        share = data.loss_share(m[k], se[k], S)
        rows.append({"S": S, "D": D, "d": d, "seed_index": si, "seed": inst.seed,
                     "steps": res.steps, "stopped": res.stopped, "diverged": res.diverged,
                     "loss_heldout": float(held[k]), **share})
        mu = data.skeleton_mass(S, D)
        for l in range(D + 1):
            strata.append({"S": S, "seed_index": si, "l": l, "mu": float(mu[l]),
                           "m": float(m[k, l]), "se": float(se[k, l]),
                           "contribution": float(mu[l] * m[k, l] / (mu @ m[k]))})
    return pd.DataFrame(rows, columns=list(RELU_COLUMNS)), pd.DataFrame(strata)
