"""The params schema: ``params.yaml`` validated on load (and every profile merged onto it,
tms.pipeline.profiles).

Every stage calls :func:`load` before doing any work. A wrong type, an out-of-range value,
an unknown or misspelt key or a missing section raises :class:`ParamsError`, whose message
names the key (dotted path), the value and what is allowed.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import typing
from collections.abc import Hashable
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import yaml
from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, ValidationError,
                      field_validator, model_validator)


class ParamsError(ValueError):
    """Raised for an invalid params file; the message names key, value and what is allowed."""


class _Strict(BaseModel):
    # no float may be ±inf or NaN anywhere in the file
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


def _unique(values: list) -> list:
    seen = set()
    for v in values:
        if v in seen:
            raise ValueError(f"{v!r} appears more than once in {values}: give each value once "
                             f"(a repeated grid point would be computed and counted twice)")
        seen.add(v)
    return values


#: A list whose values are distinct.
Unique = AfterValidator(_unique)
Probability = Annotated[float, Field(gt=0.0, le=1.0)]
Ratio = Annotated[float, Field(gt=0.0, le=1.0)]
PositiveInt = Annotated[int, Field(ge=1)]
# Bounds on sizes: far above every profile (the authors' scale included), and below what would
# hang a stage or exhaust memory before the stage could say so.
#: Seeds: numpy's range for a seed (instance k of a grid is seeded with seed + k).
Seed = Annotated[int, Field(ge=0, le=2**32 - 1)]
#: Training steps.
Steps = Annotated[int, Field(ge=1, le=10**7)]
#: Seeds, instances, candidates: independent models per grid point or experiment.
Count = Annotated[int, Field(ge=1, le=10**4)]
#: A minibatch.
Batch = Annotated[int, Field(ge=1, le=2**16)]
#: Points of a linspace / geomspace grid.
GridSize = Annotated[int, Field(ge=1, le=10**4)]


class Linspace(_Strict):
    """``numpy.linspace(start, stop, num)``, the authors' way of writing a grid."""

    start: float
    stop: float
    num: GridSize

    def values(self) -> list[float]:
        return [float(v) for v in np.linspace(self.start, self.stop, self.num)]


def _expand(grid: list[float] | Linspace) -> list[float]:
    return grid.values() if isinstance(grid, Linspace) else list(grid)


def _check_unit_interval(name: str, grid: list[float] | Linspace) -> list[float] | Linspace:
    values = _expand(grid)
    if not values:
        raise ValueError(f"{name} grid is empty; give at least one value in (0, 1]")
    bad = [v for v in values if not (0.0 < v <= 1.0)]
    if bad:
        raise ValueError(f"every {name} must be in (0, 1], got {bad[0]!r}")
    _unique(values)
    return grid


def _power_of_two(top: int):
    """A validator: n must be a power of two in [2, top]."""
    def check(n: int) -> int:
        if n < 2 or n & (n - 1) or n > top:
            raise ValueError(f"must be a power of two from 2 to {top} (a Sylvester Hadamard "
                             f"matrix is needed), got {n}")
        return n
    return check


DEVICE_PATTERN = r"auto|cpu|cuda(:\d+)?"
DeviceName = Annotated[str, Field(pattern=f"^({DEVICE_PATTERN})$")]
#: tms.engine.precision.PRECISIONS (spelled out here: validating params never imports torch).
Precision = Literal["fp32", "tf32", "bf16"]


class Eval(_Strict):
    """The fixed held-out sample every model is scored on."""

    seed: Seed
    n_vectors: Annotated[int, Field(ge=65536, le=2**24)]


class Train(_Strict):
    """Optimiser and stopping rule
    (docs/paper-gaps.md: Adam, lr = 3e-3/sqrt(n_s), eps 1e-7, batch 1024).

    ``checkpoint_every``: steps between checkpoints of each training stack (tms.engine.checkpoint),
    0 = off; a killed stage resumes from its last checkpoint with identical results.
    ``diverge_factor``: a model whose minibatch loss exceeds this factor times its first one
    (or is NaN/inf) is flagged diverged and leaves its stack (tms.engine.train.diverged)."""

    seed: Seed
    batch_size: Batch
    lr_scale: Annotated[float, Field(gt=0.0)]
    lr: Annotated[float, Field(gt=0.0)] | None = None
    adam_eps: Annotated[float, Field(gt=0.0, le=1.0)]
    window: Steps
    check_every: Steps
    max_steps: Steps
    checkpoint_every: Annotated[int, Field(ge=0)] = 0
    diverge_factor: Annotated[float, Field(gt=1.0)] = 100.0

    def lr_for(self, n_s: int) -> float:
        """The learning rate for n_s features: ``lr`` if set, else lr_scale / sqrt(n_s)."""
        return self.lr if self.lr is not None else self.lr_scale / math.sqrt(n_s)


