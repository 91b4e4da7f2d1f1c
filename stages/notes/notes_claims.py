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
from tms.notes import claims, params, theory
from tms.pipeline import stage

DATA = Path("data/autoencoding_notes")


def main(an):
    t = {name: pd.read_parquet(DATA / f"{name}.parquet")
         for name in ["moments", "skeletons", "linear", "critical_points", "saddle", "gradients",
                      "flows", "energy", "relu"]}
    spectrum = theory.spectrum(theory.sparse_sigma(min(an.linear.S), an.linear.D))[0]
    rows = claims.autoencoding_notes(
        t["moments"], t["skeletons"], t["linear"], t["critical_points"], t["saddle"],
        json.loads((DATA / "saddle.json").read_text()), t["gradients"], t["flows"], t["energy"],
        t["relu"], spectrum)
    claim_rows.export(rows, claims.CLAIMS, "autoencoding_notes", claims.TITLE, "notes_claims",
                      "reports/figures/autoencoding_notes")


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
