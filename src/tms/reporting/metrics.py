"""The claims files read in the papers' order (:func:`load_claims`: reports/claims/*.json, written
by the report notebooks, tms.core.claim_rows.export) and counted as DVC metrics: the counts per
verdict (:func:`metrics`, reports/claims.json) and every claim's numbers by id
(:func:`claim_values`, reports/claim_values.json). The site stage writes both; ``make rejudge``
writes a snapshot's.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tms.core.claim_rows import (
    BASES,
    EMPIRICAL,
    INCONCLUSIVE,
    SANITY,
    VERDICTS,
    label,
    read_folder,
)
from tms.core.papers import KEYS

#: The papers in the order the README and the site show them (the registry's); others after, by key.
PAPERS = KEYS


def load_claims(claims_dir: str | Path) -> list[dict]:
    """Every paper's claims file (tms.core.claim_rows.export), in :data:`PAPERS` order, each
    claim's ``figure`` None where its report did not draw it (no such PNG in the repository
    holding ``claims_dir``). Raises FileNotFoundError if there is none."""
    found = read_folder(claims_dir)
    if not found:
        raise FileNotFoundError(f"no claims file in {claims_dir}")
    root = Path(claims_dir).parent.parent
    papers = sorted(found,
                    key=lambda p: (PAPERS.index(p["paper"]) if p["paper"] in PAPERS
                                   else len(PAPERS), p["paper"]))
    for claim in (c for paper in papers for c in paper["claims"]):
        if claim["figure"] and not (root / claim["figure"]).is_file():
            claim["figure"] = None
    return papers


def _key(verdict: str) -> str:
    return verdict.replace(" ", "_")


def metrics(papers: list[dict]) -> dict:
    """DVC metrics of the claims (reports/claims.json, a column each in ``dvc exp show``): per
    paper, the number of rows, and per basis (empirical, mathematics: tms.core.claim_rows.BASES)
    the count per verdict, an inconclusive one by its direction (``inconclusive_holds``,
    ``inconclusive_fails``)."""
    keys = [_key(v) for v in VERDICTS if v not in (SANITY, INCONCLUSIVE)] + [
        "inconclusive_holds", "inconclusive_fails"]
    out = {}
    for paper in papers:
        entry: dict = {"claims_total": len(paper["claims"])}
        for basis in BASES:
            counts = Counter(
                f"inconclusive_{r['direction']}" if r["verdict"] == INCONCLUSIVE
                else _key(r["verdict"]) for r in paper["claims"] if r["basis"] == basis)
            entry[basis] = {k: counts.get(k, 0) for k in
                            (keys if basis == EMPIRICAL else [*keys, _key(SANITY)])}
        out[paper["paper"]] = entry
    return out


def claim_values(papers: list[dict]) -> dict:
    """Every claim's numbers (reports/claim_values.json, read with ``dvc metrics show`` or
    ``dvc metrics diff`` given the file, kept out of ``dvc exp show``'s columns): per paper, per
    claim (key: its stable id, the same under every params profile), ``verdict`` (as the site
    words it, an inconclusive one with its direction: tms.core.claim_rows.label), and ``value``
    and ``uncertainty`` where numeric."""
    return {paper["paper"]: {r["id"]: {"verdict": label(r),
                                       **{k: r[k] for k in ("value", "uncertainty")
                                          if r.get(k) is not None}}
                             for r in paper["claims"]}
            for paper in papers}
