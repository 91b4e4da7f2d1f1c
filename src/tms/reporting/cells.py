"""What the report notebooks' cells share: keep the models that did not diverge, say what
could not be drawn or computed (a report builds whatever subset of its models diverged), show a
figure with its caption, anchor and data, and show the claims table with an anchor per row."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, Image, Markdown, display

from tms.core import divergence, io, savefig
from tms.core.claim_rows import EMPIRICAL, MATHEMATICS, label, tally
from tms.reporting import anchors, tex


def kept(table: pd.DataFrame, what: str) -> pd.DataFrame:
    """The rows of ``table`` whose training did not diverge (tms.core.divergence.split);
    the warning naming the others, if any, is shown in the report."""
    table, warning = divergence.split(table, what)
    if warning:
        display(Markdown(warning))
    return table


def not_drawn(what: str) -> None:
    """Say in the report that a figure or table is not drawn, and why (``what``); the site links
    no claim to a figure the report did not draw."""
    display(Markdown(f"**Not drawn:** {what}."))


def caption(name: str, title: str, text: str, data_href: str) -> str:
    """The markdown caption of figure ``name``: an anchor (tms.reporting.anchors.figure), the bold
    ``title``, ``text`` (the scale it ran at) and a link to its data (``data_href``)."""
    return (f'<a id="{anchors.figure(name)}"></a>**{title}.** {text} '
            f"[Data of this figure (CSV)]({data_href})")


def stamp(fig: plt.Figure, title: str, text: str, top: float = 0.0) -> None:
    """Write ``title`` and ``text`` (the caption: what the figure shows, at what scale) under
    ``fig``, wrapped to its width, its top at height ``top`` inches from the figure's bottom edge
    (0: at the edge; negative: below it, under what the figure draws there), so that the image
    says its scale away from the report too."""
    lines = textwrap.wrap(f"{title}. {text}".replace("`", ""), int(fig.get_figwidth() * 17))
    fig.text(0.01, top / fig.get_figheight(), "\n".join(lines), ha="left", va="top", fontsize=7,
             color="0.3")


def figure(fig: plt.Figure, figures_dir: str | os.PathLike, name: str, title: str, text: str,
           data: pd.DataFrame) -> None:
    """Write ``fig``, :func:`stamp`-ed with its title and caption text under all it draws, as
    ``figures_dir/name``.png and .svg (tms.core.savefig) and ``data``, the numbers it draws,
    as ``name``.csv beside them (byte-stable: no index, floats to 10 significant digits), then
    show the :func:`caption` and the image in the report: the PNG's part above the stamp, so
    that the page shows the caption once (the files carry it away from the report).

    figures_dir: ``reports/figures/<paper>`` (the data link is made relative to ``reports/``,
    where the report page is). ``fig`` is closed.
    """
    stem = Path(figures_dir) / name
    top = min(0.0, savefig.tight_box(fig, pad=0.0).y0)     # the lowest point drawn, inches
    stamp(fig, title, text, top)
    box = savefig.tight_box(fig, lay_out=False)              # the stamp's lines too
    png, _ = savefig.save(fig, stem, box)
    plt.close(fig)
    shown = savefig.png_top(png, box.y1 - top)
    io.write_csv(data, stem.with_suffix(".csv"))
    href = stem.with_suffix(".csv").relative_to(Path(figures_dir).parent.parent).as_posix()
    display(Markdown(caption(name, title, text, href)))
    display(Image(data=shown, format="png"))


_HEAD = ("claim", "source", "paper's value", "paper's scale", "ours", "our scale", "tolerance",
         "verdict")


def _claims_html(rows: list[dict]) -> str:
    body = []
    for r in rows:
        cells = [r["claim"], r["source"], r["paper"], r["paper_scale"], r["ours"], r["scale"],
                 r["tolerance"], label(r) + (f": {r['inconclusive']}"
                                             if r.get("inconclusive") else "")]
        body.append(f'<tr id="{anchors.claim(r["id"])}">'            # maths as MathML
                    + "".join(f"<td>{tex.html_with_math(str(c))}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in _HEAD)
    return (f'<table class="claims"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}'
            "</tbody></table>")


def claims_table(rows: list[dict]) -> None:
    """Show the claims rows (tms.core.claim_rows) in full, each row anchored by its claim id
    (tms.reporting.anchors.claim), an inconclusive one with its direction
    (tms.core.claim_rows.label): first the empirical claims (about trained models), then, apart,
    the checks of the paper's mathematics (tms.core.claim_rows.BASES), each with its counts."""
    for basis, title in ((EMPIRICAL, "Empirical claims"),
                         (MATHEMATICS, "Checks of the paper's mathematics")):
        if picked := [r for r in rows if r["basis"] == basis]:
            counts = ", ".join(f"{n} {v}" for v, n in tally(picked, basis))
            display(Markdown(f"**{title}** ({len(picked)}: {counts})."))
            display(HTML(_claims_html(picked)))
