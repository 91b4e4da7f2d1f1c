"""The ids in a report page that the site links to (shared by the notebooks' cells and the
site, so a link and its target cannot drift apart)."""

from __future__ import annotations

#: The pandas Styler uuid of a report's claims table: its cells' ids are
#: ``T_claims_row<i>_col<j>``.
CLAIMS_UUID = "claims"


def figure(name: str) -> str:
    """The id of figure ``name``'s caption (``name``: the figure's file stem, e.g. 'fig2')."""
    return f"figure-{name}"


def claim(row: int) -> str:
    """The id of the first cell of row ``row`` (0-based, the order of the claims export) of a
    report's claims table."""
    return f"T_{CLAIMS_UUID}_row{row}_col0"
