"""The params schema's shared parts: the constrained types every paper's section is built from,
the error every invalid params file raises, and the stopping-rule warnings.

Each paper owns its section's schema (tms.persian_rug.params, tms.incidental.params,
tms.notes.params); tms.pipeline.params puts them together; tms.core.params_file reads a file.
Bounds on sizes sit far above every profile (the authors' scale included), and below what would
hang a stage or exhaust memory before the stage could say so.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field


class ParamsError(ValueError):
    """Raised for an invalid params file; the message names key, value and what is allowed."""


class Strict(BaseModel):
    """A section of the params file: no unknown key, no type coercion, frozen."""

    # no float may be ±inf or NaN anywhere in the file
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


def unique(values: list) -> list:
    """``values``, checked to be distinct. Raises ValueError naming the repeated value."""
    seen = set()
    for v in values:
        if v in seen:
            raise ValueError(f"{v!r} appears more than once in {values}: give each value once "
                             f"(a repeated grid point would be computed and counted twice)")
        seen.add(v)
    return values


#: A list whose values are distinct.
Unique = AfterValidator(unique)
Probability = Annotated[float, Field(gt=0.0, le=1.0)]
Ratio = Annotated[float, Field(gt=0.0, le=1.0)]
PositiveInt = Annotated[int, Field(ge=1)]
#: Seeds: numpy's range for a seed (instance k of a grid is seeded with seed + k).
Seed = Annotated[int, Field(ge=0, le=2**32 - 1)]
#: Training steps.
Steps = Annotated[int, Field(ge=1, le=10**7)]
#: Seeds, instances, candidates: independent models per grid point or experiment.
Count = Annotated[int, Field(ge=1, le=10**4)]
#: A minibatch.
Batch = Annotated[int, Field(ge=1, le=2**16)]
#: Values one list of params may hold (a grid axis, a list of settings): far above every profile
#: (the authors' longest has 200), far below what would hang a stage.
MAX_VALUES = 1000
#: Points of a linspace / geomspace grid.
GridSize = Annotated[int, Field(ge=1, le=MAX_VALUES)]


def listed(min_length: int = 1):
    """The length bounds of a list of params: ``min_length`` to :data:`MAX_VALUES` values (as
    ``Annotated[list[...], listed(), ...]``)."""
    return Field(min_length=min_length, max_length=MAX_VALUES)


def at_most(what: str, amount: float, cap: float, why: str, blame: str = "") -> None:
    """The bound on one product of sizes, checked with the rest of the params before any work:
    raise ValueError saying ``what`` (the keys multiplied), its ``amount``, the ``cap`` and
    ``why`` the cap (what the product costs), when ``amount`` > ``cap``. ``blame``: ``"key =
    value"`` of the key the message is reported at (its section's, without)."""
    if amount > cap:
        raise ValueError(f"{blame + ': ' if blame else ''}{what} = {amount:.4g}; at most "
                         f"{cap:.4g} ({why})")


class Linspace(Strict):
    """``numpy.linspace(start, stop, num)``, the authors' way of writing a grid."""

    start: float
    stop: float
    num: GridSize

    def values(self) -> list[float]:
        return [float(v) for v in np.linspace(self.start, self.stop, self.num)]


def expand(grid: list[float] | Linspace) -> list[float]:
    """The values of a params grid: a list as given, or a :class:`Linspace` expanded
    (np.linspace(start, stop, num), the form the authors' code uses for p and the ratio)."""
    return grid.values() if isinstance(grid, Linspace) else list(grid)


def check_unit_interval(name: str, grid: list[float] | Linspace) -> list[float] | Linspace:
    """A params validator: ``grid`` unchanged (not expanded) when its values (:func:`expand`)
    are 1 to MAX_VALUES distinct numbers in (0, 1] (a probability p or a ratio n_d/n_s). Raises
    ValueError naming ``name`` for an empty grid, too many values or one outside (0, 1], and
    naming the value for a repeated one (:func:`unique`; the params error names the key)."""
    values = expand(grid)
    if not values:
        raise ValueError(f"{name} grid is empty; give at least one value in (0, 1]")
    if len(values) > MAX_VALUES:
        raise ValueError(f"{name} grid has {len(values)} values; at most {MAX_VALUES}")
    bad = [v for v in values if not (0.0 < v <= 1.0)]
    if bad:
        raise ValueError(f"every {name} must be in (0, 1], got {bad[0]!r}")
    unique(values)
    return grid


def power_of_two(top: int):
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



class Geomspace(Strict):
    """``numpy.geomspace(start, stop, num)``: a log-spaced grid of positive values."""

    start: Annotated[float, Field(gt=0.0)]
    stop: Annotated[float, Field(gt=0.0)]
    num: GridSize

    def values(self) -> list[float]:
        return [float(v) for v in np.geomspace(self.start, self.stop, self.num)]


class Arithmetic(Strict):
    """``compute`` of the incidental polysemanticity and notes sections. precision: the
    arithmetic of the training products, fp32 (the authors'), tf32 (CUDA only) or bf16
    (tms.engine.precision); unlike the other compute keys, it changes the numbers."""

    precision: Precision = "fp32"


class Compute(Arithmetic):
    """How the trained grids are computed (on the CPU path never what they are: the numbers
    are the same bytes; on the GPU path the same up to rounding), and the arithmetic of their
    products, ``precision`` (:class:`Arithmetic`: it does change them).

    memory_budget_mb: the most memory (MiB) one stack of models being trained may take; a
    grid that needs more is trained chunk after chunk (tms.engine.grid.plan_chunks), with the same
    results. executor: ``local`` trains the chunks in this process one after another; ``ray``
    sends them to Ray tasks (one GPU each when the device is CUDA) on the cluster named by
    ``ray_address``, else ``RAY_ADDRESS`` in the environment, else a local Ray instance.
    """

    memory_budget_mb: Annotated[float, Field(gt=0.0)] = 4096.0
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None



def schedule_warnings(key: str, train, max_steps: int) -> list[str]:
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


class Eval(Strict):
    """The fixed held-out sample every model is scored on."""

    seed: Seed
    n_vectors: Annotated[int, Field(ge=65536, le=2**24)]
