"""Convergence beyond the stopping rule.

The stopping rule ends a model's training when its minibatch loss stops falling over a window;
that is not convergence (a plateau stops it too). So at every (n_s, p) of a trained grid, and of
the fig. 3 model, the ReLU model the rule stopped last (the slowest to settle: the most steps;
ties, the widest, then the first seed; with ``capped``, the models the step cap stopped compete
too; tms.persian_rug.ends.sample) is trained on to ``factor`` times its steps (at least
``min_steps``) with the rule off, and scored on the same held-out sample (:func:`rerun`). The
floor matters: a model can sit on a plateau near the symmetric solution, pass at twice its
steps, and leave it later (docs/benchmarks.md, "Past the stopping rule, every model").
The rerun goes on from where the model stopped where that is cheaper (:func:`resume_pays`: on
the GPU path, and for fig. 3's lone model; not for a grid's models on the CPU path, which share
a few data streams from the start): the training stage kept its training state there (weights,
Adam's moments and step count, its data stream; tms.persian_rug.ends), so the rerun is the
stopped model itself trained on, the steps it had taken not taken again. A model retrained from
its initialisation and data stream follows the same trajectory up to its stop, bit for bit
where it computes its steps as it did in training (alone in the rerun's stack, a model trained
among others of the same inputs may take other products, equal up to rounding; on the GPU path,
equal up to rounding), which the drop then includes. One model gates every ratio of its
(n_s, p): the premise, not
checked here, is that the last to settle is the least converged. A (n_s, p) where a grid's
check and fig. 3's both ran passes only if both do. A (n_s, p) passes if the held-out
loss falls by at most ``tolerance`` of the stopped model's (:func:`passing`); the claims judge a
trained cell only where every check of its (n_s, p) passes and one of them retrained a model
trained at least as long as the cell's (tms.persian_rug.evidence.Outputs.cells): without
``capped``, a cell the step cap stopped never counts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from tms.engine.checkpoint import Checkpoints
from tms.engine.grid import TrainState
from tms.persian_rug import ends, rows, training

#: The rerun's statistics of its weights (tms.persian_rug.rows.summary), kept as long_<name>.
SUMMARY = ("diag_mean", "diag_std", "bias_mean", "bias_std", "dead_fraction", "diag_live_mean",
           "diag_live_std")
#: Columns of the check's tables (data/persian_rug/converge/*.parquet), one row per model rerun.
COLUMNS = {
    "source": "'grid' (a trained grid, pr_train) or 'fig3' (the fig. 3 model, pr_fig3)",
    "n_s": "number of features",
    "p": "feature probability",
    "ratio_target": "grid value of the ratio n_d / n_s of the model rerun",
    "n_d": "its hidden width",
    "instance": "its index in its grid (seed: train.seed + instance)",
    "seed_index": "its seed index (its data stream: train.seed + seed_index)",
    "steps": "the steps the stopping rule (with capped, or the step cap) stopped it at",
    "loss": "its per-feature held-out MSE there (the trained table's loss)",
    "long_steps": "the rerun's steps: ceil(factor · steps), at least min_steps (long_steps), the "
                  "rule off",
    "long_loss": "the rerun's per-feature held-out MSE (the same held-out sample; NaN if the "
                 "rerun diverged)",
    "drop": "1 − long_loss / loss: the share of the loss that the longer training removed "
            "(NaN if the rerun diverged)",
    **{f"long_{c}": f"the rerun's {c} (tms.persian_rug.training.TRAIN_COLUMNS)"
       for c in SUMMARY},
    "long_off_mean": "the rerun's mean of the off-diagonal entries of W = W_out W_in",
    "long_off_std": "their standard deviation",
    "long_lyapunov": "the rerun's Λ (fig. 7, eq. 3; tms.persian_rug.rows.lyapunov): "
                     "beside the stopped model's, whether longer training moves it",
}


#: On the CPU path a data stream's draw for one step (batch × n_s uniforms, torch's generator)
#: costs about as much as the step of one model of this hidden width (a step is 10·batch·n_s·n_d
#: FLOPs; a uniform about 3 ns, a FLOP about 0.01 ns on two cores). It predicts the measured
#: reruns of the default profile's checks (2026-11-30, 2-core AMD EPYC): n_s 64, from the kept
#: states 50 s against 45 s from the seeds (predicted 1.24×), n_s 128 102 s against 91 s
#: (1.13×); fig. 3's lone model, a quarter of the steps fewer on the same one stream (0.76×),
#: took 139 s where its steps from the seeds would take 186 s at that rate.
DRAW_WIDTH = 32


def long_steps(steps: int, factor: float, min_steps: int = 0) -> int:
    """The steps a model the rule stopped after ``steps`` is retrained: ceil(factor · steps), at
    least ``min_steps`` (persian_rug.converge.factor and min_steps)."""
    return max(math.ceil(factor * steps), min_steps)


def rerun(spec: training.GridSpec, table: pd.DataFrame, factor: float, source: str,
          ckpt: Checkpoints | None = None, min_steps: int = 0, capped: bool = False,
          states: Mapping[int, TrainState] | None = None) -> pd.DataFrame:
    """Rerun every tms.persian_rug.ends.sample model of ``table`` (one trained grid of
    n_s = spec.n_s, or the fig. 3 models; ``capped`` as there) to :func:`long_steps` (``factor``
    times its steps, at least ``min_steps``) with the stopping rule off, one stack (each model
    leaves it at its own cap), on from its state in ``states`` ({instance: the training state
    where it stopped}, tms.persian_rug.ends) where there is one and steps are left and where
    that is cheaper (:func:`resume_pays`), else from the seeds (seed, data_seed) of the table;
    at the table's learning rate (lr), with ``spec``'s batch, Adam eps, divergence bound,
    held-out sample, device and compute. Returns
    :data:`COLUMNS`, one row per model rerun (``source`` names the table), empty without a model
    to rerun; ``factor`` 1 reruns each model as it was trained (drop 0: the rerun is the same
    trajectory). Raises ValueError if ``factor`` < 1, if the table's models do not share one
    learning rate and one base seed (seed − instance = data_seed − seed_index), or if a state
    ended at other steps than its model's row (not this table's), before any training;
    ParamsError as tms.persian_rug.training.plan_grid."""
    if not factor >= 1:
        raise ValueError(f"factor must be >= 1, got {factor}")
    chosen = ends.sample(table, capped)
    if not len(chosen):
        return pd.DataFrame(columns=list(COLUMNS))
    bases = set(chosen.seed - chosen.instance) | set(chosen.data_seed - chosen.seed_index)
    if len(bases) != 1 or chosen.lr.nunique() != 1:
        raise ValueError(f"the models to rerun do not share one base seed and one learning "
                         f"rate: base seeds {sorted(bases)}, lr {sorted(set(chosen.lr))}")
    caps = [long_steps(s, factor, min_steps) for s in chosen.steps]
    starts = [_start(states or {}, r, cap) for r, cap in zip(chosen.itertuples(), caps)]
    if not resume_pays(chosen, caps, starts, spec.device):
        starts = [None] * len(caps)
    points = [training.Point(int(r.instance), float(r.p), float(r.ratio_target), int(r.n_d),
                             int(r.seed_index), cap, start)
              for r, cap, start in zip(chosen.itertuples(), caps, starts)]
    # a window of all the steps: the rule needs more than two of them, so it never stops
    sched = dataclasses.replace(spec.sched, window=max(caps), max_steps=max(caps))
    run = dataclasses.replace(spec, base_seed=int(bases.pop()), lr=float(chosen.lr.iloc[0]),
                              sched=sched, label=f"{source} ×{factor:g} ")
    off: dict[int, tuple[float, float, float]] = {}

    def off_diagonal(pt: training.Point, W_in: np.ndarray, W_out: np.ndarray, _) -> None:
        W = W_out.astype(np.float64) @ W_in.astype(np.float64)
        entries = W[~np.eye(len(W), dtype=bool)]
        lyapunov = rows.lyapunov(*rows.row_sums(W_in, W_out, device=run.device)[1:])[0]
        off[pt.instance] = (float(entries.mean()), float(entries.std()), lyapunov)

    long, _ = training.train_and_score(run, points, relu=True, ckpt=ckpt, sink=off_diagonal)
    long_loss = long.loss.where(~long.diverged.astype(bool)).to_numpy()   # diverged: NaN
    return pd.DataFrame({
        "source": source, "n_s": chosen.n_s.astype(int), "p": chosen.p,
        "ratio_target": chosen.ratio_target, "n_d": chosen.n_d.astype(int),
        "instance": chosen.instance.astype(int), "seed_index": chosen.seed_index.astype(int),
        "steps": chosen.steps.astype(int), "loss": chosen.loss,
        "long_steps": long.steps.astype(int).to_numpy(), "long_loss": long_loss,
        "drop": 1.0 - long_loss / chosen.loss.to_numpy(),
        **{f"long_{c}": long[c].to_numpy() for c in SUMMARY},
        "long_off_mean": [off[int(k)][0] for k in chosen.instance],
        "long_off_std": [off[int(k)][1] for k in chosen.instance],
        "long_lyapunov": [off[int(k)][2] for k in chosen.instance]}, columns=list(COLUMNS))


def resume_pays(chosen: pd.DataFrame, caps: list[int], starts: list[TrainState | None],
                device: str) -> bool:
    """Whether the rerun of the models ``chosen`` (rows of the trained table) to ``caps`` steps
    goes on from the ``starts`` (their kept states, None where there is none) rather than from
    their seeds: on the GPU path always (a stream's draw is one kernel); on the CPU path where
    that costs less, counting a stream's draw of a step as the step of a model
    :data:`DRAW_WIDTH` wide. A resumed model draws from a stream of its own, so models that share
    a stream from the start (a grid's, one per seed index) draw more, for the steps they save.
    False without a start."""
    if not any(s is not None for s in starts):
        return False
    draw = 0 if str(device).startswith("cuda") else DRAW_WIDTH
    fresh: dict[int, int] = {}                 # a shared stream runs to its longest model's cap
    for seed, cap in zip(chosen.data_seed, caps):
        fresh[int(seed)] = max(fresh.get(int(seed), 0), cap)
    from_seeds = draw * sum(fresh.values()) + sum(d * c for d, c in zip(chosen.n_d, caps))
    resumed = sum((draw + d) * (c - (s.steps if s is not None else 0))
                  for d, c, s in zip(chosen.n_d, caps, starts))
    return resumed < from_seeds


def _start(states: Mapping[int, TrainState], row, cap: int) -> TrainState | None:
    """The state the rerun of the model of ``row`` (a row of the trained table) to ``cap``
    steps goes on from: its state in ``states``, None without one or with no step left. Raises
    ValueError on a state of other steps than the row's."""
    state = states.get(int(row.instance))
    if state is not None and state.steps != row.steps:
        raise ValueError(f"the kept state of model {row.instance} ended at step {state.steps}, "
                         f"its row at {row.steps}: the states are not this table's")
    return state if state is not None and cap > state.steps else None


def passing(checks: pd.DataFrame, tolerance: float) -> pd.Series:
    """Whether every check of each (n_s, p) passes (its drop ≤ ``tolerance``; a NaN drop, a
    diverged rerun, fails), indexed (n_s, p): ``checks`` are :func:`rerun` tables, any sources
    together."""
    return (checks["drop"] <= tolerance).groupby([checks.n_s, checks.p]).all()
