"""Stage: the claims of the notes on toy autoencoding, one row each (tms.notes.claims.CLAIMS),
judged from the outputs of its stages: the data moments and skeletons, the linear autoencoders
and their critical points, the saddle, the gradient flows and the ReLU-output models, with the
spectrum of Σ of the notes' own data (tms.notes.theory.spectrum). Diverged models are left out
(tms.core.divergence.split).

Writes reports/claims/autoencoding_notes.json (tms.core.claim_rows.export), which the report
shows and the site gathers.
"""

import json
from pathlib import Path

import pandas as pd

from tms.core import claim_rows
from tms.notes import artefacts, claims, params, theory
from tms.pipeline import stage


def main(an):
    a, read = artefacts, pd.read_parquet
    spectrum = theory.spectrum(theory.sparse_sigma(min(an.linear.S), an.linear.D))[0]
    rows = claims.autoencoding_notes(
        read(a.MOMENTS), read(a.SKELETONS), read(a.LINEAR), read(a.CRITICAL_POINTS),
        read(a.SADDLE), json.loads(Path(a.SADDLE_SUMMARY).read_text()), read(a.GRADIENTS),
        read(a.FLOWS), read(a.ENERGY), read(a.RELU), spectrum)
    claim_rows.export(rows, claims.CLAIMS, "autoencoding_notes", claims.TITLE, "notes_claims",
                      a.FIGURES)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
