"""The claims files' reader and the Monte Carlo deviation the claims rows share
(tms.core.claim_rows)."""

import json
import math

import numpy as np
import pytest

from tms.core import claim_rows


def test_max_z_is_the_largest_deviation_in_standard_errors():
    assert claim_rows.max_z([1.0, 2.0], [1.2, 2.0], [0.1, 0.5]) == pytest.approx(2.0)
    assert claim_rows.max_z(1.3, 1.0, 0.1) == pytest.approx(3.0)       # scalars too
    # a zero standard error: 0 where the estimate is exact, ∞ where it is not
    assert claim_rows.max_z(np.array([1.0, 2.0]), np.array([1.0, 2.5]), np.array([0.0, 1.0])) \
        == pytest.approx(0.5)
    assert math.isinf(claim_rows.max_z([1.0], [1.1], [0.0]))
    # a check that cannot be read never passes: a NaN estimate or standard error, an infinite se
    for estimate, se in ((np.nan, 0.1), (1.0, np.nan), (1.0, np.inf)):
        assert math.isinf(claim_rows.max_z([estimate, 2.0], [1.0, 2.0], [se, 0.1]))


def test_read_folder_reads_every_claims_file_in_name_order(tmp_path):
    assert claim_rows.read_folder(tmp_path) == []
    for paper in ("b_paper", "a_paper"):
        (tmp_path / f"{paper}.json").write_text(json.dumps({"paper": paper, "claims": []}))
    (tmp_path / "notes.txt").write_text("not a claims file")
    assert [p["paper"] for p in claim_rows.read_folder(tmp_path)] == ["a_paper", "b_paper"]


def test_a_record_claim_returns_numbers_and_core_renders_its_row():
    part = claim_rows.Claims(empirical=("train",))

    @part.record(claim_rows.Record(
        id="fig9.slope", statement="the slope is −1", source="fig. 9", paper="−1",
        paper_scale="n 256", stages=("train",), ours="slope {slope:+.2f} ({k} points)",
        tolerance="|slope + 1| ≤ {tol:g}"))
    def _slope(o):
        if o is None:
            return claim_rows.Result(not_computed="no points", scale="n 8")
        return claim_rows.Result(abs(o + 1) <= 0.1, o, 0.02, {"slope": o, "k": 5, "tol": 0.1},
                                 "n 8", inconclusive="n 8 < 256" if o > -1 else None)

    assert part.result("fig9.slope", -1.05).value == -1.05
    row = part.row("fig9.slope", -1.05)
    assert (row["verdict"], row["ours"], row["tolerance"], row["basis"]) == (
        "reproduced", "slope -1.05 (5 points)", "|slope + 1| ≤ 0.1", "empirical")
    assert row["uncertainty"] == 0.02 and row["paper"] == "−1" and row["scale"] == "n 8"
    assert part.row("fig9.slope", -1.5)["verdict"] == "not reproduced"
    assert part.row("fig9.slope", -0.95)["direction"] == "holds"
    assert part.row("fig9.slope", None)["ours"] == "not computed: no points"
    whole = claim_rows.Claims(empirical=("train",))
    whole.include(part)
    assert whole.result("fig9.slope", -1.0).ok


def test_a_record_whose_template_names_a_missing_number_is_an_error():
    part = claim_rows.Claims()

    @part.record(claim_rows.Record(id="fig9.level", statement="s", source="fig. 9", paper="1",
                                   paper_scale="—", stages=(), ours="{level:.2f}", tolerance="—"))
    def _level(o):
        return claim_rows.Result(True, 1.0, numbers={})

    with pytest.raises(KeyError, match="level"):
        part.row("fig9.level", None)


@pytest.mark.parametrize("low, high, undecided", [
    (-1.22, -1.08, False),      # narrower than the tolerance: decides (inside the band)
    (-1.60, -0.90, True),       # wider, reaching the band: undecided
    (-2.00, -1.30, False),      # wider, wholly below the band: decides (a fail)
    (-0.70, 0.10, False),       # wider, wholly above it
])
def test_an_interval_wider_than_the_tolerance_is_undecided_only_where_it_reaches_the_band(
        low, high, undecided):
    why = claim_rows.too_wide(low, high, -1, 0.18, "the 95% interval")
    assert (why is not None) == undecided
    if undecided:
        assert why == f"the 95% interval (±{(high - low) / 2:.2f}) is wider than the tolerance"
