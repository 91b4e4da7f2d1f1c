"""Rates measured on the machine at hand, for forecasts made before a run (``make forecast``).

A training stage's time is its steps times the time of one step at its shapes; the time of a
step is measured here by running the stage's own training code for two small step counts and
dividing the difference by the steps between them, so that what does not grow with the steps
(building the stack, drawing the initial weights, scoring) cancels out.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def seconds_per_step(run: Callable[[int], object], first: int = 2, more: int = 8,
                     repeats: int = 2, min_seconds: float = 0.3, rounds: int = 5) -> float:
    """Seconds per step of ``run(steps)`` (which trains for ``steps`` steps): (the least time of
    ``first + more`` steps − the least time of ``first`` steps, each over ``repeats`` tries) /
    ``more``, never below 0; ``more`` grows 4× (at most ``rounds`` times) until the difference
    is at least ``min_seconds``, so that a fast step is not lost in the timer's noise. Raises
    ValueError unless ``first``, ``more``, ``repeats`` and ``rounds`` are ≥ 1."""
    if min(first, more, repeats, rounds) < 1:
        raise ValueError(f"first, more, repeats and rounds must be ≥ 1, got {first}, {more}, "
                         f"{repeats}, {rounds}")

    def least(steps: int) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            run(steps)
            times.append(time.perf_counter() - start)
        return min(times)

    short = least(first)
    for k in range(rounds):
        extra = least(first + more) - short
        if extra >= min_seconds or k == rounds - 1:
            break
        more *= 4
    return max(extra, 0.0) / more


def stage_row(stage: str, models: int, steps: int, per_step: float) -> dict:
    """A forecast row of a stage whose models all run ``steps`` steps at ``per_step`` seconds a
    step (:func:`seconds_per_step`): stage, models, steps, ms_per_step and minutes."""
    return {"stage": stage, "models": models, "steps": steps, "ms_per_step": 1e3 * per_step,
            "minutes": per_step * steps / 60}
