from pathlib import Path

import pytest

from params_edit import DEFAULT
from tms import params

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("profile", sorted((ROOT / "profiles").glob("*.yaml")) + [ROOT / "params.yaml", ROOT / "tests/profiles/tiny.yaml"])
def test_shipped_profiles_are_valid(profile):
    assert params.load(profile).persian_rug.eval.n_vectors >= 65536


def test_linspace_grids_expand_like_numpy():
    grid = params.load(ROOT / "params.yaml").persian_rug.grid
    spec = DEFAULT["persian_rug"]["grid"]["ratio"]
    assert len(grid.ratio_values()) == spec["num"]
    assert grid.ratio_values()[0] == pytest.approx(spec["start"])
