"""What the report notebooks' cells share: keep the models that did not diverge, and say what
could not be drawn or computed (a report builds whatever subset of its models diverged)."""

from __future__ import annotations

import pandas as pd
from IPython.display import Markdown, display

from tms.pipeline import divergence


def kept(table: pd.DataFrame, what: str) -> pd.DataFrame:
    """The rows of ``table`` whose training did not diverge (tms.pipeline.divergence.split);
    the warning naming the others, if any, is shown in the report."""
    table, warning = divergence.split(table, what)
    if warning:
        display(Markdown(warning))
    return table


#: The figures (stems) this report could not draw: the claims export links them to no claim.
UNDRAWN: set[str] = set()


def not_drawn(what: str, *figures: str) -> None:
    """Say in the report that a figure or table is not drawn, and why (``what``); ``figures``:
    the stems of the figures left out (recorded in :data:`UNDRAWN`)."""
    UNDRAWN.update(figures)
    display(Markdown(f"**Not drawn:** {what}."))
