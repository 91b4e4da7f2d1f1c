"""Stage: the claims of *Incidental polysemanticity*, one row each
(tms.incidental.claims.CLAIMS), judged from the outputs of its stages: the closed-form checks, the
sparsification ODE and its Euler comparison, the fig. 3 collisions (the fitted constant c of
c·n²/m, tms.incidental.stats.collision_constant), fig. 4's fourth norms, fig. 5's sweep and
fig. 6's stuck encodings. Diverged models are left out (tms.core.divergence.split).

Writes reports/claims/incidental_polysemanticity.json (tms.core.claim_rows.export), which the
report shows and the site gathers.
"""

from pathlib import Path

import pandas as pd

from tms.core import claim_rows, divergence, io
from tms.incidental import claims, params, stats
from tms.pipeline import stage

DATA = Path("data/incidental_polysemanticity")


def main(ip):
    read = lambda name: pd.read_parquet(DATA / name)  # noqa: E731
    kept = lambda name: divergence.split(read(name))[0]  # noqa: E731
    col, c = kept("collisions.parquet"), ip.collisions
    fit = fit_init = None
    if len(col) >= 2:
        fit = stats.collision_constant(col.polysemantic, c.n, col.m, c.level)
        fit_init = stats.collision_constant(col.benign_pairs_init, c.n, col.m, c.level)
    single = {}          # run → (its stuck encodings, the candidates that did not diverge)
    for run in ("single_printed", "single"):
        single[run] = (read(f"{run}_stuck.parquet"),
                       int((~io.read_arrays(DATA / run)["diverged"]).sum()))
    rows = claims.incidental_polysemanticity(
        read("checks.parquet"), read("sparsification.parquet"), read("euler.parquet"), col, fit,
        fit_init, kept("noise.parquet"), io.read_arrays(DATA / "noise_fourth")["fourth"],
        kept("sweep.parquet"), single, ip)
    claim_rows.export(rows, claims.CLAIMS, "incidental_polysemanticity", claims.TITLE,
                      "ip_claims", "reports/figures/incidental_polysemanticity")


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
