"""The errata and paper-versus-code differences of docs/paper-gaps.md, and our evidence.

:data:`ERRATA` lists every erratum that page names (the papers' errata, and the differences
between a paper and its authors' code). :func:`evidence`
finds the claims rows (tms.core.claim_rows) that bear on one, by their stable ids; an erratum
no row bears on is shown on the site as having no evidence yet.
"""

from __future__ import annotations

from dataclasses import dataclass


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


ERRATA: tuple[Erratum, ...] = (
    Erratum("persian_rug", "sec. 4.2.2", "H_ij = parity(bin(i) ⊕ bin(j)), ⊕ = XOR",
            "parity(i XOR j) = parity(i) XOR parity(j): a rank-1 matrix; the Sylvester Hadamard "
            "matrix uses AND, (−1)^popcount(i AND j)", ("fig1.hadamard_xor",)),
    Erratum("persian_rug", "fig. 2 (authors' code)",
            "optimal linear loss (n_s − n_d − 1)·p/(3 n_s)",
            "off by one and ignores the mean p/2: the optimum over linear maps is "
            "Var(x)(1 − n_d/n_s), Var(x) = (4p − 3p²)/12", ("fig2.linear_optimum",)),
    Erratum("persian_rug", "fig. 2 (authors' code)",
            "the loss-curve script evaluates every linear point at p = 0.8",
            "evaluate each curve at its own p", (),
            "by construction: the theory stage evaluates the linear optimum at every p of fig. 2"),
    Erratum("persian_rug", "figs. 2–3 (authors' code)", "reported losses are the last minibatch's",
            "evaluate on a fixed, large held-out sample", (),
            "by construction: every trained loss is on eval.n_vectors held-out vectors"),
    Erratum("persian_rug", "sec. 2 (authors' code)", "stopping-rule windows of 100 steps",
            "the code compares means of windows of 200 steps", (),
            "train.window in params.yaml sets it"),
    Erratum("persian_rug", "eq. 2", "loss summed over features (per sample)",
            "the authors' code reports the mean over features (per feature)", (),
            "by construction: every loss on the site is per feature"),
    Erratum("persian_rug", "fig. 6 (authors' code)",
            "Var(ν_i) sums W_ij² over j ≠ i (text)", "the code includes the diagonal j = i",
            ("sym.dvar_nu",)),
    Erratum("persian_rug", "fig. 7 (authors' code)",
            r"$\Lambda = \max_i \sum_{j \neq i} |W_{ij}|^3 / "
            r"(\sum_{j \neq i} W_{ij}^2)^{3/2}$ (text)",
            "the code omits the 3/2 power", ("sym.lyapunov",)),
    Erratum("incidental_polysemanticity", "figs. 4–5", "a random unit vector has ‖w‖₄⁴ = 3/m",
            "3/m is the limit; the expectation is exactly 3/(m + 2)", ("figs45.random_fourth",)),
    Erratum("incidental_polysemanticity", "app. B", "E[X²] − E[X]² = Var[X]²",
            "E[X²] − E[X]² = Var[X], as the lines after it use", (),
            "a typo: nothing downstream uses the square"),
    Erratum("incidental_polysemanticity", "app. C",
            r"$E[(W_i \cdot \xi)^4] = \sum_j W_{ij}^4 \mu_4 + "
            r"6 \sum_{j \neq j'} W_{ij}^2 W_{ij'}^2 \sigma^4$",
            "over ordered pairs j ≠ j' the coefficient is 3: E[(W_i·ξ)⁴] = 3σ⁴‖W_i‖⁴ + "
            "‖W_i‖₄⁴(μ₄ − 3σ⁴); section 3's conclusion survives", ("appc.six_sigma",)),
    Erratum("autoencoding_notes", "sec. 3.1",
            r"$C = \bigcup_{l=0}^{n} Q_l$, $Q_l$ defined for l = 1, …, D",
            r"$\bigcup_{l=0}^{D} Q_l$ with $Q_0 = \{0\}$ (n is not defined there)",
            ("sec31.skeleton_mass",)),
    Erratum("autoencoding_notes", "eqs. 28", "two equations numbered (28): the flow of w̄_j and "
            "the energy E", "number them apart; the claims call the second 'eq. 28 (energy)'", (),
            "a numbering slip"),
)


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
