"""Where the stages of the notes on toy autoencoding write, named once: every stage script and the
claims stage take their paths from here, and :func:`outs` is checked against dvc.yaml
(tests/core/test_artefacts.py). Paths are relative to the repository root.
"""

from __future__ import annotations

DATA = "data/autoencoding_notes"
MOMENTS = f"{DATA}/moments.parquet"
SKELETONS = f"{DATA}/skeletons.parquet"
LINEAR = f"{DATA}/linear.parquet"
CRITICAL_POINTS = f"{DATA}/critical_points.parquet"
SADDLE = f"{DATA}/saddle.parquet"
SADDLE_SUMMARY = f"{DATA}/saddle.json"
GRADIENTS = f"{DATA}/gradients.parquet"
FLOWS = f"{DATA}/flows.parquet"
ENERGY = f"{DATA}/energy.parquet"
RELU = f"{DATA}/relu.parquet"
RELU_STRATA = f"{DATA}/relu_strata.parquet"
#: The report's figures; the claims stage links each claim to its figure there.
FIGURES = "reports/figures/autoencoding_notes"
CLAIMS = "reports/claims/autoencoding_notes.json"


def outs() -> dict[str, list[str]]:
    """Every data stage's outputs (DVC stage name → paths)."""
    return {"notes_data": [MOMENTS, SKELETONS], "notes_linear": [LINEAR],
            "notes_saddle": [CRITICAL_POINTS, SADDLE, SADDLE_SUMMARY],
            "notes_flows": [GRADIENTS, FLOWS, ENERGY], "notes_relu": [RELU, RELU_STRATA],
            "notes_claims": [CLAIMS]}