class GridPoint(_Strict):
    """One named (p, ratio) point of a trained grid: every seed and model trained there. The
    values match the grid's within 0.1% (so linspace points can be written rounded)."""

    p: Probability
    ratio: Ratio


#: Which trained weights a grid keeps on disk: all, none, or those of the named points.
KeepWeights = Literal["all", "none"] | list[GridPoint]
#: Most models one trained grid of one n_s may hold.
MAX_GRID_MODELS = 10**5


def _near(a: float, b: float) -> bool:
    """Whether two grid values are one: within 0.1% of each other."""
    return math.isclose(a, b, rel_tol=1e-3)


def _on_grid(value: float, values: list[float]) -> float | None:
    """The grid value :func:`_near` ``value``, else None."""
    return next((v for v in values if _near(v, value)), None)


class GridOf(_Strict):
    """The trained grid of one n_s, every value resolved (:meth:`Grid.at`)."""

    n_s: int
    p: list[float]
    ratio: list[float]
    seeds: int
    models: list[str]
    keep_weights: KeepWeights

    def models_count(self) -> int:
        """Models trained at this n_s: p × ratio × seeds × models."""
        return len(self.p) * len(self.ratio) * self.seeds * len(self.models)

    def keeps(self, p: float, ratio: float) -> bool:
        """Whether the weights of the models at grid point (p, ratio) are kept."""
        if isinstance(self.keep_weights, str):
            return self.keep_weights == "all"
        return any(_near(pt.p, p) and _near(pt.ratio, ratio) for pt in self.keep_weights)


class GridAt(_Strict):
    """What differs from ``grid`` at one of its n_s (an entry of ``grid.by_n_s``): any of p,
    ratio, seeds and keep_weights; the keys left out are the grid's. A p or ratio within 0.1% of
    one of the grid's is that value, so a subset of a linspace grid can be written rounded and
    its cells still meet those of the other n_s."""

    n_s: int
    p: list[float] | Linspace | None = None
    ratio: list[float] | Linspace | None = None
    seeds: Count | None = None
    keep_weights: KeepWeights | None = None

    _p = field_validator("p")(lambda v: v if v is None else _check_unit_interval("p", v))
    _r = field_validator("ratio")(lambda v: v if v is None else _check_unit_interval("ratio", v))


class Grid(_Strict):
    """The trained (p, ratio) grid, one DVC stage per n_s.

    ``keep_weights``: which trained weights are written (all, none, or a list of {p, ratio}
    grid points); the statistics of every model are computed either way, in the training
    stage. ``by_n_s``: per-n_s changes of p, ratio, seeds or keep_weights (:class:`GridAt`),
    e.g. a smaller grid at the largest n_s."""

    n_s: Annotated[list[Annotated[int, Field(ge=2, le=2**16)]], Field(min_length=1), Unique]
    p: list[float] | Linspace
    ratio: list[float] | Linspace
    seeds: Count
    models: Annotated[list[Literal["relu", "linear"]], Field(min_length=1), Unique]
    keep_weights: KeepWeights = "all"
    by_n_s: list[GridAt] = []

    _p = field_validator("p")(lambda v: _check_unit_interval("p", v))
    _r = field_validator("ratio")(lambda v: _check_unit_interval("ratio", v))

    @model_validator(mode="after")
    def _every_n_s_sound(self):
        named = [at.n_s for at in self.by_n_s]
        for k, n_s in enumerate(named):
            if n_s not in self.n_s or n_s in named[:k]:
                raise ValueError(f"by_n_s = {named}: each n_s must be one of n_s = {self.n_s}, "
                                 f"named once")
        for n_s in self.n_s:
            grid = self.at(n_s)
            here = f"by_n_s = {named}: at n_s = {n_s}, " if n_s in named else ""
            for key in ("p", "ratio"):
                values = getattr(grid, key)
                ordered = sorted(values)      # a pair within 0.1% has neighbours within 0.1%
                if any(_near(v, w) for v, w in zip(ordered, ordered[1:])):
                    raise ValueError(
                        f"{here}{key} = {[float(f'{v:.6g}') for v in values]}"
                        f"{'' if here else f' at n_s = {n_s}'}: "
                        f"values within 0.1% of each other (or of the grid's) are one value; "
                        f"give each once (a repeated grid point would be trained and counted "
                        f"twice)")
            if grid.models_count() > MAX_GRID_MODELS:
                raise ValueError(f"{here or f'seeds = {self.seeds}: '}p × ratio × seeds × models "
                                 f"= {grid.models_count()} models at n_s = {n_s}; at most "
                                 f"{MAX_GRID_MODELS} (the authors' grid has 400)")
            for pt in [] if isinstance(grid.keep_weights, str) else grid.keep_weights:
                if _on_grid(pt.p, grid.p) is None or _on_grid(pt.ratio, grid.ratio) is None:
                    raise ValueError(
                        f"{here or 'keep_weights = ...: '}the point p = {pt.p}, ratio = "
                        f"{pt.ratio} of keep_weights is not on the grid of n_s = {n_s} (p: "
                        f"{[float(f'{v:.4g}') for v in grid.p]}; ratio: "
                        f"{[float(f'{v:.4g}') for v in grid.ratio]})")
        return self

    def at(self, n_s: int) -> GridOf:
        """The grid trained at ``n_s``: this grid with its ``by_n_s`` entry for n_s applied.
        Raises ValueError if n_s is not one of the grid's."""
        if n_s not in self.n_s:
            raise ValueError(f"n_s = {n_s} is not one of grid.n_s = {self.n_s}")
        at = next((g for g in self.by_n_s if g.n_s == n_s), GridAt(n_s=n_s))
        pick = lambda key: getattr(self, key) if getattr(at, key) is None else getattr(at, key)  # noqa: E731

        def snapped(key: str) -> list[float]:
            base = _expand(getattr(self, key))
            return [_on_grid(v, base) or v for v in _expand(pick(key))]

        return GridOf(n_s=n_s, p=snapped("p"), ratio=snapped("ratio"), seeds=pick("seeds"),
                      models=list(self.models), keep_weights=pick("keep_weights"))


