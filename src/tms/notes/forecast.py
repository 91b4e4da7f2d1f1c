"""The predicted time of a profile's trained models of the notes on toy autoencoding (the stages
notes_linear and notes_relu) before running them, one row per stage: the stage's steps (every
step cap of notes_linear in turn; notes_relu to its cap, an upper bound: the stopping rule may
end it sooner) times the seconds of one step **measured on this machine**, by the stage's own
training function (tms.notes.training) run for two small step counts
(tms.core.rates.seconds_per_step).
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from tms.core import rates
from tms.engine.grid import Schedule
from tms.notes import training
from tms.notes.params import Notes

COLUMNS = {
    "stage": "the DVC stage",
    "models": "models trained",
    "steps": "steps each (the sum of the caps for notes_linear)",
    "ms_per_step": "one step of the stage's stack, measured here (ms)",
    "minutes": "predicted time (min), to the step cap",
}


def forecast(an: Notes, device: str) -> pd.DataFrame:
    """One row of :data:`COLUMNS` per training stage of ``an`` (the autoencoding_notes
    section), measured on ``device``."""
    lin, relu, precision = an.linear, an.relu, an.compute.precision

    def sched(train, steps: int) -> Schedule:          # no stopping within the steps timed
        return dataclasses.replace(Schedule.of(train, steps), check_every=steps + 1)

    def linear(k: int) -> None:
        training.linear_table(lin.D, lin.d, lin.S, [k], an.scale_min, training.Run(
            lin.train.seed, lin.train.lr, sched(lin.train, k), an.eval.seed, 1024, device,
            precision))

    def relu_run(k: int) -> None:
        training.relu_tables(relu.D, relu.d, relu.S, relu.seeds, training.Run(
            relu.train.seed, relu.train.lr, sched(relu.train, k), an.eval.seed, 1024, device,
            precision), 1024, relu.strata_seed)
    rows = []
    for stage, models, steps, run in (
            ("notes_linear", 2 * len(lin.d) * len(lin.S) * len(lin.steps), sum(lin.steps),
             linear),
            ("notes_relu", len(relu.S) * relu.seeds, relu.max_steps, relu_run)):
        rows.append(rates.stage_row(stage, models, steps, rates.seconds_per_step(run, 2, 200)))
    return pd.DataFrame(rows, columns=list(COLUMNS))
