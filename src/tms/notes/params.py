"""The params schema of the notes on toy autoencoding: section ``autoencoding_notes`` of
params.yaml. The notes' symbols: D = n_s features, d = n_d hidden units, sparsity S = 1 − p."""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from tms.core import papers
from tms.core.params_file import Section
from tms.core.schema import (
    Arithmetic,
    Batch,
    Count,
    DeviceName,
    Eval,
    Geomspace,
    PositiveInt,
    Seed,
    Steps,
    Strict,
    Unique,
    at_most,
    listed,
)

#: This paper's section of params.yaml (its key in the registry, tms.core.papers).
KEY = papers.of_package(__name__).key

Sparsity = Annotated[float, Field(ge=0.0, lt=1.0)]
Features = Annotated[int, Field(ge=2, le=4096)]


def _increasing(name: str, values: list[int]) -> list[int]:
    if any(b <= a for a, b in zip(values, values[1:])):
        raise ValueError(f"{name} must be strictly increasing, got {values}")
    return values


def _hidden_below_features(D: int, d_values: list[int]) -> None:
    bad = [d for d in d_values if d >= D]
    if bad:
        raise ValueError(f"d = {bad[0]} must be < D = {D} (the hidden layer is the smaller one)")


class NotesSampling(Strict):
    """Monte Carlo on the grid S × D; grid point k draws with seed + k."""

    S: Annotated[list[Sparsity], listed(), Unique]
    D: Annotated[list[Features], listed(), Unique]
    n_vectors: Annotated[int, Field(ge=1000, le=10**8)]
    seed: Seed

    @model_validator(mode="after")
    def _fits(self):
        blame = f"n_vectors = {self.n_vectors}"
        at_most("n_vectors · max(D)", self.n_vectors * max(self.D), 2**28,
                "values drawn at once: 1 GiB of float32", blame)
        at_most("S × n_vectors · sum(D)", len(self.S) * self.n_vectors * sum(self.D), 2**34,
                "values drawn in all: minutes on a CPU; the paper's skeletons draw 1.2e9", blame)
        return self


class NotesTrain(Strict):
    """Adam and the stopping rule of the engine runs (tms.engine.train); model k uses seed + k;
    ``diverge_factor`` as in :class:`Train`."""

    seed: Seed
    batch_size: Batch
    lr: Annotated[float, Field(gt=0.0)]
    adam_eps: Annotated[float, Field(gt=0.0, le=1.0)]
    window: Steps
    check_every: Steps
    diverge_factor: Annotated[float, Field(gt=1.0)] = 100.0


class NotesLinear(Strict):
    """Proposition 1 / Corollary 2: bias-free linear autoencoders x ↦ ABx on the grid d × S,
    on the sparse data and on it scaled by distinct factors; one run per step cap in ``steps``."""

    D: Features
    d: Annotated[list[PositiveInt], listed(), Unique]
    S: Annotated[list[Sparsity], listed(), Unique]
    steps: Annotated[list[Steps], listed()]
    train: NotesTrain

    _s = field_validator("steps")(lambda v: _increasing("steps", v))

    @model_validator(mode="after")
    def _fits(self):
        _hidden_below_features(self.D, self.d)
        return self


class NotesSaddle(Strict):
    """Proposition 3 on the scaled sparse data (distinct eigenvalues): every critical point of a
    size-d index set, and the proof's perturbation of the one of I (1-based) for each ε."""

    D: Features
    d: PositiveInt
    S: Sparsity
    I: Annotated[list[PositiveInt], listed()]
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


class NotesFlows(Strict):
    """Eqs. 19–28: gradient identities on T data vectors; the tied flow (eq. 22) against
    gradient descent with step lr on the tied loss up to flow time t_max (recorded at about
    n_t times), from W(0) with N(0, init_std²) entries; eq. 28's energy with Σ = I."""

    D: Features
    d: PositiveInt
    S: Sparsity
    T: Annotated[int, Field(ge=2, le=10**7)]
    init_std: Annotated[float, Field(gt=0.0, le=1e3)]     # 1e300 runs for ever
    t_max: Annotated[float, Field(gt=0.0)]
    lr: Annotated[float, Field(gt=0.0)]
    n_t: Annotated[int, Field(ge=2, le=10**5)]
    seed: Seed

    @model_validator(mode="after")
    def _fits(self):
        _hidden_below_features(self.D, [self.d])
        at_most("T · D", self.T * self.D, 2**28, "data values held at once, several copies "
                "with their gradients: 1 GiB of float32 each", f"T = {self.T}")
        steps = self.t_max / (4 * self.lr)
        if not 1 <= steps <= 1e6:
            raise ValueError(f"lr = {self.lr}: t_max / (4 lr) = {steps:.3g} gradient steps; from 1 "
                             f"to 1e6 (change lr or t_max)")
        return self


class NotesRelu(Strict):
    """Section 3: ReLU-output models (with bias) trained by the engine on S, their loss split
    by the number of active features (n_per_stratum vectors per skeleton Q_l)."""

    D: Features
    d: PositiveInt
    S: Annotated[list[Sparsity], listed(), Unique]
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


class Notes(Strict):
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


#: This paper's section of params.yaml and its schema: what its stages validate and read.
SECTION = Section(KEY, Notes)
