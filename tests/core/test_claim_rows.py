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
