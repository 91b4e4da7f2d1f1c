import copy
from pathlib import Path

import pytest

from params_edit import DEFAULT, DELETE, with_value
from tms import params

ROOT = Path(__file__).resolve().parents[1]
SECTION = "incidental_polysemanticity"


def _with(path: str, value):
    return with_value(f"{SECTION}.{path}", DELETE if value is None else value)


@pytest.mark.parametrize("path, value, expected", [
    ("noise.sigma", [0.1, -0.1], "greater than or equal to 0"),
    ("sweep.sigma", [0.0, 0.1], "greater than 0"),
    ("sweep.lam", [-1e-3, 0.1], "greater than 0"),
    ("collisions.lam", -1e-3, "greater than or equal to 0"),
    ("collisions.optimizer.lr", 0.0, "greater than 0"),
    ("collisions.optimizer.name", "rmsprop", "'adam', 'adamw' or 'sgd'"),
    ("noise.optimizer.weight_decay", 0.01, "adamw only"),
    ("noise.noise", ["uniform"], "'bipolar' or 'normal'"),
    ("single.noise", "laplace", "'bipolar' or 'normal'"),
    ("collisions.m", [16, 64], "must be >= n = 32"),
    ("collisions.level", 1.0, "less than 1"),
    ("sparsification.lam", 0.1, "1/sqrt(m)"),
    ("sparsification.euler.dt", [0.5, 0.3], "multiple of the next"),
    ("sparsification.euler.lam", 0.5, "1/sqrt(m)"),
    ("single.stuck_below", 0.0, "greater than 0"),
    ("checks.m_exact", 9, "less than or equal to 6"),
    ("noise.record_every", 0, "greater than or equal to 1"),
    ("device", "tpu", "pattern"),
    ("noise.sigmas", [0.1], "unknown key"),
    ("sweep", None, "missing"),
])
def test_bad_incidental_params_name_key_value_and_rule(path, value, expected):
    with pytest.raises(params.ParamsError) as err:
        params.parse(_with(path, value), "params.yaml")
    msg = str(err.value)
    assert expected in msg
    assert f"{SECTION}.{path.rsplit('.', 1)[0]}" in msg


def test_section_is_required_and_profiles_differ_in_scale():
    raw = copy.deepcopy(DEFAULT)
    del raw[SECTION]
    with pytest.raises(params.ParamsError, match=f"{SECTION}: missing"):
        params.parse(raw)
    default = params.load(ROOT / "params.yaml").incidental_polysemanticity
    paper = params.load(ROOT / "profiles/paper.yaml").incidental_polysemanticity
    assert paper.collisions.n == 256 and paper.collisions.m == [256, 512, 1024, 2048, 4096]
    assert paper.collisions.instances == 16 and paper.collisions.steps == 7500
    assert default.collisions.n < paper.collisions.n
    assert (paper.noise.n, paper.noise.m, paper.noise.steps) == (8, 16, 100000)
    assert paper.sparsification.m == [100000] and paper.sparsification.lam == 1e-5
