"""Stage: the loss limits, bounds and scaling-law fits of section 4.3 and appendix D.

Writes data/persian_rug/scaling_theory.parquet (optimal symmetric loss, lower and upper
bounds and L0 on scaling.theory_p × scaling.theory_ratio; tms.persian_rug.scaling.THEORY_COLUMNS)
and data/persian_rug/scaling_fits.parquet (both laws fitted to theory, rug and each trained grid
in the regime p/ratio ≤ scaling.max_p_over_r, the paper's form p, r only up to ratio
scaling.small_r; tms.persian_rug.scaling.FIT_COLUMNS). Diverged trained
models are left out of the fits (tms.core.divergence.split; the report warns about them).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
import pandas as pd

from tms.core import io
from tms.persian_rug import artefacts, params, scaling
from tms.pipeline import stage


def main(pr):
    sc = pr.scaling
    th = scaling.theory_grid(sc.theory_p, sc.ratio_values())
    rug = pd.read_parquet(artefacts.RUG)
    sources = [("theory", th), (f"Persian rug (n_s = {pr.rug.n_s})", rug)]
    for n_s in pr.grid.n_s:
        sources.append((scaling.trained_source(n_s),
                        scaling.trained_means(pd.read_parquet(artefacts.trained(n_s)))))
    fits = pd.concat([scaling.fit_laws(t, name, sc.max_p_over_r, sc.n_boot, sc.seed,
                                            sc.small_r)
                      for name, t in sources], ignore_index=True)
    io.write_parquet(th, artefacts.SCALING_THEORY)
    io.write_parquet(fits, artefacts.SCALING_FITS)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
