"""The params schema of the Persian Rug paper: section ``persian_rug`` of params.yaml."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from tms.core import papers
from tms.core.params_file import Section
from tms.core.schema import (
    Batch,
    Compute,
    Count,
    DeviceName,
    Eval,
    Linspace,
    PositiveInt,
    Probability,
    Ratio,
    Seed,
    Steps,
    Strict,
    Unique,
    at_most,
    check_unit_interval,
    expand,
    listed,
    power_of_two,
)

#: This paper's section of params.yaml (its key in the registry, tms.core.papers).
KEY = papers.of_package(__name__).key


class Train(Strict):
    """Optimiser and stopping rule
    (docs/paper-gaps.md: Adam, lr = 3e-3/sqrt(n_s), eps 1e-7, batch 1024).

    ``checkpoint_every``: steps between checkpoints of each training stack (tms.engine.checkpoint),
    0 = off; a killed stage resumes from its last checkpoint with identical results.
    ``diverge_factor``: a model whose minibatch loss exceeds this factor times its loss scale
    (the largest of its first minibatch loss and the zero output's losses,
    tms.engine.train.loss_scale), or is NaN/inf, is flagged diverged and leaves its stack
    (tms.engine.train.diverged)."""

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


#: The smallest feature probability the sampler draws faithfully: it compares a float32 uniform,
#: a multiple of 2^-24, with p (tms.engine.sampler), so the rate it draws is ceil(p · 2^24) / 2^24;
#: at 100 · 2^-24 (6e-6) that is within 1% of p. The papers' smallest p is 0.001.
MIN_P = 100 * 2**-24


def _faithful(p: float) -> float:
    """A params validator: ``p`` unchanged if the sampler draws it faithfully (at least
    :data:`MIN_P`). Raises ValueError naming the value."""
    if p < MIN_P:
        raise ValueError(f"{p!r} is below {MIN_P:.3g} = 100 · 2^-24, the smallest p the sampler "
                         f"draws within 1% (it compares float32 uniforms with p)")
    return p


#: A feature probability of the trained models (what the sampler draws).
SampledP = Annotated[Probability, AfterValidator(_faithful)]


def _sampled(grid: list[float] | Linspace) -> list[float] | Linspace:
    """A params validator: a grid of p (tms.core.schema.check_unit_interval) whose values the
    sampler draws faithfully (:func:`_faithful`). Raises ValueError naming the value."""
    check_unit_interval("p", grid)
    for p in expand(grid):
        _faithful(p)
    return grid


class GridPoint(Strict):
    """One named (p, ratio) point of a trained grid: every seed and model trained there. The
    values match the grid's within 0.1% (so linspace points can be written rounded)."""

    p: SampledP
    ratio: Ratio


#: Which trained weights a grid keeps on disk: all, none, or those of the named points.
KeepWeights = Literal["all", "none"] | Annotated[list[GridPoint], listed()]
#: Most (p, ratio) points of a theory curve (fig2.p × theory.ratio; scaling.theory_p ×
#: scaling.theory_ratio): about 2 ms each on a CPU core.
MAX_THEORY_POINTS = 10**5
#: Most values the rug stage samples (n_d values × p values × (n_fit + n_vectors) × n_s).
MAX_RUG_WORK = 2**40
#: Most models one trained grid of one n_s may hold.
MAX_GRID_MODELS = 10**5


def n_d_of(n_s: int, ratio: float) -> int:
    """Hidden width for a ratio: max(1, int(n_s · ratio)) (docs/paper-gaps.md)."""
    return max(1, int(n_s * ratio))


def _near(a: float, b: float) -> bool:
    """Whether two grid values are one: within 0.1% of each other."""
    return math.isclose(a, b, rel_tol=1e-3)


def _on_grid(value: float, values: list[float]) -> float | None:
    """The grid value :func:`_near` ``value``, else None."""
    return next((v for v in values if _near(v, value)), None)


class GridOf(Strict):
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


