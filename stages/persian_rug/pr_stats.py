"""Stage: the statistics of figs. 4–7 and eq. 6 for every model of the trained grid of one n_s.

Reads data/persian_rug/train/n{n_s}.parquet and its weights; writes
data/persian_rug/stats/n{n_s}.parquet (columns tms.persian_rug.stats.KEY_COLUMNS +
tms.persian_rug.stats.STAT_COLUMNS, one row per model) and, the same for untrained weights of
every ReLU model (tms.persian_rug.stats.baseline_statistics: the baseline of figs. 4–7),
data/persian_rug/stats/n{n_s}_random.parquet.
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
    device = resolve_device(pr.device)
    table = stats.grid_statistics(trained, weights, device)
    relu = trained[trained.model == "relu"]
    baseline = stats.baseline_statistics(relu, device)
    io.write_parquet(table, f"data/persian_rug/stats/n{n_s}.parquet")
    io.write_parquet(baseline, f"data/persian_rug/stats/n{n_s}_random.parquet")


if __name__ == "__main__":
    stage.run(main, __doc__, stage.N_S)
