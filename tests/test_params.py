import os
import subprocess
import sys
from pathlib import Path

import pytest

from params_edit import DEFAULT
from tms import params
from tms.train import Schedule

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("profile", sorted((ROOT / "profiles").glob("*.yaml")) + [ROOT / "params.yaml", ROOT / "tests/profiles/tiny.yaml"])
def test_shipped_profiles_are_valid(profile):
    assert params.load(profile).persian_rug.eval.n_vectors >= 65536


def test_linspace_grids_expand_like_numpy():
    grid = params.load(ROOT / "params.yaml").persian_rug.grid
    spec = DEFAULT["persian_rug"]["grid"]["ratio"]
    assert len(grid.ratio_values()) == spec["num"]
    assert grid.ratio_values()[0] == pytest.approx(spec["start"])


def test_a_cpu_stage_validates_without_importing_torch():
    # stages that train nothing (theory, plots, site) must not pay torch's import on CPU
    code = ("import sys; from tms import stage, params; "
            "params.check_devices(params.load('params.yaml')); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={**os.environ, "TMS_DEVICE": "cpu"})
    assert out.stdout.strip() == "False"


def test_schedule_of_a_params_section():
    p = params.parse(DEFAULT, "params.yaml")
    t = p.persian_rug.train
    assert Schedule.of(t) == Schedule(t.batch_size, t.adam_eps, t.window, t.check_every,
                                      t.max_steps, t.diverge_factor)
    assert Schedule.of(t, 7).max_steps == 7
    n = p.autoencoding_notes.linear.train
    assert Schedule.of(n, 11) == Schedule(n.batch_size, n.adam_eps, n.window, n.check_every, 11,
                                          n.diverge_factor)
