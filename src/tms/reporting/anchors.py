"""The ids in a report page that the site links to (shared by the notebooks' cells and the
site, so a link and its target cannot drift apart)."""

from __future__ import annotations


def figure(name: str) -> str:
    """The id of figure ``name``'s caption (``name``: the figure's file stem, e.g. 'fig2')."""
    return f"figure-{name}"


def claim(claim_id: str) -> str:
    """The id of the row of claim ``claim_id`` (tms.core.claim_rows.Claim.id) in a report's
    claims table."""
    return f"claim-{claim_id}"
