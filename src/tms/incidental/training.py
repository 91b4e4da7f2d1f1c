"""The trained experiments of *Incidental polysemanticity* (figs. 3–6): stacks built from a params
section, trained by :func:`tms.engine.tied.train`, summarised into tables and arrays.

Instance k of an experiment (in the nesting order each function states) is seeded with the
section's ``seed`` + k. n features ↔ the project's n_s, m neurons ↔ the hidden width. Each
trains on ``device`` with the products in ``precision`` (``compute.precision``:
tms.engine.precision).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from tms.core import machine
from tms.core.progress import Progress
from tms.engine.checkpoint import Checkpoints
from tms.engine.sampler import generators
from tms.engine.tied import Optim, Setting, TiedSpec, init_weights, stack_bytes, stack_flops, train
from tms.incidental.params import KEY, IpCollisions, IpNoise, IpOptimizer, IpSingle, IpSweep
from tms.incidental.stats import (
    benign_pairs,
    encoding_shape,
    fourth_norms,
    in_band,
    polysemantic_from_init,
    polysemantic_neurons,
    stuck_encodings,
    winner_ranks,
)

#: The initial ranks whose wins of footnote 6's race the fig. 3 table records (won_rank1…).
RANKS = 8

#: Columns of the fig. 3 table, one row per model.
COLLISION_COLUMNS = {
    "n": "features",
    "m": "neurons",
    "instance": "index over (m, repeat), m outermost; the seed is collisions.seed + instance",
    "seed": "torch seed (init)",
    "polysemantic":
        "neurons with >= 2 features in the band 0.8 <= |W_ik| <= 1.2 (docs/paper-gaps.md)",
    "benign_pairs_init": "feature pairs whose largest |W_ik(0)| share a neuron with opposite signs",
    "poly_from_init": "polysemantic neurons on which at least two of their features had their "
                      "largest |W_ik(0)| at init (tms.incidental.stats.polysemantic_from_init)",
    "represented": "share of features with exactly one weight in the band",
    **{f"won_rank{r}": f"represented features won by the neuron of their rank-{r} |W_ik(0)| "
                       "(1: the largest; tms.incidental.stats.winner_ranks)"
       for r in range(1, RANKS + 1)},
    "fourth": "mean over features of the final ‖W_i‖₄⁴",
    "loss": "final loss (squared error summed over inputs and outputs + λ‖W‖₁)",
    "diverged": "True if training diverged (tms.engine.tied.diverged): left out of fits, claims "
                "and figures",
}

#: Columns of the fig. 4 table, one row per model.
NOISE_COLUMNS = {
    "instance": "index over (noise, sigma, repeat), noise outermost; seed = noise.seed + instance",
    "noise": "bipolar or normal",
    "sigma": "noise scale σ",
    "seed": "torch seed (init and noise)",
    "fourth": "mean over features of the final ‖W_i‖₄⁴",
    "loss": "final loss without noise",
    "diverged": "True if training diverged (tms.engine.tied.diverged): left out of fits, claims "
                "and figures",
}

#: Columns of the fig. 5 table, one row per model.
SWEEP_COLUMNS = {
    "instance": "index over baseline repeats, then (lam, repeat), then (sigma, repeat)",
    "kind": "baseline (λ = σ = 0), l1 (λ > 0, no noise) or noise (σ > 0, λ = 0)",
    "lam": "l1 coefficient λ",
    "sigma": "noise scale σ",
    "seed": "torch seed (init and noise)",
    "fourth": "mean over features of the final ‖W_i‖₄⁴",
    "l2sq": "mean over features of the final ‖W_i‖²",
    "shape": "mean over the features with W_i ≠ 0 of the final ‖W_i‖₄⁴ / ‖W_i‖₂⁴ (at most 1, one "
             "nonzero weight; about 3/m, a random direction; NaN if every W_i = 0)",
    "loss": "final loss without noise",
    "diverged": "True if training diverged (tms.engine.tied.diverged): left out of fits, claims "
                "and figures",
}


def optim(o: IpOptimizer) -> Optim:
    """The training optimiser of a params ``optimizer`` block."""
    return Optim(o.name, o.lr, o.weight_decay)


def _check_fits(key: str, n: int, ms: list[int], instances: int, steps: int, record_every: int,
                device: str) -> None:
    """Raise ParamsError, naming the params section ``key``, if a stack of ``instances`` tied
    models (fourth norms of the n encodings recorded) at any m of ``ms`` does not fit this
    machine; warn if the stacks of all of ``ms`` together can take more than an hour."""
    for m in ms:
        machine.check_fits(stack_bytes(n, m, instances, steps, record_every, n), device,
                           f"training {key} ({instances} models of n = {n}, m = {m})",
                           f"make {key} smaller")
    machine.warn_if_long(sum(stack_flops(n, m, instances, steps) for m in ms), device,
                         f"training {key} ({instances} models of n = {n} at m = "
                         f"{', '.join(map(str, ms))})")


def collisions(cfg: IpCollisions, device: str = "cpu", precision: str = "fp32",
               ckpt: Checkpoints | None = None) -> pd.DataFrame:
    """Fig. 3: for every m, ``instances`` models with l1 (no noise) trained for ``steps``; the
    table has :data:`COLLISION_COLUMNS`. One stack per m, each seeded on its own, so that with
    ``ckpt`` (tms.engine.checkpoint) every m's rows are kept as soon as its stack is trained and
    a killed run resumes at the next m with the same bytes. Raises ParamsError (before any
    training) where a stack cannot fit this machine."""
    _check_fits(f"{KEY}.collisions", cfg.n, cfg.m, cfg.instances, cfg.steps, cfg.steps,
                device)                          # every stack, before any training
    kept = {m: ckpt.load(f"m{m}") if ckpt else None for m in cfg.m}
    rows = []
    with Progress(f"{KEY}.collisions", len(cfg.m), unit="stack") as stacks:
        if done := sum(k is not None for k in kept.values()):
            stacks.resume(done)                # one line (a record): how many stacks were read
        for j, m in enumerate(cfg.m):
            if kept[m] is None:
                kept[m] = {"rows": _collision_rows(cfg, j, device, precision)}
                if ckpt:
                    ckpt.save(f"m{m}", kept[m])
                stacks.update()
            rows += kept[m]["rows"]
    return pd.DataFrame(rows, columns=list(COLLISION_COLUMNS))


def _collision_rows(cfg: IpCollisions, j: int, device: str, precision: str) -> list[list]:
    """The fig. 3 rows of the models at m = cfg.m[j] (instances j·instances onwards)."""
    m = cfg.m[j]
    index = range(j * cfg.instances, (j + 1) * cfg.instances)
    settings = [Setting(cfg.seed + k, lam=cfg.lam) for k in index]
    trace = train(TiedSpec(cfg.n, m, optim(cfg.optimizer), cfg.steps, cfg.steps,
                           device, precision), settings, fourth_norms)
    W0 = init_weights(cfg.n, m, generators([s.seed for s in settings], device)).cpu().numpy()
    represented = (in_band(trace.W).sum(-1) == 1).mean(-1)
    rows = []
    for r, k in enumerate(index):
        wins = np.bincount(winner_ranks(trace.W[r], W0[r]), minlength=RANKS + 1)[1:RANKS + 1]
        rows.append([cfg.n, m, k, settings[r].seed, int(polysemantic_neurons(trace.W[r])),
                     int(benign_pairs(W0[r])), polysemantic_from_init(trace.W[r], W0[r]),
                     float(represented[r]), *map(int, wins),
                     float(fourth_norms(trace.W[r]).mean()), float(trace.loss[r]),
                     bool(trace.diverged[r])])
    return rows


def noise_runs(cfg: IpNoise, device: str = "cpu", precision: str = "fp32"
               ) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Fig. 4: one stack over noise kinds × σ × repeats, no l1. Returns the table
    (:data:`NOISE_COLUMNS`) and arrays ``steps`` (T,) and ``fourth`` (I, T), the mean over
    features of ‖W_i‖₄⁴ at the recorded steps."""
    grid = list(itertools.product(cfg.noise, cfg.sigma, range(cfg.instances)))
    settings = [Setting(cfg.seed + k, sigma=s, noise=kind) for k, (kind, s, _) in enumerate(grid)]
    _check_fits(f"{KEY}.noise", cfg.n, [cfg.m], len(settings), cfg.steps, cfg.record_every,
                device)
    trace = train(TiedSpec(cfg.n, cfg.m, optim(cfg.optimizer), cfg.steps, cfg.record_every,
                           device, precision), settings, fourth_norms)
    fourth = trace.recorded.mean(-1)
    table = pd.DataFrame([[k, st.noise, st.sigma, st.seed, float(fourth[k, -1]),
                           float(trace.loss[k]), bool(trace.diverged[k])]
                          for k, st in enumerate(settings)], columns=list(NOISE_COLUMNS))
    return table, {"steps": trace.steps, "fourth": fourth}