class Fig1(_Strict):
    """Fig. 1: the Persian rug matrix W."""

    n_s: int
    n_d: PositiveInt
    seed: Seed

    _n = field_validator("n_s")(_power_of_two(2**13))

    @model_validator(mode="after")
    def _fits(self):
        if self.n_d > self.n_s:
            raise ValueError(f"n_d = {self.n_d} must be <= n_s = {self.n_s}")
        return self


class Fig2(_Strict):
    """Fig. 2: the trained grid drawn (its n_s) and the p values whose loss curves are drawn
    (for trained models, the nearest grid p is used)."""

    n_s: Annotated[int, Field(ge=2)]
    p: Annotated[list[Probability], Field(min_length=1), Unique]


class Fig3(_Strict):
    """Fig. 3: one trained model, its W block and bias (paper: n_s 512, n_d 130, p 0.044).

    ``lr`` and ``max_steps`` override the train section's for this model when set."""

    n_s: Annotated[int, Field(ge=2, le=2**16)]
    n_d: PositiveInt
    p: Probability
    seeds: Count
    block: PositiveInt
    lr: Annotated[float, Field(gt=0.0)] | None = None
    max_steps: Steps | None = None

    @model_validator(mode="after")
    def _fits(self):
        if self.n_d > self.n_s:
            raise ValueError(f"n_d = {self.n_d} must be <= n_s = {self.n_s}")
        if self.block > self.n_s:
            raise ValueError(f"block = {self.block} must be <= n_s = {self.n_s} (the W block "
                             f"drawn is block × block)")
        return self


class Rug(_Strict):
    """The Persian rug model of fig. 2: Hadamard rows, a and b fitted per (p, ratio)."""

    n_s: int
    ratio: list[float] | Linspace
    seed: Seed
    fit_seed: Seed
    n_fit: Annotated[int, Field(ge=1, le=2**20)]

    _n = field_validator("n_s")(_power_of_two(2**15))
    _r = field_validator("ratio")(lambda v: _check_unit_interval("ratio", v))

    @model_validator(mode="after")
    def _fits(self):
        if self.n_fit * self.n_s > 2**27:
            raise ValueError(f"n_fit = {self.n_fit}: n_fit · n_s = {self.n_fit * self.n_s:.3g} fit "
                             f"pairs, held in float64 several times over; at most 2^27")
        return self

    def ratio_values(self) -> list[float]:
        return _expand(self.ratio)


class Theory(_Strict):
    """Thermodynamic-limit curves (section 4): ratio points of the smooth curves."""

    ratio: list[float] | Linspace

    _r = field_validator("ratio")(lambda v: _check_unit_interval("ratio", v))

    def ratio_values(self) -> list[float]:
        return _expand(self.ratio)


class Arithmetic(_Strict):
    """``compute`` of the incidental polysemanticity and notes sections. precision: the
    arithmetic of the training products, fp32 (the authors'), tf32 (CUDA only) or bf16
    (tms.engine.precision); unlike the other compute keys, it changes the numbers."""

    precision: Precision = "fp32"


