"""The params schema of *Incidental polysemanticity*: section ``incidental_polysemanticity`` of
params.yaml (n features ↔ n_s, m neurons ↔ the hidden width n_d)."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from tms.core import papers
from tms.core.params_file import Section
from tms.core.schema import (
    Arithmetic,
    Count,
    DeviceName,
    Seed,
    Steps,
    Strict,
    Unique,
    at_most,
    listed,
)

#: This paper's section of params.yaml (its key in the registry, tms.core.papers).
KEY = papers.of_package(__name__).key

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


class IpOptimizer(Strict):
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


class IpEuler(Strict):
    """The direct Euler reference of the sparsification ODE: m weights, λ, time steps dt (≥ 2,
    decreasing, each a multiple of the next, so the convergence order can be read off)."""

    m: Annotated[int, Field(ge=2, le=10**6)]
    lam: PositiveFloat
    dt: Annotated[list[PositiveFloat], listed(2)]

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


#: The scale of a random start: bounded, since a start of 1e300 makes the exact solution's
#: integration run for ever (the paper's is 0.9).
InitStd = Annotated[float, Field(gt=0.0, le=1e3)]


class IpSparsification(Strict):
    """Figs. 2 and 7: one encoding of m weights, interference off (paper: m 1e5, λ 1e-5,
    W_ik(0) = |N(0, (0.9/√m)²)|)."""

    m: Annotated[list[Annotated[int, Field(ge=2, le=10**7)]], listed(), Unique]
    lam: PositiveFloat
    init_std: InitStd
    seed: Seed
    n_times: Annotated[int, Field(ge=10, le=10**5)]
    euler: IpEuler

    @model_validator(mode="after")
    def _lam_not_degenerate(self):
        _lam_below_inverse_sqrt_m(self.lam, max(self.m))
        return self


class IpCollisions(Strict):
    """Fig. 3: polysemantic neurons against m at fixed n, l1 and no noise (paper: n 256,
    m 256…4096, 16 instances, λ 1e-3, AdamW lr 1e-3, 7500 steps)."""

    n: IpFeatures
    m: Annotated[list[Neurons], listed(2), Unique]
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


class IpNoise(Strict):
    """Fig. 4: fourth norms over training under hidden noise, no l1 (paper: n 8, m 16,
    5 instances, SGD lr 0.02, 100k steps, σ 0.07, 0.1, 0.15, bipolar and normal)."""

    n: IpFeatures
    m: Neurons
    instances: Count
    noise: Annotated[list[NoiseKind], listed(), Unique]
    sigma: Annotated[list[NonNegative], listed(), Unique]
    optimizer: IpOptimizer
    steps: Steps
    record_every: Steps
    seed: Seed

    @model_validator(mode="after")
    def _records(self):
        _records_within(self.steps, self.record_every)
        return self


class IpSweep(Strict):
    """Fig. 5: final fourth norms after the same step budget, against λ (l1, no noise) and
    against σ (``noise`` kind, no l1), plus unregularised, noiseless baseline instances."""

    n: IpFeatures
    m: Neurons
    instances: Count
    lam: Annotated[list[PositiveFloat], listed(2), Unique]
    sigma: Annotated[list[PositiveFloat], listed(2), Unique]
    noise: NoiseKind
    optimizer: IpOptimizer
    steps: Steps
    seed: Seed


class IpSingle(Strict):
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


class IpChecks(Strict):
    """Monte Carlo and exact checks of the closed forms (section 2.1, appendix C)."""

    n: IpFeatures
    m: Neurons
    sigma: PositiveFloat
    samples: Annotated[int, Field(ge=1000, le=10**8)]
    seed: Seed
    m_exact: Annotated[int, Field(ge=2, le=6)]

    @model_validator(mode="after")
    def _in_reach(self):
        if self.samples < 2 * self.n:
            raise ValueError(f"samples = {self.samples} must be >= 2n = {2 * self.n} (the "
                             f"interference check draws samples // n matrices, at least two)")
        at_most("samples · m", self.samples * self.m, 2**30, "Gaussian values per Monte Carlo "
                "check, several checks: minutes on a CPU; the paper's settings draw 3.2e7",
                f"m = {self.m}")
        at_most("n · m", self.n * self.m, 2**22, "values of one random W of the interference "
                "check, drawn at once: 32 MiB of float64", f"m = {self.m}")
        return self


class Incidental(Strict):
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


#: This paper's section of params.yaml and its schema: what its stages validate and read.
SECTION = Section(KEY, Incidental)
