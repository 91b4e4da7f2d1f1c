"""The errata of *Incidental polysemanticity*: what it prints, or its authors' code does, that does
not hold, what holds instead, and the claims rows that are our evidence (tms.core.errata); the
site's errata table shows them, docs/paper-gaps.md explains them."""

from tms.core.errata import Erratum
from tms.incidental.params import KEY

ERRATA: tuple[Erratum, ...] = (
    Erratum(KEY, "fig. 6", "σ = 0.01 (bipolar)",
            "likely σ = 0.1: the paper ties fig. 6 to fig. 4 (σ 0.07–0.15); under fig. 4's "
            "optimiser nothing sparsifies at σ 0.01, and at σ 0.1 the picture is fig. 6's",
            ("fig6.stuck", "fig6.larger_sigma")),
    Erratum(KEY, "app. B", "E[X²] − E[X]² = Var[X]²",
            "E[X²] − E[X]² = Var[X], as the lines after it use", (),
            "a typo: nothing downstream uses the square"),
    Erratum(KEY, "app. C",
            r"$E[(W_i \cdot \xi)^4] = \sum_j W_{ij}^4 \mu_4 + "
            r"6 \sum_{j \neq j'} W_{ij}^2 W_{ij'}^2 \sigma^4$",
            "over ordered pairs j ≠ j' the coefficient is 3: E[(W_i·ξ)⁴] = 3σ⁴‖W_i‖⁴ + "
            "‖W_i‖₄⁴(μ₄ − 3σ⁴); section 3's conclusion survives", ("appc.six_sigma",)),
)