def sweep(cfg: IpSweep, device: str = "cpu", precision: str = "fp32") -> pd.DataFrame:
    """Fig. 5: one stack of baseline, λ-sweep and σ-sweep models, the same step budget for all;
    the table has :data:`SWEEP_COLUMNS` (final values only)."""
    reps = range(cfg.instances)
    grid = ([("baseline", 0.0, 0.0)] * cfg.instances + [("l1", lam, 0.0) for lam in cfg.lam
                                                         for _ in reps]
            + [("noise", 0.0, s) for s in cfg.sigma for _ in reps])
    settings = [Setting(cfg.seed + k, lam=lam, sigma=s, noise=cfg.noise)
                for k, (_, lam, s) in enumerate(grid)]
    _check_fits(f"{KEY}.sweep", cfg.n, [cfg.m], len(settings), cfg.steps, cfg.steps, device)
    trace = train(TiedSpec(cfg.n, cfg.m, optim(cfg.optimizer), cfg.steps, cfg.steps,
                           device, precision), settings, fourth_norms)
    fourth = fourth_norms(trace.W).mean(-1)
    l2sq = (trace.W ** 2).sum(-1).mean(-1)
    shape = encoding_shape(trace.W)
    return pd.DataFrame([[k, kind, lam, s, settings[k].seed, float(fourth[k]), float(l2sq[k]),
                          float(shape[k]), float(trace.loss[k]), bool(trace.diverged[k])]
                         for k, (kind, lam, s) in enumerate(grid)], columns=list(SWEEP_COLUMNS))


