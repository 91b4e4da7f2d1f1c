"""docs/claims.md's calibration: its table (a claim of two parts, a row each) and its list of the
claims not yet calibrated name every empirical claim of the three papers, none in both, and each
test the table names exists."""

import re
from pathlib import Path

from tms.core.papers import PAPERS

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "docs" / "claims.md").read_text().split("### Calibration", 1)[1]


def _empirical() -> set[str]:
    return {cid for p in PAPERS for cid, c in p.module("claims").CLAIMS.items()
            if c.basis == "empirical"}


def test_the_calibration_table_and_the_list_left_name_every_empirical_claim():
    table = [row for row in SECTION.splitlines() if row.startswith("| `")]
    calibrated = [cid for row in table for cid in re.findall(r"`([\w.]+)`", row.split("|")[1])]
    left = re.findall(r"`([\w.]+)`", SECTION.split("Not yet calibrated:", 1)[1].split(
        "Their tests", 1)[0])
    assert len(left) == len(set(left)) and not set(left) & set(calibrated), left
    assert set(calibrated) | set(left) == _empirical(), (set(calibrated) | set(left)) ^ _empirical()


def test_each_calibration_test_file_named_exists():
    files = set(re.findall(r"`(tests/[\w/]+\.py)`", SECTION))
    assert files and all((ROOT / f).is_file() for f in files), files
