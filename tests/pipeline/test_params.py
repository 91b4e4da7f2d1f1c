import os
import subprocess
import sys

import pytest
import yaml

from tms.engine.train import Schedule
from tms.pipeline import params, profiles


@pytest.mark.parametrize("name", ["default", "paper", "tiny"])
def test_shipped_profiles_are_valid(load_profile, name):
    assert params.parse(load_profile(name)).persian_rug.eval.n_vectors >= 65536


def test_linspace_grids_expand_like_numpy(load_profile):
    raw = load_profile("default")
    grid = params.parse(raw).persian_rug.grid
    spec = raw["persian_rug"]["grid"]["ratio"]
    assert len(grid.ratio_values()) == spec["num"]
    assert grid.ratio_values()[0] == pytest.approx(spec["start"])


def test_a_cpu_stage_validates_without_importing_torch(root):
    # stages that train nothing (theory, plots, site) must not pay torch's import on CPU
    code = ("import sys; from tms.pipeline import params, stage; "
            "params.check_devices(params.load('params.yaml')); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=root, env={**os.environ, "TMS_DEVICE": "cpu"})
    assert out.stdout.strip() == "False"


def test_schedule_of_a_params_section(load_profile):
    p = params.parse(load_profile("default"), "params.yaml")
    t = p.persian_rug.train
    assert Schedule.of(t) == Schedule(t.batch_size, t.adam_eps, t.window, t.check_every,
                                      t.max_steps, t.diverge_factor)
    assert Schedule.of(t, 7).max_steps == 7
    n = p.autoencoding_notes.linear.train
    assert Schedule.of(n, 11) == Schedule(n.batch_size, n.adam_eps, n.window, n.check_every, 11,
                                          n.diverge_factor)


def test_an_overlay_replaces_values_and_keeps_the_rest():
    default = {"a": {"grid": [1, 2], "lr": 0.1, "fig": {"n": 3, "m": 4}}, "b": {"seed": 0}}
    merged = profiles.merge(default, {"a": {"grid": {"start": 1, "stop": 2, "num": 3},
                                            "fig": {"m": None}}})
    assert merged == {"a": {"grid": {"start": 1, "stop": 2, "num": 3}, "lr": 0.1,
                            "fig": {"n": 3, "m": None}}, "b": {"seed": 0}}
    assert default["a"]["grid"] == [1, 2] and default["a"]["fig"]["m"] == 4   # not modified


@pytest.mark.parametrize("overlay, shown", [
    ({"a": {"lrr": 0.2}}, "a.lrr: unknown key: params.yaml has no such key; did you mean 'lr'?"),
    ({"c": {}}, "c: unknown key"),
    ({"a": 3}, None),                               # a whole section replaced: the schema's job
    ([1, 2], "the top level must be a mapping"),
])
def test_an_overlay_key_the_default_lacks_is_an_error_naming_the_file(overlay, shown):
    default = {"a": {"lr": 0.1}, "b": {}}
    if shown is None:
        assert profiles.merge(default, overlay, "x.yaml") == {"a": 3, "b": {}}
        return
    with pytest.raises(params.ParamsError) as err:
        profiles.merge(default, overlay, "x.yaml")
    assert str(err.value).startswith("x.yaml: ") and shown in str(err.value)


def test_profiles_hold_only_what_differs_from_the_default(root, load_profile):
    default = load_profile("default")
    for path in [root / "profiles/paper.yaml", root / "tests/profiles/tiny.yaml"]:
        overlay = yaml.safe_load(path.read_text())

        def same(node, base, at=""):
            for key, value in node.items():
                if isinstance(value, dict) and isinstance(base[key], dict) and \
                        not {"start", "stop", "num"} >= set(value):
                    yield from same(value, base[key], f"{at}{key}.")
                elif value == base[key]:
                    yield f"{at}{key}"
        assert list(same(overlay, default)) == [], path


def test_make_profile_writes_the_merged_params_and_rejects_a_bad_overlay(root, tmp_path,
                                                                         load_profile):
    subprocess.run(["git", "clone", "-q", str(root), str(tmp_path / "repo")], check=True)
    repo = tmp_path / "repo"
    run = subprocess.run([sys.executable, "-m", "tms.pipeline.profiles", "paper"], cwd=repo,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    written = yaml.safe_load((repo / "params.yaml").read_text())
    assert written == profiles.profile(profiles.committed_default(repo),
                                       repo / "profiles/paper.yaml")
    assert params.parse(written).persian_rug.grid.n_s == [128, 1024, 8192]
    (repo / "profiles/bad.yaml").write_text("persian_rug:\n  train:\n    max_step: 3\n")
    before = (repo / "params.yaml").read_bytes()
    run = subprocess.run([sys.executable, "-m", "tms.pipeline.profiles", "bad"], cwd=repo,
                         capture_output=True, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "profiles/bad.yaml: persian_rug.train.max_step: unknown key" in run.stderr
    assert "did you mean 'max_steps'?" in run.stderr
    assert (repo / "params.yaml").read_bytes() == before