class Compute(Arithmetic):
    """How the trained grids are computed (on the CPU path never what they are: the numbers
    are the same bytes; on the GPU path the same up to rounding), and the arithmetic of their
    products, ``precision`` (:class:`Arithmetic`: it does change them).

    memory_budget_mb: the most memory (MiB) one stack of models being trained may take; a
    grid that needs more is trained chunk after chunk (tms.engine.train.plan_chunks), with the same
    results. executor: ``local`` trains the chunks in this process one after another; ``ray``
    sends them to Ray tasks (one GPU each when the device is CUDA) on the cluster named by
    ``ray_address``, else ``RAY_ADDRESS`` in the environment, else a local Ray instance.
    """

    memory_budget_mb: Annotated[float, Field(gt=0.0)] = 4096.0
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None


class Scaling(_Strict):
    """Section 4.3 and appendix D: bounds drawn on the grid theory_p × theory_ratio, power-law
    fits on the points with p/ratio ≤ max_p_over_r (the regime p/r ≪ 1), the paper's form
    L ∝ p²/r only where also ratio ≤ small_r (its r ≪ 1), bootstrap intervals."""

    max_p_over_r: Annotated[float, Field(gt=0.0, le=1.0)]
    small_r: Annotated[float, Field(gt=0.0, le=1.0)]
    theory_p: Annotated[list[Annotated[float, Field(gt=0.0, lt=1.0)]], Field(min_length=2), Unique]
    theory_ratio: list[float] | Linspace
    n_boot: Annotated[int, Field(ge=100, le=10**5)]
    seed: Seed

    _r = field_validator("theory_ratio")(lambda v: _check_unit_interval("ratio", v))

    def ratio_values(self) -> list[float]:
        return _expand(self.theory_ratio)


class PersianRug(_Strict):
    """Everything the Persian Rug paper's stages read."""

    device: DeviceName
    compute: Compute = Compute()
    eval: Eval
    train: Train
    grid: Grid
    fig1: Fig1
    fig2: Fig2
    fig3: Fig3
    rug: Rug
    theory: Theory
    scaling: Scaling

    @model_validator(mode="after")
    def _fig2_grid_exists(self):
        if self.fig2.n_s not in self.grid.n_s:
            raise ValueError(f"fig2.n_s = {self.fig2.n_s} must be one of grid.n_s = {self.grid.n_s}")
        return self

    @model_validator(mode="after")
    def _eval_in_reach(self):
        work = self.eval.n_vectors * max(self.grid.n_s + [self.fig3.n_s, self.rug.n_s])
        if work > 2**33:
            raise ValueError(f"eval.n_vectors = {self.eval.n_vectors}: times the largest n_s, "
                             f"{work:.3g} values to score per model; at most 2^33 (hours of "
                             f"scoring)")
        return self


# Notes on toy autoencoding (section autoencoding_notes). The notes' symbols: D = n_s features,
# d = n_d hidden units, sparsity S = 1 − p.

Sparsity = Annotated[float, Field(ge=0.0, lt=1.0)]
Features = Annotated[int, Field(ge=2, le=4096)]


class Geomspace(_Strict):
    """``numpy.geomspace(start, stop, num)``: a log-spaced grid of positive values."""

    start: Annotated[float, Field(gt=0.0)]
    stop: Annotated[float, Field(gt=0.0)]
    num: GridSize

    def values(self) -> list[float]:
        return [float(v) for v in np.geomspace(self.start, self.stop, self.num)]


def _increasing(name: str, values: list[int]) -> list[int]:
    if any(b <= a for a, b in zip(values, values[1:])):
        raise ValueError(f"{name} must be strictly increasing, got {values}")
    return values


def _hidden_below_features(D: int, d_values: list[int]) -> None:
    bad = [d for d in d_values if d >= D]
    if bad:
        raise ValueError(f"d = {bad[0]} must be < D = {D} (the hidden layer is the smaller one)")


class NotesSampling(_Strict):
    """Monte Carlo on the grid S × D; grid point k draws with seed + k."""

    S: Annotated[list[Sparsity], Field(min_length=1), Unique]
    D: Annotated[list[Features], Field(min_length=1), Unique]
    n_vectors: Annotated[int, Field(ge=1000, le=10**8)]
    seed: Seed

    @model_validator(mode="after")
    def _fits(self):
        floats = self.n_vectors * max(self.D)
        if floats > 2**28:
            raise ValueError(f"n_vectors = {self.n_vectors}: n_vectors · max(D) = {floats:.3g} "
                             f"values drawn at once; at most 2^28 (1 GiB of float32)")
        return self


class NotesTrain(_Strict):
    """Adam and the stopping rule of the engine runs (tms.engine.train); model k uses seed + k;
    ``diverge_factor`` as in :class:`Train`."""

    seed: Seed
    batch_size: Batch
    lr: Annotated[float, Field(gt=0.0)]
    adam_eps: Annotated[float, Field(gt=0.0, le=1.0)]
    window: Steps
    check_every: Steps
    diverge_factor: Annotated[float, Field(gt=1.0)] = 100.0


