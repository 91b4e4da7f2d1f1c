"""An erratum of a paper, and our evidence.

Each paper lists its errata in its package's ``errata`` module (``ERRATA``): every erratum
docs/paper-gaps.md names (the papers' errata, and the differences between a paper and its
authors' code). :func:`evidence` finds the claims rows (tms.core.claim_rows) that bear on one,
by their stable ids; an erratum no row bears on is shown on the site as having no evidence yet.
"""

from __future__ import annotations

from dataclasses import dataclass

from tms.core.papers import PAPERS


@dataclass(frozen=True)
class Erratum:
    """One erratum: the paper (the key of its claims file), where, what is printed or coded, what
    holds instead, and the ids of that paper's claims (tms.core.claim_rows.Claim.id) that
    are our evidence (empty: nothing in the pipeline checks it; ``note`` then says why)."""

    paper: str
    where: str
    printed: str
    correct: str
    claims: tuple[str, ...]
    note: str = ""


def evidence(erratum: Erratum, claims: dict[str, list[dict]]) -> list[dict]:
    """The claims rows of ``erratum.paper`` whose id is one of ``erratum.claims``.

    claims: paper → rows (tms.core.claim_rows). Raises ValueError if the paper has a claims
    file but no row of a named id (a renamed claim would otherwise lose its evidence silently).
    """
    rows = {r["id"]: r for r in claims.get(erratum.paper, [])}
    missing = [c for c in erratum.claims if rows and c not in rows]
    if missing:
        raise ValueError(f"erratum {erratum.where} of {erratum.paper}: no claim {missing}")
    return [rows[c] for c in erratum.claims if c in rows]


def every() -> list[Erratum]:
    """Every paper's errata (its package's ``errata.ERRATA``), in the registry's order."""
    return [e for paper in PAPERS for e in paper.module("errata").ERRATA]
