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
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import yaml
from pydantic import (BaseModel, ConfigDict, Field, ValidationError, field_validator,
                      model_validator)


class ParamsError(ValueError):
    """Raised for an invalid params file; the message names key, value and what is allowed."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


Probability = Annotated[float, Field(gt=0.0, le=1.0)]
Ratio = Annotated[float, Field(gt=0.0, le=1.0)]
PositiveInt = Annotated[int, Field(ge=1)]
Seed = Annotated[int, Field(ge=0)]


class Linspace(_Strict):
    """``numpy.linspace(start, stop, num)``, the authors' way of writing a grid."""

    start: float
    stop: float
    num: PositiveInt

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
    return grid


def _power_of_two(n: int) -> int:
    if n < 2 or n & (n - 1):
        raise ValueError(f"must be a power of two >= 2 (a Sylvester Hadamard matrix is needed), "
                         f"got {n}")
    return n


DEVICE_PATTERN = r"auto|cpu|cuda(:\d+)?"
DeviceName = Annotated[str, Field(pattern=f"^({DEVICE_PATTERN})$")]


class Eval(_Strict):
    """The fixed held-out sample every model is scored on."""

    seed: Seed
    n_vectors: Annotated[int, Field(ge=65536)]


class Train(_Strict):
    """Optimiser and stopping rule
    (docs/paper-gaps.md: Adam, lr = 3e-3/sqrt(n_s), eps 1e-7, batch 1024).

    ``checkpoint_every``: steps between checkpoints of each training stack (tms.engine.checkpoint),
    0 = off; a killed stage resumes from its last checkpoint with identical results.
    ``diverge_factor``: a model whose minibatch loss exceeds this factor times its first one
    (or is NaN/inf) is flagged diverged and leaves its stack (tms.engine.train.diverged)."""

    seed: Seed
    batch_size: PositiveInt
    lr_scale: Annotated[float, Field(gt=0.0)]
    lr: Annotated[float, Field(gt=0.0)] | None = None
    adam_eps: Annotated[float, Field(gt=0.0)]
    window: PositiveInt
    check_every: PositiveInt
    max_steps: PositiveInt
    checkpoint_every: Annotated[int, Field(ge=0)] = 0
    diverge_factor: Annotated[float, Field(gt=1.0)] = 100.0

    def lr_for(self, n_s: int) -> float:
        """The learning rate for n_s features: ``lr`` if set, else lr_scale / sqrt(n_s)."""
        return self.lr if self.lr is not None else self.lr_scale / math.sqrt(n_s)


class Grid(_Strict):
    """The trained (p, ratio) grid, one DVC stage per n_s."""

    n_s: Annotated[list[Annotated[int, Field(ge=2)]], Field(min_length=1)]
    p: list[float] | Linspace
    ratio: list[float] | Linspace
    seeds: PositiveInt
    models: Annotated[list[Literal["relu", "linear"]], Field(min_length=1)]

    _p = field_validator("p")(lambda v: _check_unit_interval("p", v))
    _r = field_validator("ratio")(lambda v: _check_unit_interval("ratio", v))

    def p_values(self) -> list[float]:
        return _expand(self.p)

    def ratio_values(self) -> list[float]:
        return _expand(self.ratio)


class Fig1(_Strict):
    """Fig. 1: the Persian rug matrix W."""

    n_s: int
    n_d: PositiveInt
    seed: Seed

    _n = field_validator("n_s")(_power_of_two)

    @model_validator(mode="after")
    def _fits(self):
        if self.n_d > self.n_s:
            raise ValueError(f"n_d = {self.n_d} must be <= n_s = {self.n_s}")
        return self


class Fig2(_Strict):
    """Fig. 2: the trained grid drawn (its n_s) and the p values whose loss curves are drawn
    (for trained models, the nearest grid p is used)."""

    n_s: Annotated[int, Field(ge=2)]
    p: Annotated[list[Probability], Field(min_length=1)]


class Fig3(_Strict):
    """Fig. 3: one trained model, its W block and bias (paper: n_s 512, n_d 130, p 0.044).

    ``lr`` and ``max_steps`` override the train section's for this model when set."""

    n_s: Annotated[int, Field(ge=2)]
    n_d: PositiveInt
    p: Probability
    seeds: PositiveInt
    block: PositiveInt
    lr: Annotated[float, Field(gt=0.0)] | None = None
    max_steps: PositiveInt | None = None

    @model_validator(mode="after")
    def _fits(self):
        if self.n_d > self.n_s:
            raise ValueError(f"n_d = {self.n_d} must be <= n_s = {self.n_s}")
        return self