class NotesLinear(_Strict):
    """Proposition 1 / Corollary 2: bias-free linear autoencoders x ↦ ABx on the grid d × S,
    on the sparse data and on it scaled by distinct factors; one run per step cap in ``steps``."""

    D: Features
    d: Annotated[list[PositiveInt], Field(min_length=1), Unique]
    S: Annotated[list[Sparsity], Field(min_length=1), Unique]
    steps: Annotated[list[Steps], Field(min_length=1)]
    train: NotesTrain

    _s = field_validator("steps")(lambda v: _increasing("steps", v))

    @model_validator(mode="after")
    def _fits(self):
        _hidden_below_features(self.D, self.d)
        return self


class NotesSaddle(_Strict):
    """Proposition 3 on the scaled sparse data (distinct eigenvalues): every critical point of a
    size-d index set, and the proof's perturbation of the one of I (1-based) for each ε."""

    D: Features
    d: PositiveInt
    S: Sparsity
    I: Annotated[list[PositiveInt], Field(min_length=1)]
    epsilon: Geomspace
    seed: Seed

    @model_validator(mode="after")
    def _fits(self):
        _hidden_below_features(self.D, [self.d])
        if math.comb(self.D, self.d) > 500:
            raise ValueError(f"D = {self.D}, d = {self.d} has {math.comb(self.D, self.d)} index "
                             f"sets; at most 500 (each needs a Hessian)")
        if len(set(self.I)) != self.d or max(self.I) > self.D:
            raise ValueError(f"I = {self.I} must be d = {self.d} distinct indices in 1..{self.D}")
        if sorted(self.I) == list(range(1, self.d + 1)):
            raise ValueError(f"I = {self.I} is the top index set (the minimum, not a saddle)")
        return self


class NotesFlows(_Strict):
    """Eqs. 19–28: gradient identities on T data vectors; the tied flow (eq. 22) against
    gradient descent with step lr on the tied loss up to flow time t_max (recorded at about
    n_t times), from W(0) with N(0, init_std²) entries; eq. 28's energy with Σ = I."""

    D: Features
    d: PositiveInt
    S: Sparsity
    T: Annotated[int, Field(ge=2, le=10**7)]
    init_std: Annotated[float, Field(gt=0.0)]
    t_max: Annotated[float, Field(gt=0.0)]
    lr: Annotated[float, Field(gt=0.0)]
    n_t: Annotated[int, Field(ge=2, le=10**5)]
    seed: Seed

    @model_validator(mode="after")
    def _fits(self):
        _hidden_below_features(self.D, [self.d])
        steps = self.t_max / (4 * self.lr)
        if not 1 <= steps <= 1e6:
            raise ValueError(f"lr = {self.lr}: t_max / (4 lr) = {steps:.3g} gradient steps; from 1 "
                             f"to 1e6 (change lr or t_max)")
        return self


class NotesRelu(_Strict):
    """Section 3: ReLU-output models (with bias) trained by the engine on S, their loss split
    by the number of active features (n_per_stratum vectors per skeleton Q_l)."""

    D: Features
    d: PositiveInt
    S: Annotated[list[Sparsity], Field(min_length=1), Unique]
    seeds: Count
    max_steps: Steps
    train: NotesTrain
    n_per_stratum: Annotated[int, Field(ge=100, le=10**7)]
    strata_seed: Seed

    @model_validator(mode="after")
    def _fits(self):
        _hidden_below_features(self.D, [self.d])
        at_once = self.n_per_stratum * self.D
        if at_once > 2**26:
            raise ValueError(f"n_per_stratum = {self.n_per_stratum}: n_per_stratum · D = "
                             f"{at_once:.3g} values per skeleton, drawn at once; at most 2^26")
        if (self.D + 1) * at_once > 2**31:
            raise ValueError(f"n_per_stratum = {self.n_per_stratum}: (D + 1) skeletons of "
                             f"n_per_stratum · D values = {(self.D + 1) * at_once:.3g}; at most "
                             f"2^31 (hours of sampling)")
        return self


class Notes(_Strict):
    """Everything the stages of the notes on toy autoencoding read. ``scale_min``: the
    distinct-eigenvalue data scales feature i by scale_min^((i − 1)/(D − 1))."""

    device: DeviceName
    compute: Arithmetic = Arithmetic()
    scale_min: Annotated[float, Field(gt=0.0, lt=1.0)]
    eval: Eval
    moments: NotesSampling
    skeletons: NotesSampling
    linear: NotesLinear
    saddle: NotesSaddle
    flows: NotesFlows
    relu: NotesRelu


