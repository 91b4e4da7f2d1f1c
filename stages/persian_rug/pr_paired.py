"""Stage: the antipodal construction (tms.persian_rug.paired; ours, not the paper's) on the
theory's points: the p values of persian_rug.fig2 and the ratio points of persian_rug.theory,
beside the theory in fig. 2.

Writes data/persian_rug/paired.parquet (columns p, ratio, loss, a, b, loss_pair, paired).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.persian_rug import artefacts, paired, params
from tms.pipeline import stage


def main(pr):
    io.write_parquet(paired.construction_table(pr.fig2.p, pr.theory.ratio_values()),
                     artefacts.PAIRED)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
