"""Stage: the claims of *Incidental polysemanticity*, one row each
(tms.incidental.claims.CLAIMS), judged from the outputs of its stages: the closed-form checks, the
sparsification ODE and its Euler comparison, the fig. 3 collisions (the fitted constant c of
c·n²/m, tms.incidental.stats.collision_constant), fig. 4's fourth norms, fig. 5's sweep and
fig. 6's stuck encodings. Diverged models are left out (tms.core.divergence.split).

Writes reports/claims/incidental_polysemanticity.json (tms.core.claim_rows.export), which the
report shows and the site gathers.
"""

import pandas as pd

from tms.core import claim_rows, divergence, io
from tms.incidental import artefacts, claims, params, stats
from tms.pipeline import stage


def main(ip):
    read = pd.read_parquet
    kept = lambda path: divergence.split(read(path))[0]  # noqa: E731
    col, c = kept(artefacts.COLLISIONS), ip.collisions
    fit = fit_init = None
    if len(col) >= 2:
        fit = stats.collision_constant(col.polysemantic, c.n, col.m, c.level)
        fit_init = stats.collision_constant(col.benign_pairs_init, c.n, col.m, c.level)
    single = {}          # run → (its stuck encodings, the candidates that did not diverge)
    for run in artefacts.RUNS:
        single[run] = (read(artefacts.stuck(run)),
                       int((~io.read_arrays(artefacts.single(run))["diverged"]).sum()))
    rows = claims.incidental_polysemanticity(
        read(artefacts.CHECKS), read(artefacts.SPARSIFICATION), read(artefacts.EULER), col, fit,
        fit_init, kept(artefacts.NOISE), io.read_arrays(artefacts.NOISE_FOURTH)["fourth"],
        kept(artefacts.SWEEP), single, ip)
    claim_rows.export(rows, claims.CLAIMS, "incidental_polysemanticity", claims.TITLE,
                      "ip_claims", artefacts.FIGURES)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
