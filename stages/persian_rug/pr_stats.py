"""Stage: the statistics of figs. 4–7 and eq. 6 for every model of the trained grid of one n_s.

Reads data/persian_rug/train/n{n_s}.parquet and its weights; writes
data/persian_rug/stats/n{n_s}.parquet (columns tms.persian_rug.stats.KEY_COLUMNS +
tms.persian_rug.stats.STAT_COLUMNS, one row per model).
"""

import pandas as pd

from tms.persian_rug import stats, training
from tms.pipeline import io, stage
from tms.pipeline.params import resolve_device


def main(params, n_s):
    stage.check_n_s(params, n_s)
    pr = params.persian_rug
    trained = pd.read_parquet(f"data/persian_rug/train/n{n_s}.parquet")
    weights = training.unpack_weights(io.read_arrays(f"data/persian_rug/train/n{n_s}_weights"),
                                      trained.n_d.tolist())
    table = stats.grid_statistics(trained, weights, resolve_device(pr.device))
    io.write_parquet(table, f"data/persian_rug/stats/n{n_s}.parquet")


if __name__ == "__main__":
    stage.run(main, __doc__, stage.N_S)
