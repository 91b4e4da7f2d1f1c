"""Stage: the anatomy of the loss of the fig. 3 model(s) against the theory
(tms.persian_rug.anatomy), as pr_anatomy does for the trained grids: at p 0.044, where trained
models beat the theory most and the interference is skewed (the small-p mechanism).

Reads data/persian_rug/fig3.parquet and data/persian_rug/fig3_weights/; writes
data/persian_rug/anatomy/fig3.parquet (columns tms.persian_rug.stats.KEY_COLUMNS +
tms.persian_rug.anatomy.COLUMNS, one row per seed not diverged).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
import pandas as pd

from tms.core import io
from tms.core.device import resolve_device
from tms.persian_rug import anatomy, artefacts, params, weights
from tms.pipeline import stage


def main(pr):
    table = anatomy.grid_anatomy(pd.read_parquet(artefacts.FIG3),
                                 weights.read(artefacts.FIG3_WEIGHTS), pr.eval.seed,
                                 pr.eval.n_vectors, resolve_device(pr.device))
    io.write_parquet(table, artefacts.ANATOMY_FIG3)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