class Rug(_Strict):
    """The Persian rug model of fig. 2: Hadamard rows, a and b fitted per (p, ratio)."""

    n_s: int
    ratio: list[float] | Linspace
    seed: Seed
    fit_seed: Seed
    n_fit: PositiveInt

    _n = field_validator("n_s")(_power_of_two)
    _r = field_validator("ratio")(lambda v: _check_unit_interval("ratio", v))

    def ratio_values(self) -> list[float]:
        return _expand(self.ratio)


class Theory(_Strict):
    """Thermodynamic-limit curves (section 4): ratio points of the smooth curves."""

    ratio: list[float] | Linspace

    _r = field_validator("ratio")(lambda v: _check_unit_interval("ratio", v))

    def ratio_values(self) -> list[float]:
        return _expand(self.ratio)


class Compute(_Strict):
    """How the trained grids are computed (never what they are: the numbers are the same).

    memory_budget_mb: the most memory (MiB) one stack of models being trained may take; a
    grid that needs more is trained chunk after chunk (tms.engine.train.plan_chunks), with the same
    results. executor: ``local`` trains the chunks in this process one after another; ``ray``
    sends them to Ray tasks (one GPU each when the device is CUDA) on the cluster named by
    ``RAY_ADDRESS`` in the environment, else ``ray_address``, else a local Ray instance.
    """

    memory_budget_mb: Annotated[float, Field(gt=0.0)] = 4096.0
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None


class Scaling(_Strict):
    """Section 4.3 and appendix D: bounds drawn on the grid theory_p × theory_ratio, power-law
    fits on the points with p/ratio ≤ max_p_over_r (the regime p/r ≪ 1), bootstrap intervals."""

    max_p_over_r: Annotated[float, Field(gt=0.0, le=1.0)]
    theory_p: Annotated[list[Annotated[float, Field(gt=0.0, lt=1.0)]], Field(min_length=2)]
    theory_ratio: list[float] | Linspace
    n_boot: Annotated[int, Field(ge=100)]
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


# Notes on toy autoencoding (section autoencoding_notes). The notes' symbols: D = n_s features,
# d = n_d hidden units, sparsity S = 1 − p.

Sparsity = Annotated[float, Field(ge=0.0, lt=1.0)]
Features = Annotated[int, Field(ge=2)]


class Geomspace(_Strict):
    """``numpy.geomspace(start, stop, num)``: a log-spaced grid of positive values."""

    start: Annotated[float, Field(gt=0.0)]
    stop: Annotated[float, Field(gt=0.0)]
    num: PositiveInt

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

    S: Annotated[list[Sparsity], Field(min_length=1)]
    D: Annotated[list[Features], Field(min_length=1)]
    n_vectors: Annotated[int, Field(ge=1000)]
    seed: Seed


class NotesTrain(_Strict):
    """Adam and the stopping rule of the engine runs (tms.engine.train); model k uses seed + k;
    ``diverge_factor`` as in :class:`Train`."""

    seed: Seed
    batch_size: PositiveInt
    lr: Annotated[float, Field(gt=0.0)]
    adam_eps: Annotated[float, Field(gt=0.0)]
    window: PositiveInt
    check_every: PositiveInt
    diverge_factor: Annotated[float, Field(gt=1.0)] = 100.0


class NotesLinear(_Strict):
    """Proposition 1 / Corollary 2: bias-free linear autoencoders x ↦ ABx on the grid d × S,
    on the sparse data and on it scaled by distinct factors; one run per step cap in ``steps``."""

    D: Features
    d: Annotated[list[PositiveInt], Field(min_length=1)]
    S: Annotated[list[Sparsity], Field(min_length=1)]
    steps: Annotated[list[PositiveInt], Field(min_length=1)]
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
    T: Annotated[int, Field(ge=2)]
    init_std: Annotated[float, Field(gt=0.0)]
    t_max: Annotated[float, Field(gt=0.0)]
    lr: Annotated[float, Field(gt=0.0)]
    n_t: Annotated[int, Field(ge=2)]
    seed: Seed

    @model_validator(mode="after")
    def _fits(self):
        _hidden_below_features(self.D, [self.d])
        if self.t_max / (4 * self.lr) > 1e6:
            raise ValueError(f"t_max / (4 lr) = {self.t_max / (4 * self.lr):.3g} gradient steps; "
                             f"at most 1e6 (raise lr or lower t_max)")
        return self


class NotesRelu(_Strict):
    """Section 3: ReLU-output models (with bias) trained by the engine on S, their loss split
    by the number of active features (n_per_stratum vectors per skeleton Q_l)."""

    D: Features
    d: PositiveInt
    S: Annotated[list[Sparsity], Field(min_length=1)]
    seeds: PositiveInt
    max_steps: PositiveInt
    train: NotesTrain
    n_per_stratum: Annotated[int, Field(ge=100)]
    strata_seed: Seed

    @model_validator(mode="after")
    def _fits(self):
        _hidden_below_features(self.D, [self.d])
        return self