def single(cfg: IpSingle, device: str = "cpu", key: str = f"{KEY}.single",
           precision: str = "fp32") -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Fig. 6: ``candidates`` models under ``noise`` at σ, no l1 (``key``: cfg's params key, for
    errors). Returns the stuck encodings of
    the candidates that did not diverge (:data:`tms.incidental.stats.STUCK_COLUMNS`, rule of
    :func:`stuck_encodings`) and arrays ``steps`` (T,), ``fourth`` (C, T, n) per-encoding fourth
    norms, ``W`` (C, n, m) final, ``diverged`` (C,) bool."""
    settings = [Setting(cfg.seed + k, sigma=cfg.sigma, noise=cfg.noise)
                for k in range(cfg.candidates)]
    _check_fits(key, cfg.n, [cfg.m], len(settings), cfg.steps, cfg.record_every,
                device)
    trace = train(TiedSpec(cfg.n, cfg.m, optim(cfg.optimizer), cfg.steps, cfg.record_every,
                           device, precision), settings, fourth_norms)
    stuck = stuck_encodings(trace.W, cfg.stuck_below)
    usable = ~stuck.instance.isin(np.flatnonzero(trace.diverged))
    return (stuck[usable].reset_index(drop=True),
            {"steps": trace.steps, "fourth": trace.recorded, "W": trace.W,
             "diverged": trace.diverged})
