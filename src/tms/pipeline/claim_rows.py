"""Claims tables: the rows every paper's claims module returns, and their export as data.

A claims table has one row per claim and the columns :data:`COLUMNS`: the claim, its source
(figure or section), the paper's value, ours, the tolerance and the verdict. A report notebook's
last cell calls :func:`export`, which writes ``reports/claims/<paper>.json``
atomically; the site stage (:mod:`tms.reporting.site`) reads every paper's file, shows the rows on
``reports/index.html`` and turns them into DVC metrics.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Collection, Sequence
from pathlib import Path

import pandas as pd

from tms.pipeline.io import write_json

COLUMNS = ["claim", "source", "paper", "ours", "tolerance", "verdict"]


def verdict(ok: bool) -> str:
    """'reproduced' if the claim's test passed, else 'not reproduced'."""
    return "reproduced" if ok else "not reproduced"


#: The verdict of a claim whose numbers could not be computed: every model it needs diverged,
#: or too few points are left to fit.
NOT_COMPUTED = "not computed"


def not_computed(claim: str, source: str, paper: str, why: str) -> list:
    """A claims row (:data:`COLUMNS`) for a claim that could not be checked, saying why."""
    return [claim, source, paper, f"not computed: {why}", "—", NOT_COMPUTED]


_NUM = r"[-−]?\d+(?:\.\d+)?(?:[eE][-+−]?\d+)?%?"
_PLUS_MINUS = re.compile(rf"({_NUM})\s*±\s*({_NUM})")
_VALUE = [re.compile(p) for p in (
    rf"^\s*({_NUM})(?=\s*(?:$|[;,(]|at\b|of\b))",     # '0.275 at λ = 0.001; …'
    rf"^(?:max|largest)\b[^=:]*[=:]\s*({_NUM})",     # 'max |rug/theory − 1| = 3.2% over …'
    rf"^\s*[^\W\d]\w{{0,2}}\s*=\s*({_NUM})",          # 'c = 0.143, …', 'λt = 2.26'
    rf":\s*({_NUM})\s*\(closed form",               # '…: 8.0e-08 (closed form 0)'
)]

# (pattern searched in "source claim", figure stem or None, stages that computed the numbers)
Link = tuple[str, str | None, Sequence[str]]


def _number(text: str) -> float:
    value = float(text.rstrip("%").replace("−", "-"))
    return value / 100 if text.endswith("%") else value


def numbers(ours: str) -> tuple[float | None, float | None]:
    """The value and uncertainty of a formatted result, or None where there is none.

    Read only from the shapes the claims functions print: 'a ± b' anywhere → (a, b); a
    leading number, 'max … = a' / 'largest … = a', a short symbol 's = a' at the start, or
    ': a (closed form …)' → (a, None); anything else → (None, None). Percentages become
    fractions; '−' (U+2212) is a minus sign.
    """
    m = _PLUS_MINUS.search(ours)
    if m:
        return _number(m.group(1)), _number(m.group(2))
    for pattern in _VALUE:
        if m := pattern.search(ours):
            return _number(m.group(1)), None
    return None, None


def _finite(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def rows(table: pd.DataFrame, figures_dir: str | os.PathLike, report_stage: str,
         links: Sequence[Link] = (), undrawn: Collection[str] = ()) -> list[dict]:
    """The claims ``table`` (columns :data:`tms.pipeline.claim_rows.COLUMNS`) as records with links.

    Each record adds ``figure`` (repository path of the PNG that shows the claim, or None),
    ``stages`` (the DVC stages whose outputs the numbers come from), ``value`` and
    ``uncertainty`` (:func:`numbers` of ``ours``, or the table's own ``value``/``uncertainty``
    columns where it has them). The first of ``links`` whose pattern is found in
    "source claim" gives the figure and the stages; a row that none matches links the figure
    figN of a 'fig. N' source if it exists, and ``report_stage``.

    Raises ValueError if the table lacks a column of COLUMNS or a link names a figure that is
    not in ``figures_dir``, unless the report said it could not draw it (``undrawn``: figure
    stems; the claim then links no figure).
    """
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"claims table lacks columns {missing}")
    figures_dir = Path(figures_dir)
    out = []
    for rec in table.to_dict("records"):
        text = f"{rec['source']} {rec['claim']}"
        figure, stages = None, [report_stage]
        for pattern, fig, link_stages in links:
            if re.search(pattern, text):
                figure, stages = fig, list(link_stages)
                if figure in undrawn:                  # not this run's: none to link
                    figure = None
                elif figure is not None and not (figures_dir / f"{figure}.png").is_file():
                    raise ValueError(f"claim {rec['claim']!r}: no figure {figure}.png in "
                                     f"{figures_dir}")
                break
        else:
            m = re.search(r"fig\. (\d+)", rec["source"])
            if m and (figures_dir / f"fig{m.group(1)}.png").is_file():
                figure = f"fig{m.group(1)}"
        value, unc = numbers(str(rec["ours"]))
        row = {c: str(rec[c]) for c in COLUMNS}
        row.update(figure=None if figure is None else (figures_dir / f"{figure}.png").as_posix(),
                   stages=stages, value=_finite(rec.get("value", value)),
                   uncertainty=_finite(rec.get("uncertainty", unc)))
        out.append(row)
    return out


def export(table, paper: str, report_stage: str, figures_dir: str | os.PathLike,
           links: Sequence[Link] = (), title: str | None = None,
           undrawn: Collection[str] = ()) -> Path:
    """Write ``reports/claims/<paper>.json`` (beside the figures directory's parent) atomically.

    table: the claims DataFrame or its pandas Styler; figures_dir: ``reports/figures/<paper>``
    (repository-relative, as the notebooks get it). The file holds ``paper``, ``title``,
    ``report`` (the HTML report's path), ``stage`` (``report_stage``) and ``claims``
    (:func:`rows`, with ``undrawn``). Returns the path written.
    """
    table = getattr(table, "data", table)       # a Styler's DataFrame
    figures_dir = Path(figures_dir)
    reports = figures_dir.parent.parent
    path = reports / "claims" / f"{paper}.json"
    write_json({"paper": paper, "title": title or paper, "stage": report_stage,
                "report": (reports / f"{paper}.html").as_posix(),
                "claims": rows(table, figures_dir, report_stage, links, undrawn)}, path)
    return path
