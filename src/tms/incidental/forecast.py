"""The predicted cost of a profile's trained incidental polysemanticity models (the stages
ip_collisions, ip_noise, ip_sweep and ip_single) before running them: time and memory, one row
per stage.

- Time: the stage's steps times the seconds of one step **measured on this machine**: the
  stage's own training function (tms.incidental.training) run on the profile's device for two
  small step counts (tms.core.rates.seconds_per_step; what does not grow with the steps
  cancels out), whole (every instance and every m of the stage: the same stacks).
- Memory: the largest stack's (tms.engine.tied.stack_bytes, as the stage checks it).
"""

from __future__ import annotations

import pandas as pd

from tms.core import rates
from tms.core.machine import GiB
from tms.engine.tied import stack_bytes
from tms.incidental import training
from tms.incidental.params import KEY, Incidental

COLUMNS = {
    "stage": "the DVC stage",
    "models": "models trained",
    "steps": "steps each",
    "ms_per_step": "one step of the stage's stacks, measured here (ms)",
    "minutes": "predicted time (min)",
    "memory_gib": "memory of the largest stack (GiB)",
}


def _row(stage: str, cfg, models: int, memory: int, run, more: int = 2000) -> dict:
    """A row of :data:`COLUMNS`: ``run(cfg)`` trains the stage on ``cfg`` (a copy of its params
    section with fewer steps), timed at about 2 and 2 + ``more`` steps (multiples of its record
    interval)."""
    every = getattr(cfg, "record_every", 1)
    first, more = every * -(-2 // every), every * -(-more // every)

    def steps(k: int):
        return run(cfg.model_copy(update={"steps": k}))
    return {**rates.stage_row(stage, models, cfg.steps, rates.seconds_per_step(steps, first, more)),
            "memory_gib": memory / GiB}


def forecast(ip: Incidental, device: str) -> pd.DataFrame:
    """One row of :data:`COLUMNS` per training stage of ``ip`` (the
    incidental_polysemanticity section), measured on ``device``."""
    col, nz, sw = ip.collisions, ip.noise, ip.sweep
    precision = ip.compute.precision
    noise_models = len(nz.noise) * len(nz.sigma) * nz.instances
    sweep_models = sw.instances * (1 + len(sw.lam) + len(sw.sigma))
    rows = [
        _row("ip_collisions", col, col.instances * len(col.m),
             max(stack_bytes(col.n, m, col.instances, col.steps, col.steps, col.n)
                 for m in col.m),
             lambda c: training.collisions(c, device, precision), more=8),
        _row("ip_noise", nz, noise_models,
             stack_bytes(nz.n, nz.m, noise_models, nz.steps, nz.record_every, nz.n),
             lambda c: training.noise_runs(c, device, precision)),
        _row("ip_sweep", sw, sweep_models,
             stack_bytes(sw.n, sw.m, sweep_models, sw.steps, sw.steps, sw.n),
             lambda c: training.sweep(c, device, precision))]
    for run in ("single", "single_printed"):
        cfg = getattr(ip, run)
        rows.append(_row(f"ip_single@{run}", cfg, cfg.candidates,
                         stack_bytes(cfg.n, cfg.m, cfg.candidates, cfg.steps, cfg.record_every,
                                     cfg.n),
                         lambda c, run=run: training.single(c, device,
                                                            f"{KEY}.{run}",
                                                            precision)))
    return pd.DataFrame(rows, columns=list(COLUMNS))
