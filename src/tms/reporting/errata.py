"""The errata and paper-versus-code differences of docs/paper-gaps.md, and our evidence.

:data:`ERRATA` lists every erratum that page names (the papers' errata, and the differences
between a paper and its authors' code). :func:`evidence`
finds the claims rows (tms.pipeline.claim_rows records) that bear on one; an erratum no row
matches is shown on the site as having no evidence yet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Erratum:
    """One erratum: the paper (tms.pipeline.claim_rows 'paper' key), where, what is printed or
    coded, what holds instead, and a pattern searched in the 'source claim' text of that paper's
    claims rows to find our evidence (None: nothing in the pipeline checks it)."""

    paper: str
    where: str
    printed: str
    correct: str
    pattern: str | None
    note: str = ""


ERRATA: tuple[Erratum, ...] = (
    Erratum("persian_rug", "sec. 4.2.2", "H_ij = parity(bin(i) ⊕ bin(j)), ⊕ = XOR",
            "parity(i XOR j) = parity(i) XOR parity(j): a rank-1 matrix; the Sylvester Hadamard "
            "matrix uses AND, (−1)^popcount(i AND j)", r"XOR"),
    Erratum("persian_rug", "fig. 2 (authors' code)", "optimal linear loss (n_s − n_d − 1)·p/(3 n_s)",
            "off by one and ignores the mean p/2: the optimum over linear maps is "
            "Var(x)(1 − n_d/n_s), Var(x) = (4p − 3p²)/12", r"optimal linear loss"),
    Erratum("persian_rug", "fig. 2 (authors' code)",
            "the loss-curve script evaluates every linear point at p = 0.8",
            "evaluate each curve at its own p", None,
            "by construction: the theory stage evaluates the linear optimum at every p of fig. 2"),
    Erratum("persian_rug", "figs. 2–3 (authors' code)", "reported losses are the last minibatch's",
            "evaluate on a fixed, large held-out sample", None,
            "by construction: every trained loss is on eval.n_vectors held-out vectors"),
    Erratum("persian_rug", "sec. 2 (authors' code)", "stopping-rule windows of 100 steps",
            "the code compares means of windows of 200 steps", None,
            "train.window in params.yaml sets it"),
    Erratum("persian_rug", "eq. 2", "loss summed over features (per sample)",
            "the authors' code reports the mean over features (per feature)", None,
            "by construction: every loss on the site is per feature"),
    Erratum("persian_rug", "fig. 6 (authors' code)",
            "Var(ν_i) sums W_ij² over j ≠ i (text)", "the code includes the diagonal j = i",
            r"fig\. 6"),
    Erratum("persian_rug", "fig. 7 (authors' code)",
            "Λ = max_i Σ_{j≠i}|W_ij|³ / (Σ_{j≠i} W_ij²)^{3/2} (text)",
            "the code omits the 3/2 power", r"fig\. 7"),
    Erratum("incidental_polysemanticity", "figs. 4–5", "a random unit vector has ‖w‖₄⁴ = 3/m",
            "3/m is the limit; the expectation is exactly 3/(m + 2)", r"random unit vector"),
)


def evidence(erratum: Erratum, claims: dict[str, list[dict]]) -> list[dict]:
    """The claims rows of ``erratum.paper`` whose 'source claim' matches its pattern.

    claims: paper → records (tms.pipeline.claim_rows.rows). An erratum without a pattern, or of a
    paper with no claims file, has none.
    """
    if erratum.pattern is None:
        return []
    return [r for r in claims.get(erratum.paper, [])
            if re.search(erratum.pattern, f"{r['source']} {r['claim']}")]
