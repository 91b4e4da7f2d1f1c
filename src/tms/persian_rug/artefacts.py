"""Where the Persian Rug paper's stages write, named once: every stage script, the claims stage and
the DVC plots stage take their paths from here, and :func:`outs` is checked against dvc.yaml
(tests/core/test_artefacts.py). Paths are relative to the repository root. The training stages'
own outputs are named in tms.persian_rug.trained_artefacts (imported here), the one module of paths
those stages run, so that naming a new output here reruns no training.
"""

from __future__ import annotations

from tms.persian_rug.trained_artefacts import (  # noqa: F401 (named there, used from here)
    CONVERGE_FIG3,
    DATA,
    FIG3,
    FIG3_ENDS,
    FIG3_WEIGHTS,
    converge,
    trained,
    trained_ends,
    trained_weights,
)

THEORY = f"{DATA}/theory.parquet"
RUG = f"{DATA}/rug.parquet"
SCALING_THEORY = f"{DATA}/scaling_theory.parquet"
SCALING_FITS = f"{DATA}/scaling_fits.parquet"
#: The antipodal construction on the theory's points (tms.persian_rug.paired).
PAIRED = f"{DATA}/paired.parquet"
#: The anatomy of the fig. 3 model(s) against the theory (tms.persian_rug.anatomy).
ANATOMY_FIG3 = f"{DATA}/anatomy/fig3.parquet"
#: The report's figures; the claims stage links each claim to its figure there.
FIGURES = "reports/figures/persian_rug"
CLAIMS = "reports/claims/persian_rug.json"


def statistics(n_s: int) -> str:
    """The statistics of figs. 4–7 and eq. 6 of every model of the grid of n_s."""
    return f"{DATA}/stats/n{n_s}.parquet"


def baseline(n_s: int) -> str:
    """The same statistics of the untrained weights of the grid of n_s."""
    return f"{DATA}/stats/n{n_s}_random.parquet"


def anatomy(n_s: int) -> str:
    """The anatomy of the loss of the grid of n_s against the theory (tms.persian_rug.anatomy)."""
    return f"{DATA}/anatomy/n{n_s}.parquet"


def outs(grid_n_s: list[int]) -> dict[str, list[str]]:
    """Every data stage's outputs (DVC stage name → paths), for the grids ``grid_n_s``
    (persian_rug.grid.n_s)."""
    out = {"pr_theory": [THEORY], "pr_paired": [PAIRED], "pr_rug": [RUG],
           "pr_fig3": [FIG3, FIG3_WEIGHTS, FIG3_ENDS],
           "pr_scaling": [SCALING_THEORY, SCALING_FITS], "pr_converge_fig3": [CONVERGE_FIG3],
           "pr_anatomy_fig3": [ANATOMY_FIG3],
           "pr_claims": [CLAIMS]}
    for n_s in grid_n_s:
        out[f"pr_train@{n_s}"] = [trained(n_s), trained_weights(n_s), trained_ends(n_s)]
        out[f"pr_stats@{n_s}"] = [statistics(n_s)]
        out[f"pr_anatomy@{n_s}"] = [anatomy(n_s)]
        out[f"pr_baseline@{n_s}"] = [baseline(n_s)]
        out[f"pr_converge@{n_s}"] = [converge(n_s)]
    return out
