"""Stage: the claims of the notes on toy autoencoding, one row each (tms.notes.claims.CLAIMS),
each judged by the check declared beside it from the outputs of the notes' stages
(tms.notes.evidence.Outputs.load): the data moments and skeletons, the linear autoencoders and
their critical points, the saddle, the gradient flows and the ReLU-output models, with the
spectrum of Σ of the notes' own data. Diverged models are left out (tms.core.divergence.split).

Writes reports/claims/autoencoding_notes.json (tms.core.claim_rows.export), which the report
shows and the site gathers.
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import claim_rows, papers
from tms.notes import artefacts, claims, evidence, params
from tms.pipeline import stage


def main(an):
    claim_rows.export(claims.CLAIMS.rows(evidence.Outputs.load(an)), claims.CLAIMS,
                      papers.paper(params.KEY), artefacts.FIGURES)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
