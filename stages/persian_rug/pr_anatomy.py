"""Stage: the anatomy of the loss of every ReLU model of the trained grid of one n_s against the
theory (tms.persian_rug.anatomy): its loss split by whether the feature is on or off, the loss
with its interference made Gaussian, and the shape of the interference, from the weights its
training kept and on the held-out sample of persian_rug.eval. Models whose weights were not kept
(persian_rug.grid.keep_weights) and diverged models have no row.

Reads data/persian_rug/train/n{n_s}.parquet and data/persian_rug/train/n{n_s}_weights/; writes
data/persian_rug/anatomy/n{n_s}.parquet (columns tms.persian_rug.stats.KEY_COLUMNS +
tms.persian_rug.anatomy.COLUMNS, one row per model).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
import pandas as pd

from tms.core import io
from tms.core.device import resolve_device
from tms.persian_rug import anatomy, artefacts, params, weights
from tms.pipeline import stage


def main(pr, n_s):
    stage.check_n_s(pr, n_s)
    table = anatomy.grid_anatomy(pd.read_parquet(artefacts.trained(n_s)),
                                 weights.read(artefacts.trained_weights(n_s)), pr.eval.seed,
                                 pr.eval.n_vectors, resolve_device(pr.device))
    io.write_parquet(table, artefacts.anatomy(n_s))


if __name__ == "__main__":
    stage.run(main, __doc__, stage.N_S, params=params.SECTION)
