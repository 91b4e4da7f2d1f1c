"""Diverged models out of fits, claims and figures, with a warning for the report.

A trained-model table (tms.persian_rug.training.TRAIN_COLUMNS, tms.notes.training.LINEAR_COLUMNS /
RELU_COLUMNS, tms.incidental.training's COLLISION_COLUMNS, NOISE_COLUMNS, SWEEP_COLUMNS) flags
each model whose training diverged in its boolean column ``diverged`` (tms.engine.train,
tms.engine.tied). A report never fits, claims or draws such a row silently: it calls :func:`split`
on the table it loaded, uses the kept rows everywhere and shows the warning.
"""

from __future__ import annotations

import pandas as pd

#: Columns that identify a model in a warning, where the table has them.
IDENTIFYING = ["model", "spectrum", "instance", "n_s", "n_d", "D", "d", "p", "S", "seed", "lr",
               "steps"]


def split(table: pd.DataFrame, what: str = "trained models") -> tuple[pd.DataFrame, str | None]:
    """The rows of ``table`` whose training did not diverge, and a warning naming the others.

    Returns (kept rows, index reset; None if no row diverged, else a one-paragraph Markdown
    warning: how many of how many ``what`` diverged and, for each, its identifying columns).
    A table without a ``diverged`` column is returned whole. Raises nothing.
    """
    if "diverged" not in table.columns or not table.diverged.any():
        return table.reset_index(drop=True), None
    bad = table[table.diverged.astype(bool)]
    cols = [c for c in IDENTIFYING if c in table.columns]
    which = "; ".join(", ".join(f"{c} {row[c]}" for c in cols) for _, row in bad.iterrows())
    warning = (f"**Warning: {len(bad)} of {len(table)} {what} diverged** (NaN/inf loss or a loss "
               f"far above their initial one) and are excluded from every fit, claim and figure "
               f"below: {which}.")
    return table[~table.diverged.astype(bool)].reset_index(drop=True), warning
