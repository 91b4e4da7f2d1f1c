"""docs/claims.md's calibration: its table (a claim of two parts, a row each) names every empirical
claim of the three papers, and each test the table names exists."""

import re
from pathlib import Path

from tms.core.papers import PAPERS

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "docs" / "claims.md").read_text().split("### Calibration", 1)[1]


def _empirical() -> set[str]:
    return {cid for p in PAPERS for cid, c in p.module("claims").CLAIMS.items()
            if c.basis == "empirical"}


def test_the_calibration_table_names_every_empirical_claim():
    table = [row for row in SECTION.splitlines() if row.startswith("| `")]
    calibrated = [cid for row in table for cid in re.findall(r"`([\w.]+)`", row.split("|")[1])]
    assert set(calibrated) == _empirical(), set(calibrated) ^ _empirical()


def test_each_calibration_test_file_named_exists():
    files = set(re.findall(r"`(tests/[\w/]+\.py)`", SECTION))
    assert files and all((ROOT / f).is_file() for f in files), files
