"""The errata of the notes on toy autoencoding: what it prints, or its authors' code does, that does
not hold, what holds instead, and the claims rows that are our evidence (tms.core.errata); the
site's errata table shows them, docs/paper-gaps.md explains them."""

from tms.core.errata import Erratum
from tms.notes.params import KEY

ERRATA: tuple[Erratum, ...] = (
    Erratum(KEY, "sec. 3.1",
            r"$C = \bigcup_{l=0}^{n} Q_l$, $Q_l$ defined for l = 1, …, D",
            r"$\bigcup_{l=0}^{D} Q_l$ with $Q_0 = \{0\}$ (n is not defined there)",
            ("sec31.skeleton_mass",)),
    Erratum(KEY, "eqs. 28", "two equations numbered (28): the flow of w̄_j and "
            "the energy E", "number them apart; the claims call the second 'eq. 28 (energy)'", (),
            "a numbering slip"),
)
