"""Stage: the main curves as CSV for DVC plots (declared with x/y in dvc.yaml).

Writes reports/plots/pr_fig2_loss.csv (Persian Rug fig. 2: series, p, ratio, loss,
relative_loss), reports/plots/ip_collisions.csv (incidental polysemanticity fig. 3: m,
polysemantic, benign_init, n2_over_4m) and reports/plots/ip_fourth_norms.csv (fig. 4: series,
step, fourth), each atomically. Diverged models are left out (tms.core.divergence).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
import pandas as pd

from tms.core import divergence, io
from tms.incidental import artefacts as ip_out
from tms.incidental import figures as ip_figures
from tms.persian_rug import artefacts as pr_out
from tms.persian_rug import figures as pr_figures
from tms.pipeline import params, stage

OUT = "reports/plots"


def _csv(df: pd.DataFrame, name: str) -> None:
    io.write_csv(df, f"{OUT}/{name}.csv")


def _kept(path: str) -> pd.DataFrame:
    """The rows of a trained-model table whose training did not diverge."""
    return divergence.split(pd.read_parquet(path))[0]


def main(p):
    pr, ip = p.persian_rug, p.incidental_polysemanticity
    trained = _kept(pr_out.trained(pr.fig2.n_s))
    _csv(pr_figures.fig2_curves(trained, pd.read_parquet(pr_out.RUG),
                         pd.read_parquet(pr_out.THEORY), pr.fig2.p), "pr_fig2_loss")
    _csv(ip_figures.fig3_curve(_kept(ip_out.COLLISIONS)), "ip_collisions")
    nf = io.read_arrays(ip_out.NOISE_FOURTH)
    _csv(ip_figures.fig4_curves(_kept(ip_out.NOISE), nf["steps"], nf["fourth"],
                            ip.noise.m), "ip_fourth_norms")


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