NonNegative = Annotated[float, Field(ge=0.0)]
PositiveFloat = Annotated[float, Field(gt=0.0)]
NoiseKind = Literal["bipolar", "normal"]
#: n features of a tied model.
IpFeatures = Annotated[int, Field(ge=2, le=4096)]
#: m neurons of a tied model.
Neurons = Annotated[int, Field(ge=2, le=2**16)]


def _records_within(steps: int, record_every: int) -> None:
    if record_every > steps:
        raise ValueError(f"record_every = {record_every} must be <= steps = {steps} (else only "
                         f"the first and last steps are recorded)")


class IpOptimizer(_Strict):
    """Optimiser of a trained experiment (the authors: AdamW lr 1e-3 for fig. 3, SGD lr 0.02 for
    fig. 4). ``weight_decay`` is AdamW's decoupled decay (torch's default 0.01), 0 otherwise."""

    name: Literal["adam", "adamw", "sgd"]
    lr: PositiveFloat
    weight_decay: NonNegative = 0.0

    @model_validator(mode="after")
    def _decay_needs_adamw(self):
        if self.weight_decay > 0 and self.name != "adamw":
            raise ValueError(f"weight_decay = {self.weight_decay} applies to adamw only; "
                             f"set it to 0 for {self.name}")
        return self


def _lam_below_inverse_sqrt_m(lam: float, m: int) -> None:
    bound = 1.0 / math.sqrt(m)
    if lam > bound:
        raise ValueError(f"lam = {lam} must be <= 1/sqrt(m) = {bound:.3g} for m = {m} (section 2: "
                         f"a larger λ makes every weight vanish)")


class IpEuler(_Strict):
    """The direct Euler reference of the sparsification ODE: m weights, λ, time steps dt (≥ 2,
    decreasing, each a multiple of the next, so the convergence order can be read off)."""

    m: Annotated[int, Field(ge=2, le=10**6)]
    lam: PositiveFloat
    dt: Annotated[list[PositiveFloat], Field(min_length=2)]

    @model_validator(mode="after")
    def _lam_not_degenerate(self):
        _lam_below_inverse_sqrt_m(self.lam, self.m)
        return self

    @field_validator("dt")
    @classmethod
    def _nested(cls, v: list[float]) -> list[float]:
        for a, b in zip(v, v[1:]):
            if not (b < a and abs(a / b - round(a / b)) < 1e-9):
                raise ValueError(f"must decrease, each a multiple of the next, got {v}")
        return v


class IpSparsification(_Strict):
    """Figs. 2 and 7: one encoding of m weights, interference off (paper: m 1e5, λ 1e-5,
    W_ik(0) = |N(0, (0.9/√m)²)|)."""

    m: Annotated[list[Annotated[int, Field(ge=2, le=10**7)]], Field(min_length=1), Unique]
    lam: PositiveFloat
    init_std: PositiveFloat
    seed: Seed
    n_times: Annotated[int, Field(ge=10, le=10**5)]
    euler: IpEuler

    @model_validator(mode="after")
    def _lam_not_degenerate(self):
        _lam_below_inverse_sqrt_m(self.lam, max(self.m))
        return self


class IpCollisions(_Strict):
    """Fig. 3: polysemantic neurons against m at fixed n, l1 and no noise (paper: n 256,
    m 256…4096, 16 instances, λ 1e-3, AdamW lr 1e-3, 7500 steps)."""

    n: IpFeatures
    m: Annotated[list[Neurons], Field(min_length=2), Unique]
    instances: Count
    lam: NonNegative
    optimizer: IpOptimizer
    steps: Steps
    seed: Seed
    level: Annotated[float, Field(gt=0.0, lt=1.0)]

    @model_validator(mode="after")
    def _enough_neurons(self):
        if min(self.m) < self.n:
            raise ValueError(f"every m must be >= n = {self.n} (section 2: m >= n), "
                             f"got {min(self.m)}")
        return self


class IpNoise(_Strict):
    """Fig. 4: fourth norms over training under hidden noise, no l1 (paper: n 8, m 16,
    5 instances, SGD lr 0.02, 100k steps, σ 0.07, 0.1, 0.15, bipolar and normal)."""

    n: IpFeatures
    m: Neurons
    instances: Count
    noise: Annotated[list[NoiseKind], Field(min_length=1), Unique]
    sigma: Annotated[list[NonNegative], Field(min_length=1), Unique]
    optimizer: IpOptimizer
    steps: Steps
    record_every: Steps
    seed: Seed

    @model_validator(mode="after")
    def _records(self):
        _records_within(self.steps, self.record_every)
        return self