class GridAt(Strict):
    """What differs from ``grid`` at one of its n_s (an entry of ``grid.by_n_s``): any of p,
    ratio, seeds and keep_weights; the keys left out are the grid's. A p or ratio within 0.1% of
    one of the grid's is that value, so a subset of a linspace grid can be written rounded and
    its cells still meet those of the other n_s."""

    n_s: int
    p: list[float] | Linspace | None = None
    ratio: list[float] | Linspace | None = None
    seeds: Count | None = None
    keep_weights: KeepWeights | None = None

    _p = field_validator("p")(lambda v: v if v is None else _sampled(v))
    _r = field_validator("ratio")(lambda v: v if v is None else check_unit_interval("ratio", v))


class Grid(Strict):
    """The trained (p, ratio) grid, one DVC stage per n_s.

    ``keep_weights``: which trained weights are written (all, none, or a list of {p, ratio}
    grid points); the statistics of every model are computed either way, in the training
    stage. ``by_n_s``: per-n_s changes of p, ratio, seeds or keep_weights (:class:`GridAt`),
    e.g. a smaller grid at the largest n_s."""

    n_s: Annotated[list[Annotated[int, Field(ge=2, le=2**16)]], listed(), Unique]
    p: list[float] | Linspace
    ratio: list[float] | Linspace
    seeds: Count
    models: Annotated[list[Literal["relu", "linear"]], listed(), Unique]
    keep_weights: KeepWeights = "all"
    by_n_s: Annotated[list[GridAt], listed(0)] = []

    _p = field_validator("p")(_sampled)
    _r = field_validator("ratio")(lambda v: check_unit_interval("ratio", v))

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
            n_d = [n_d_of(n_s, r) for r in grid.ratio]
            same = next(((r, q) for k, r in enumerate(grid.ratio) for j, q in enumerate(grid.ratio)
                         if j > k and n_d[k] == n_d[j]), None)
            if same:
                raise ValueError(
                    f"{here}ratio = {[float(f'{v:.6g}') for v in grid.ratio]}"
                    f"{'' if here else f' at n_s = {n_s}'}: ratios {same[0]:g} and {same[1]:g} "
                    f"give the same n_d = {n_d_of(n_s, same[0])} (max(1, int(n_s · ratio))), so "
                    f"their models would be one grid point trained and counted twice; give "
                    f"ratios at least 1/n_s = {1 / n_s:.3g} apart")
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
            base = expand(getattr(self, key))
            return [_on_grid(v, base) or v for v in expand(pick(key))]

        return GridOf(n_s=n_s, p=snapped("p"), ratio=snapped("ratio"), seeds=pick("seeds"),
                      models=list(self.models), keep_weights=pick("keep_weights"))


class Fig1(Strict):
    """Fig. 1: the Persian rug matrix W."""

    n_s: int
    n_d: PositiveInt
    seed: Seed

    _n = field_validator("n_s")(power_of_two(2**13))

    @model_validator(mode="after")
    def _fits(self):
        if self.n_d > self.n_s:
            raise ValueError(f"n_d = {self.n_d} must be <= n_s = {self.n_s}")
        return self


class Fig2(Strict):
    """Fig. 2: the trained grid drawn (its n_s) and the p values whose loss curves are drawn
    (for trained models, the nearest grid p is used)."""

    n_s: Annotated[int, Field(ge=2)]
    p: Annotated[list[Probability], listed(), Unique]


class Fig3(Strict):
    """Fig. 3: one trained model, its W block and bias (paper: n_s 512, n_d 130, p 0.044).

    ``lr`` and ``max_steps`` override the train section's for this model when set."""

    n_s: Annotated[int, Field(ge=2, le=2**16)]
    n_d: PositiveInt
    p: SampledP
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


class Rug(Strict):
    """The Persian rug model of fig. 2: Hadamard rows, a and b fitted per (p, ratio)."""

    n_s: int
    ratio: list[float] | Linspace
    seed: Seed
    fit_seed: Seed
    n_fit: Annotated[int, Field(ge=1, le=2**20)]

    _n = field_validator("n_s")(power_of_two(2**15))
    _r = field_validator("ratio")(lambda v: check_unit_interval("ratio", v))

    @model_validator(mode="after")
    def _fits(self):
        if self.n_fit * self.n_s > 2**27:
            raise ValueError(f"n_fit = {self.n_fit}: n_fit · n_s = {self.n_fit * self.n_s:.3g} fit "
                             f"pairs, held in float64 several times over; at most 2^27")
        return self

    def ratio_values(self) -> list[float]:
        return expand(self.ratio)