class Notes(_Strict):
    """Everything the stages of the notes on toy autoencoding read. ``scale_min``: the
    distinct-eigenvalue data scales feature i by scale_min^((i − 1)/(D − 1))."""

    device: DeviceName
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

    m: Annotated[int, Field(ge=2)]
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

    m: Annotated[list[Annotated[int, Field(ge=2)]], Field(min_length=1)]
    lam: PositiveFloat
    init_std: PositiveFloat
    seed: Seed
    n_times: Annotated[int, Field(ge=10)]
    euler: IpEuler

    @model_validator(mode="after")
    def _lam_not_degenerate(self):
        _lam_below_inverse_sqrt_m(self.lam, max(self.m))
        return self


class IpCollisions(_Strict):
    """Fig. 3: polysemantic neurons against m at fixed n, l1 and no noise (paper: n 256,
    m 256…4096, 16 instances, λ 1e-3, AdamW lr 1e-3, 7500 steps)."""

    n: Annotated[int, Field(ge=2)]
    m: Annotated[list[Annotated[int, Field(ge=2)]], Field(min_length=2)]
    instances: PositiveInt
    lam: NonNegative
    optimizer: IpOptimizer
    steps: PositiveInt
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

    n: Annotated[int, Field(ge=2)]
    m: Annotated[int, Field(ge=2)]
    instances: PositiveInt
    noise: Annotated[list[NoiseKind], Field(min_length=1)]
    sigma: Annotated[list[NonNegative], Field(min_length=1)]
    optimizer: IpOptimizer
    steps: PositiveInt
    record_every: PositiveInt
    seed: Seed


class IpSweep(_Strict):
    """Fig. 5: final fourth norms after the same step budget, against λ (l1, no noise) and
    against σ (``noise`` kind, no l1), plus unregularised, noiseless baseline instances."""

    n: Annotated[int, Field(ge=2)]
    m: Annotated[int, Field(ge=2)]
    instances: PositiveInt
    lam: Annotated[list[PositiveFloat], Field(min_length=2)]
    sigma: Annotated[list[PositiveFloat], Field(min_length=2)]
    noise: NoiseKind
    optimizer: IpOptimizer
    steps: PositiveInt
    seed: Seed


class IpSingle(_Strict):
    """Fig. 6: candidate instances under small noise; the first with a stuck encoding is shown
    (paper: σ 0.01 bipolar, 1M steps; settings not in the authors' code)."""

    n: Annotated[int, Field(ge=2)]
    m: Annotated[int, Field(ge=2)]
    candidates: PositiveInt
    sigma: PositiveFloat
    noise: NoiseKind
    optimizer: IpOptimizer
    steps: PositiveInt
    record_every: PositiveInt
    seed: Seed
    stuck_below: Annotated[float, Field(gt=0.0, le=1.0)]


class IpChecks(_Strict):
    """Monte Carlo and exact checks of the closed forms (section 2.1, appendix C)."""

    n: Annotated[int, Field(ge=2)]
    m: Annotated[int, Field(ge=2)]
    sigma: PositiveFloat
    samples: Annotated[int, Field(ge=1000)]
    seed: Seed
    m_exact: Annotated[int, Field(ge=2, le=6)]


class Incidental(_Strict):
    """Everything the *Incidental polysemanticity* stages read (n features ↔ n_s, m neurons ↔
    the hidden width n_d)."""

    device: DeviceName
    sparsification: IpSparsification
    collisions: IpCollisions
    noise: IpNoise
    sweep: IpSweep
    single: IpSingle
    checks: IpChecks


class Params(_Strict):
    """The whole params file: one section per paper."""

    persian_rug: PersianRug
    incidental_polysemanticity: Incidental
    autoencoding_notes: Notes


def _section_keys(loc: list[str]) -> list[str]:
    """The keys the schema allows in the section holding ``loc`` (a dotted path, as parts)."""
    model: type[BaseModel] = Params
    for part in loc[:-1]:
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
        loc = [str(x) for x in e["loc"] if not str(x).startswith(("function-after", "list[", "Linspace"))]
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


def load(path: str | os.PathLike = "params.yaml") -> Params:
    """Read and validate a params file. Raises ParamsError (bad content) or FileNotFoundError."""
    path = Path(path)
    with path.open() as fh:
        try:
            raw = yaml.safe_load(fh)
        except yaml.YAMLError as err:
            raise ParamsError(f"{path}: not valid YAML: {err}") from None
    return parse(raw, str(path))


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


def check_devices(params: Params) -> None:
    """Resolve the ``device`` of every section on this machine (:func:`resolve_device`), so a
    device that does not exist stops a stage at validation time. Raises ParamsError."""
    for section in type(params).model_fields:
        resolve_device(getattr(params, section).device, f"{section}.device")
