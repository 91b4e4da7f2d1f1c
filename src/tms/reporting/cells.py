"""What the report notebooks' cells share: keep the models that did not diverge, say what
could not be drawn or computed (a report builds whatever subset of its models diverged), show a
figure with its caption, anchor and data, and show the claims table with an anchor per row."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Image, Markdown, display

from tms.pipeline import divergence, savefig
from tms.pipeline.io import atomic_path
from tms.reporting import anchors


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


def caption(name: str, title: str, text: str, data_href: str) -> str:
    """The markdown caption of figure ``name``: an anchor (tms.reporting.anchors.figure), the bold
    ``title``, ``text`` (the scale it ran at) and a link to its data (``data_href``)."""
    return (f'<a id="{anchors.figure(name)}"></a>**{title}.** {text} '
            f"[Data of this figure (CSV)]({data_href})")


def figure(fig: plt.Figure, figures_dir: str | os.PathLike, name: str, title: str, text: str,
           data: pd.DataFrame) -> None:
    """Write ``fig`` as ``figures_dir/name``.png and .svg (tms.pipeline.savefig) and ``data``,
    the numbers it draws, as ``name``.csv beside them (byte-stable: no index, floats to 10
    significant digits), then show the :func:`caption` and the image in the report.

    figures_dir: ``reports/figures/<paper>`` (the data link is made relative to ``reports/``,
    where the report page is). ``fig`` is closed.
    """
    stem = Path(figures_dir) / name
    png, _ = savefig.save(fig, stem)
    plt.close(fig)
    with atomic_path(stem.with_suffix(".csv")) as tmp:
        data.to_csv(tmp, index=False, float_format="%.10g")
    href = stem.with_suffix(".csv").relative_to(Path(figures_dir).parent.parent).as_posix()
    display(Markdown(caption(name, title, text, href)))
    display(Image(filename=str(png)))


def claims_table(table: pd.DataFrame):
    """``table`` as a pandas Styler with the whole text of every cell, left-aligned, and a
    fixed id per cell (tms.reporting.anchors.claim), for the report's last cell to show."""
    return table.style.set_uuid(anchors.CLAIMS_UUID).set_properties(**{"text-align": "left"})