class IpSweep(_Strict):
    """Fig. 5: final fourth norms after the same step budget, against λ (l1, no noise) and
    against σ (``noise`` kind, no l1), plus unregularised, noiseless baseline instances."""

    n: IpFeatures
    m: Neurons
    instances: Count
    lam: Annotated[list[PositiveFloat], Field(min_length=2), Unique]
    sigma: Annotated[list[PositiveFloat], Field(min_length=2), Unique]
    noise: NoiseKind
    optimizer: IpOptimizer
    steps: Steps
    seed: Seed


class IpSingle(_Strict):
    """Fig. 6: candidate instances under small noise; the first with a stuck encoding is shown
    (paper: σ 0.01 bipolar, 1M steps; settings not in the authors' code)."""

    n: IpFeatures
    m: Neurons
    candidates: Count
    sigma: PositiveFloat
    noise: NoiseKind
    optimizer: IpOptimizer
    steps: Steps
    record_every: Steps
    seed: Seed
    stuck_below: Annotated[float, Field(gt=0.0, le=1.0)]

    @model_validator(mode="after")
    def _records(self):
        _records_within(self.steps, self.record_every)
        return self


class IpChecks(_Strict):
    """Monte Carlo and exact checks of the closed forms (section 2.1, appendix C)."""

    n: IpFeatures
    m: Neurons
    sigma: PositiveFloat
    samples: Annotated[int, Field(ge=1000, le=10**8)]
    seed: Seed
    m_exact: Annotated[int, Field(ge=2, le=6)]


class Incidental(_Strict):
    """Everything the *Incidental polysemanticity* stages read (n features ↔ n_s, m neurons ↔
    the hidden width n_d)."""

    device: DeviceName
    compute: Arithmetic = Arithmetic()
    sparsification: IpSparsification
    collisions: IpCollisions
    noise: IpNoise
    sweep: IpSweep
    single: IpSingle
    single_printed: IpSingle   # fig. 6 at the paper's printed σ, its own run and artefact
    checks: IpChecks


class Params(_Strict):
    """The whole params file: one section per paper."""

    persian_rug: PersianRug
    incidental_polysemanticity: Incidental
    autoencoding_notes: Notes


def _section_keys(loc: list[str]) -> list[str]:
    """The keys the schema allows in the section holding ``loc`` (a dotted path, as parts)."""
    model: type[BaseModel] = Params
    for part in [p for p in loc[:-1] if not p.isdigit()]:     # digits: an item of a list
        field = model.model_fields.get(part)
        if field is None:
            return []
        candidates = [field.annotation]
        while candidates:                  # unwrap Annotated / Optional / unions to a section
            t = candidates.pop()
            if isinstance(t, type) and issubclass(t, BaseModel):
                model = t
                break
            candidates += [a for a in typing.get_args(t) if a is not type(None)]
        else:
            return []
    return list(model.model_fields)


def _offending_key(key: str, value: object, msg: str) -> tuple[str, object]:
    """A rule checked on a whole section whose message starts ``name = ...`` (name a dotted key
    of that section) is reported at that key, with its value; else ``(key, value)``."""
    match = re.match(r"([\w.]+) = ", msg)
    node = value
    for part in match.group(1).split(".") if match else []:
        if not isinstance(node, dict) or part not in node:
            return key, value
        node = node[part]
    return (f"{key}.{match.group(1)}", node) if match else (key, value)


