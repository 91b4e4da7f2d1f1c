"""Stage: the Persian Rug paper's claims, one row each (tms.persian_rug.claims.CLAIMS), every
claim's check run on the outputs of its stages (tms.persian_rug.evidence.Outputs.load: the theory
and rug tables, the fig. 3 model and its weights, every trained grid's training table and
statistics with those of its untrained weights, the scaling theory and fits; diverged models are
left out, tms.core.divergence.split).

Writes reports/claims/persian_rug.json (tms.core.claim_rows.export), which the report shows and
the site gathers.
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import claim_rows, papers
from tms.persian_rug import artefacts, claims, evidence, params
from tms.pipeline import stage


def main(pr):
    claim_rows.export(claims.CLAIMS.rows(evidence.Outputs.load(pr)), claims.CLAIMS,
                      papers.paper(params.KEY), artefacts.FIGURES)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
