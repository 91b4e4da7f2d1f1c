"""Stage: the baseline of figs. 4–7 for the trained grid of one n_s: the statistics of untrained
weights of every ReLU model (tms.persian_rug.stats.baseline_statistics).

Reads data/persian_rug/train/n{n_s}.parquet; writes data/persian_rug/stats/n{n_s}_random.parquet
(columns tms.persian_rug.stats.KEY_COLUMNS + STAT_COLUMNS, one row per ReLU model).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
import pandas as pd

from tms.core import io
from tms.core.device import resolve_device
from tms.persian_rug import artefacts, params, stats
from tms.pipeline import stage


def main(pr, n_s):
    stage.check_n_s(pr, n_s)
    trained = pd.read_parquet(artefacts.trained(n_s))
    baseline = stats.baseline_statistics(trained[trained.model == "relu"],
                                         resolve_device(pr.device))
    io.write_parquet(baseline, artefacts.baseline(n_s))


if __name__ == "__main__":
    stage.run(main, __doc__, stage.N_S, params=params.SECTION)
