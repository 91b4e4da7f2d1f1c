"""Stage: the Persian Rug paper's claims, one row each (tms.persian_rug.claims.CLAIMS), judged from
the outputs of its stages: the theory and rug tables, the fig. 3 model and its weights, every
trained grid's training table and statistics with those of its untrained weights, the scaling
theory and fits. Diverged models are left out (tms.core.divergence.split).

Writes reports/claims/persian_rug.json (tms.core.claim_rows.export), which the report shows and
the site gathers.
"""

import numpy as np
import pandas as pd

from tms.core import claim_rows, divergence
from tms.persian_rug import artefacts, claims, compare, params, weights
from tms.pipeline import stage


def main(pr):
    grids = lambda path: pd.concat([pd.read_parquet(path(n)) for n in pr.grid.n_s],  # noqa: E731
                                   ignore_index=True)
    theory_t, rug_t, fig3_all = (pd.read_parquet(a) for a in (artefacts.THEORY, artefacts.RUG,
                                                               artefacts.FIG3))
    fig3, W3 = divergence.split(fig3_all)[0], None
    if len(fig3):
        first = fig3_all[~fig3_all.diverged.astype(bool)].iloc[0]
        W_in, W_out, _ = weights.read(artefacts.FIG3_WEIGHTS)[(first.model, int(first.instance))]
        W3 = W_out.astype(np.float64) @ W_in.astype(np.float64)
    stats_all = divergence.split(grids(artefacts.statistics))[0]
    baseline, trained = grids(artefacts.baseline), grids(artefacts.trained)
    rows = (claims.persian_rug(fig3, W3, compare.rug_vs_theory(rug_t), theory_t, stats_all,
                               trained, compare.printed_hadamard(pr.fig1.n_s), pr.fig2.n_s)
            + claims.symmetry(stats_all, rug_t, trained, baseline)
            + claims.scaling(pd.read_parquet(artefacts.SCALING_FITS),
                             pd.read_parquet(artefacts.SCALING_THEORY),
                             pr.scaling.max_p_over_r, pr.scaling.small_r, trained)
            + claims.beyond_theory(stats_all, baseline))
    claim_rows.export(rows, claims.CLAIMS, "persian_rug", claims.TITLE, "pr_claims",
                      artefacts.FIGURES)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