class Theory(Strict):
    """Thermodynamic-limit curves (section 4): ratio points of the smooth curves."""

    ratio: list[float] | Linspace

    _r = field_validator("ratio")(lambda v: check_unit_interval("ratio", v))

    def ratio_values(self) -> list[float]:
        return expand(self.ratio)


class Scaling(Strict):
    """Section 4.3 and appendix D: bounds drawn on the grid theory_p × theory_ratio, power-law
    fits on the points with p/ratio ≤ max_p_over_r (the regime p/r ≪ 1; below 1, where the
    log(r/p) that sets the fits' tolerances is positive), the paper's form L ∝ p²/r only where
    also ratio ≤ small_r (its r ≪ 1), bootstrap intervals."""

    max_p_over_r: Annotated[float, Field(gt=0.0, lt=1.0)]
    small_r: Annotated[float, Field(gt=0.0, le=1.0)]
    theory_p: Annotated[list[Annotated[float, Field(gt=0.0, lt=1.0)]], listed(2), Unique]
    theory_ratio: list[float] | Linspace
    n_boot: Annotated[int, Field(ge=100, le=10**5)]
    seed: Seed

    _r = field_validator("theory_ratio")(lambda v: check_unit_interval("ratio", v))

    @model_validator(mode="after")
    def _in_reach(self):
        at_most("theory_p × theory_ratio", len(self.theory_p) * len(self.ratio_values()),
                MAX_THEORY_POINTS, "points, each an optimisation of the bounds; the paper's grid "
                "has 792")
        return self

    def ratio_values(self) -> list[float]:
        return expand(self.theory_ratio)


class Converge(Strict):
    """The convergence check beyond the stopping rule (tms.persian_rug.converge): at every
    (n_s, p) of the trained grids and of fig. 3, the model the rule stopped last is trained again
    from its own start, ``factor`` times its steps with the rule off, and at least ``min_steps``
    (0: no floor; a model the rule stops on a plateau can leave it long after twice its steps);
    its cells count as converged only if its held-out loss falls by at most ``tolerance`` (a
    fraction of it). With ``capped``, the model retrained is the (n_s, p)'s model with the most
    steps, the step cap's included: cells of capped models then count as converged when that
    check passes (false: only models the rule stopped are retrained, and capped cells never
    count)."""

    factor: Annotated[float, Field(gt=1.0, le=16.0)]
    tolerance: Annotated[float, Field(gt=0.0, lt=1.0)]
    min_steps: Annotated[int, Field(ge=0, le=10**7)] = 0
    capped: bool = False


class PersianRug(Strict):
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
    converge: Converge

    @model_validator(mode="after")
    def _fig2_grid_exists(self):
        if self.fig2.n_s not in self.grid.n_s:
            raise ValueError(f"fig2.n_s = {self.fig2.n_s} must be one of grid.n_s = "
                             f"{self.grid.n_s}")
        return self

    @model_validator(mode="after")
    def _theory_and_rug_in_reach(self):
        at_most("fig2.p × theory.ratio", len(self.fig2.p) * len(self.theory.ratio_values()),
                MAX_THEORY_POINTS, "points, each a quadrature and an optimisation; the paper's "
                "grid has 1,200")
        n_ds = {n_d_of(self.rug.n_s, r) for r in self.rug.ratio_values()}
        at_most("n_d of rug.ratio × fig2.p × (rug.n_fit + eval.n_vectors) × rug.n_s",
                len(n_ds) * len(self.fig2.p) * (self.rug.n_fit + self.eval.n_vectors)
                * self.rug.n_s, MAX_RUG_WORK, "values sampled to fit and score the rugs; the "
                "paper's 7.3e10 take about 10 minutes on two CPU cores")
        return self

    @model_validator(mode="after")
    def _eval_in_reach(self):
        work = self.eval.n_vectors * max(self.grid.n_s + [self.fig3.n_s, self.rug.n_s])
        if work > 2**33:
            raise ValueError(f"eval.n_vectors = {self.eval.n_vectors}: times the largest n_s, "
                             f"{work:.3g} values to score per model; at most 2^33 (hours of "
                             f"scoring)")
        return self


#: This paper's section of params.yaml and its schema: what its stages validate and read.
SECTION = Section(KEY, PersianRug)
