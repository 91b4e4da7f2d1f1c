"""The params schema: ``params.yaml`` (and ``profiles/*.yaml``) validated on load.

Every stage calls :func:`load` before doing any work. A wrong type, an out-of-range value,
an unknown or misspelt key or a missing section raises :class:`ParamsError`, whose message
names the key (dotted path), the value and what is allowed.
"""

from __future__ import annotations

import math
import os
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


DeviceName = Annotated[str, Field(pattern=r"^(auto|cpu|cuda(:\d+)?)$")]


class Eval(_Strict):
    """The fixed held-out sample every model is scored on."""

    seed: Seed
    n_vectors: Annotated[int, Field(ge=65536)]


class Train(_Strict):
    """Optimiser and stopping rule (REFERENCE.md: Adam, lr = 3e-3/sqrt(n_s), eps 1e-7, batch 1024)."""

    seed: Seed
    batch_size: PositiveInt
    lr_scale: Annotated[float, Field(gt=0.0)]
    lr: Annotated[float, Field(gt=0.0)] | None = None
    adam_eps: Annotated[float, Field(gt=0.0)]
    window: PositiveInt
    check_every: PositiveInt
    max_steps: PositiveInt

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


class PersianRug(_Strict):
    """Everything the Persian Rug paper's stages read."""

    device: DeviceName
    eval: Eval
    train: Train
    grid: Grid
    fig1: Fig1
    fig2: Fig2
    fig3: Fig3
    rug: Rug
    theory: Theory

    @model_validator(mode="after")
    def _fig2_grid_exists(self):
        if self.fig2.n_s not in self.grid.n_s:
            raise ValueError(f"fig2.n_s = {self.fig2.n_s} must be one of grid.n_s = {self.grid.n_s}")
        return self


class Params(_Strict):
    """The whole params file: one section per paper."""

    persian_rug: PersianRug


def _format(err: ValidationError, source: str, raw: dict) -> str:
    lines = [f"{source}: invalid parameters"]
    for e in err.errors():
        loc = [str(x) for x in e["loc"] if not str(x).startswith(("function-after", "list[", "Linspace"))]
        key = ".".join(loc)
        if e["type"] == "extra_forbidden":
            lines.append(f"  {key}: unknown key (value {e['input']!r}); check the spelling "
                         f"against the allowed keys of this section")
        elif e["type"] == "missing":
            lines.append(f"  {key}: missing; this key is required")
        else:
            msg = e["msg"].removeprefix("Value error, ")
            lines.append(f"  {key} = {e['input']!r}: {msg}")
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


def resolve_device(name: str) -> str:
    """The torch device for a params ``device`` value; ``TMS_DEVICE`` in the environment wins.

    'auto' means CUDA when available, else CPU. Raises ParamsError if CUDA is named but absent.
    """
    import torch

    name = os.environ.get("TMS_DEVICE", name)
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ParamsError(f"device = {name!r}: CUDA is not available on this machine; "
                          f"use 'cpu' or 'auto'")
    return name
