"""The errata of the Persian Rug paper: what it prints, or its authors' code does, that does
not hold, what holds instead, and the claims rows that are our evidence (tms.core.errata); the
site's errata table shows them, docs/paper-gaps.md explains them."""

from tms.core.errata import Erratum
from tms.persian_rug.params import KEY

ERRATA: tuple[Erratum, ...] = (
    Erratum(KEY, "sec. 4.2.2", "H_ij = parity(bin(i) ⊕ bin(j)), ⊕ = XOR",
            "parity(i XOR j) = parity(i) XOR parity(j): a rank-1 matrix; the Sylvester Hadamard "
            "matrix uses AND, (−1)^popcount(i AND j)", ("fig1.hadamard_xor",)),
    Erratum(KEY, "fig. 2 (authors' code)",
            "optimal linear loss (n_s − n_d − 1)·p/(3 n_s)",
            "off by one and ignores the mean p/2: the optimum over linear maps is "
            "Var(x)(1 − n_d/n_s), Var(x) = (4p − 3p²)/12", ("fig2.linear_optimum",)),
    Erratum(KEY, "fig. 2 (authors' code)",
            "the loss-curve script evaluates every linear point at p = 0.8",
            "evaluate each curve at its own p", (),
            "by construction: the theory stage evaluates the linear optimum at every p of fig. 2"),
    Erratum(KEY, "figs. 2–3 (authors' code)", "reported losses are the last minibatch's",
            "evaluate on a fixed, large held-out sample", (),
            "by construction: every trained loss is on eval.n_vectors held-out vectors"),
    Erratum(KEY, "sec. 2 (authors' code)", "stopping-rule windows of 100 steps",
            "the code compares means of windows of 200 steps", (),
            "train.window in params.yaml sets it"),
    Erratum(KEY, "eq. 2", "loss summed over features (per sample)",
            "the authors' code reports the mean over features (per feature)", (),
            "by construction: every loss on the site is per feature"),
    Erratum(KEY, "fig. 6 (authors' code)",
            "Var(ν_i) sums W_ij² over j ≠ i (text)", "the code includes the diagonal j = i",
            ("sym.dvar_nu",)),
    Erratum(KEY, "fig. 7 (authors' code)",
            r"$\Lambda = \max_i \sum_{j \neq i} |W_{ij}|^3 / "
            r"(\sum_{j \neq i} W_{ij}^2)^{3/2}$ (text)",
            "the code omits the 3/2 power", ("sym.lyapunov",)),
)
