"""Stage: the claims of *Incidental polysemanticity*, one row each
(tms.incidental.claims.CLAIMS), each judged by the check declared beside it from the outputs of
the paper's stages (tms.incidental.evidence.Outputs.load): the closed-form checks, the
sparsification ODE and its Euler comparison, the fig. 3 collisions (the fitted constant c of
c·n²/m, tms.incidental.stats.collision_constant), fig. 4's fourth norms, fig. 5's sweep and
fig. 6's stuck encodings. Diverged models are left out (tms.core.divergence.split).

Writes reports/claims/incidental_polysemanticity.json (tms.core.claim_rows.export), which the
report shows and the site gathers.
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import claim_rows, papers
from tms.incidental import artefacts, claims, evidence, params
from tms.pipeline import stage


def main(ip):
    claim_rows.export(claims.CLAIMS.rows(evidence.Outputs.load(ip)), claims.CLAIMS,
                      papers.paper(params.KEY), artefacts.FIGURES)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
