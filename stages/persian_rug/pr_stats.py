"""Stage: the statistics of figs. 4–7 and eq. 6 of every model of the trained grid of one n_s,
from the weights its training kept (tms.persian_rug.stats.grid_statistics): a statistic added to
tms.persian_rug.stats reruns this stage, never the training. A model whose weights were not kept
(persian_rug.grid.keep_weights) takes the statistics measured where it trained
(tms.persian_rug.unkept), refused if other statistics code measured them.

Reads data/persian_rug/train/n{n_s}.parquet and data/persian_rug/train/n{n_s}_weights/; writes
data/persian_rug/stats/n{n_s}.parquet (columns tms.persian_rug.stats.KEY_COLUMNS +
STAT_COLUMNS, one row per model, in the trained table's order).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
import pandas as pd

from tms.core import io
from tms.core.device import resolve_device
from tms.persian_rug import artefacts, params, stats, unkept, weights
from tms.pipeline import stage


def main(pr, n_s):
    stage.check_n_s(pr, n_s)
    folder = artefacts.trained_weights(n_s)
    try:
        measured = unkept.read(folder)
    except ValueError as err:
        raise SystemExit(f"error: {err}") from None
    table = stats.grid_statistics(pd.read_parquet(artefacts.trained(n_s)), weights.read(folder),
                                  measured, resolve_device(pr.device))
    io.write_parquet(table, artefacts.statistics(n_s))


if __name__ == "__main__":
    stage.run(main, __doc__, stage.N_S, params=params.SECTION)
