"""The claims table of the notes on toy autoencoding (tms.notes.claims.autoencoding_notes)."""

import numpy as np
import pandas as pd
import pytest

from tms.notes import claims, data, flows, theory
from tms.pipeline import claim_rows


@pytest.fixture(scope="module")
def inputs():
    sigma = theory.sparse_sigma(0.5, 5, theory.scale_factors(5, 0.25))
    C = theory.invertible_c(2, 0)
    saddle, summary = theory.saddle_table(sigma, [1, 3], C, np.geomspace(1e-3, 10, 5))
    linear = pd.DataFrame([{"spectrum": sp, "S": 0.5, "D": 5, "d": d, "steps_cap": cap,
                            "gap": 1e-3 * 100 / cap, "angle_top_deg": (80.0 if sp == "sparse"
                                                                        and d > 1 else 200.0 / cap),
                            "angle_u1_deg": 100.0 / cap, "commutator": 1.0 / cap,
                            "projection_residual": 1.0 / cap}
                           for sp in ("sparse", "scaled") for d in (1, 2) for cap in (10, 100)])
    relu = pd.DataFrame({"S": [0.9, 0.99], "D": 20, "d": 5, "share_ge2": [0.9, 0.2],
                         "mass_ge2": [data.mass_ge2(0.9, 20), data.mass_ge2(0.99, 20)]})
    return dict(moments=data.moments_table([0.5, 0.9], [3, 6], 20000, 1),
                skeletons=data.skeletons_table([0.8, 0.99], [5, 20], 5000, 2),
                linear=linear, critical=theory.critical_points_table(sigma, 2, C), saddle=saddle,
                saddle_summary=summary,
                gradients=flows.gradient_checks(0.5, 5, 2, 200, 0, 0.25),
                flows=flows.flows_table(0.5, 5, 2, 0.25, 0.1, 0, 400.0, 0.05, 8),
                energy=flows.energy_along_flow(5, 2, 0.1, 0, 30.0, 20), relu=relu)


def test_every_claim_has_a_verdict_and_good_inputs_reproduce(inputs):
    table = claims.autoencoding_notes(**inputs)
    assert list(table.columns) == claim_rows.COLUMNS and len(table) == 19
    assert table.verdict.value_counts().to_dict() == {"reproduced": 14, "caveat": 2,
                                                      "erratum": 2, "answered": 1}
    answered = table[table.verdict == "answered"].ours.iloc[0]
    ratio = 0.2 / data.mass_ge2(0.99, 20)
    assert f"{ratio:.0f}×" in answered


def test_verdicts_flip_when_the_measurement_misses(inputs):
    bad = dict(inputs)
    bad["linear"] = inputs["linear"].assign(gap=0.05)
    saddle = inputs["saddle"].copy()
    saddle.loc[0, "decrease"] *= 1.01
    bad["saddle"] = saddle
    table = claims.autoencoding_notes(**bad).set_index("source")
    assert table.loc["Prop. 1, Cor. 2"].verdict.tolist()[0] == "not reproduced"
    assert table.loc["Prop. 3 (eq. 18)"].verdict == "not reproduced"


def test_claims_of_trained_models_that_all_diverged_read_not_computed(inputs):
    table = claims.autoencoding_notes(**{**inputs, "linear": inputs["linear"].iloc[:0],
                                         "relu": inputs["relu"].iloc[:0]})
    assert len(table) == 19
    gone = table[table.verdict == "not computed"]
    assert len(gone) == 5
    assert set(gone.source) == {"Prop. 1, Cor. 2", "Prop. 1 (eq. 7)", "Cor. 2", "sec. 3.1"}