def _format(err: ValidationError, source: str, raw: dict) -> str:
    lines = [f"{source}: invalid parameters"]
    for e in err.errors():
        loc = [str(x) for x in e["loc"]
               if not str(x).startswith(("function-after", "list[", "Linspace", "literal["))]
        key = ".".join(loc)
        if e["type"] == "extra_forbidden":
            allowed = _section_keys(loc)
            close = difflib.get_close_matches(loc[-1], allowed, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            lines.append(f"  {key}: unknown key (value {e['input']!r}); {hint}allowed keys here: "
                         f"{', '.join(allowed)}")
        elif e["type"] == "missing":
            lines.append(f"  {key}: missing; this key is required")
        else:
            msg = e["msg"].removeprefix("Value error, ")
            key, value = _offending_key(key, e["input"], msg)
            lines.append(f"  {key} = {value!r}: {msg}")
    return "\n".join(lines)


def parse(raw: object, source: str = "params") -> Params:
    """Validate an already-loaded params mapping. Raises ParamsError naming key and value."""
    if not isinstance(raw, dict):
        raise ParamsError(f"{source}: the top level must be a mapping of sections, got {raw!r}")
    try:
        return Params.model_validate(raw)
    except ValidationError as err:
        raise ParamsError(_format(err, source, raw)) from None


class _Loader(yaml.SafeLoader):
    """YAML for params files: no aliases (``*name``: nothing needs them, and nested ones can
    expand to billions of nodes) and no key given twice in one mapping (YAML keeps the last
    silently)."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.MarkedYAMLError(None, None, "aliases (*name) are not allowed in a params "
                                       "file; write the value out", self.peek_event().start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):         # left to SafeLoader's own error
                continue
            if key in seen:
                raise yaml.MarkedYAMLError(None, None, f"key {key!r} is given twice in this "
                                           f"mapping; give it once", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def parse_yaml(text: str, source: str) -> object:
    """The content of params YAML ``text``. Raises ParamsError naming ``source`` for invalid
    YAML, an alias or a key given twice."""
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as err:
        raise ParamsError(f"{source}: not a valid params file: {err}") from None


def read_yaml(path: str | os.PathLike) -> object:
    """The content of a params YAML file (or a profile overlay), by :func:`parse_yaml`. Raises
    ParamsError naming the file for bytes that are not UTF-8 text, or as :func:`parse_yaml`."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ParamsError(f"{path}: not UTF-8 text (byte {err.start}: "
                          f"{err.object[err.start:err.start + 1]!r}); save it as UTF-8") from None
    return parse_yaml(text, str(path))


def load(path: str | os.PathLike = "params.yaml") -> Params:
    """Read and validate a params file (:func:`read_yaml`, :func:`parse`). Raises ParamsError
    (bad content) or FileNotFoundError."""
    return parse(read_yaml(path), str(Path(path)))


def schedule_warnings(key: str, train: Train | NotesTrain, max_steps: int) -> list[str]:
    """What makes the stopping rule or the divergence check of a training run idle: checks
    every ``check_every`` steps, never within ``max_steps``; the rule compares two windows, so
    needs more than 2·``window`` steps. ``key``: the dotted key of the train section. One line
    per finding, for the stage to print (the run is valid, but likely not what was meant)."""
    out = []
    if train.check_every > max_steps:
        out.append(f"{key}.check_every = {train.check_every} > max_steps = {max_steps}: neither "
                   f"the stopping rule nor the divergence check runs before the step cap")
    elif 2 * train.window >= max_steps:
        out.append(f"{key}.window = {train.window}: the stopping rule needs more than 2·window = "
                   f"{2 * train.window} steps, max_steps = {max_steps}: every model runs to the "
                   f"step cap")
    return out


def resolve_device(name: str, key: str = "device") -> str:
    """The torch device for a params ``device`` value; ``TMS_DEVICE`` in the environment wins.

    'auto' means CUDA when available, else CPU. Raises ParamsError (before any work), naming
    ``key``, if the name is not auto, cpu, cuda or cuda:N, if CUDA is named but absent, or if
    cuda:N names a GPU this machine does not have.
    """
    name = os.environ.get("TMS_DEVICE", name)
    if re.fullmatch(DEVICE_PATTERN, name) is None:
        raise ParamsError(f"{key} = {name!r}: must be 'auto', 'cpu', 'cuda' or 'cuda:N'")
    if name == "cpu":
        return name                 # without importing torch: stages with no model start fast
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ParamsError(f"{key} = {name!r}: CUDA is not available on this machine; "
                          f"use 'cpu' or 'auto'")
    count = torch.cuda.device_count() if name.startswith("cuda:") else 0
    if name.startswith("cuda:") and int(name[5:]) >= count:
        raise ParamsError(f"{key} = {name!r}: this machine has {count} CUDA device(s), "
                          f"cuda:0 to cuda:{count - 1}; use one of them, 'cuda' or 'auto'")
    return name


def check_devices(params: Params) -> list[str]:
    """Resolve the ``device`` of every section on this machine (:func:`resolve_device`), so a
    device that does not exist stops a stage at validation time. Returns one line per section
    whose device is 'auto' (after ``TMS_DEVICE``), saying which device it chose and why, for the
    caller to print. Raises ParamsError."""
    said = []
    for section in type(params).model_fields:
        key = f"{section}.device"
        chosen = resolve_device(getattr(params, section).device, key)
        precision = getattr(params, section).compute.precision
        if precision == "tf32" and not chosen.startswith("cuda"):
            raise ParamsError(f"{section}.compute.precision = 'tf32': needs CUDA, and {key} is "
                              f"{chosen} here; use 'fp32' or 'bf16'")
        if os.environ.get("TMS_DEVICE", getattr(params, section).device) == "auto":
            said.append(f"{key} = 'auto': {chosen} ({_why(chosen)})")
    return said


def _why(device: str) -> str:
    import torch

    if device == "cpu":
        return "CUDA is not available to this torch build or machine"
    return f"{torch.cuda.get_device_name(device)}, {torch.cuda.device_count()} CUDA device(s)"
