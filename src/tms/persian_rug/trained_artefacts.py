"""Where the Persian Rug paper's training stages write (pr_train, pr_fig3, pr_converge), named
once: the only paths those stages run, apart from tms.persian_rug.artefacts (which takes these
from here and names every other output), so that naming the output of a new analysis stage reruns
no training (tests/core/test_code_deps.py). Paths are relative to the repository root.
"""

from __future__ import annotations

DATA = "data/persian_rug"
FIG3 = f"{DATA}/fig3.parquet"
FIG3_WEIGHTS = f"{DATA}/fig3_weights"
#: The training states where the fig. 3 models the convergence check retrains ended
#: (tms.persian_rug.ends).
FIG3_ENDS = f"{DATA}/fig3_ends"
#: The convergence check of the fig. 3 models (tms.persian_rug.converge).
CONVERGE_FIG3 = f"{DATA}/converge/fig3.parquet"


def trained(n_s: int) -> str:
    """The training table of the grid of n_s (tms.persian_rug.training.TRAIN_COLUMNS)."""
    return f"{DATA}/train/n{n_s}.parquet"


def trained_weights(n_s: int) -> str:
    """The folder of the kept weights of the grid of n_s (tms.persian_rug.weights)."""
    return f"{DATA}/train/n{n_s}_weights"


def trained_ends(n_s: int) -> str:
    """The folder of the training states where the models of the grid of n_s that the
    convergence check retrains ended (tms.persian_rug.ends)."""
    return f"{DATA}/train/n{n_s}_ends"


def converge(n_s: int) -> str:
    """The convergence check of the grid of n_s (tms.persian_rug.converge.COLUMNS)."""
    return f"{DATA}/converge/n{n_s}.parquet"
