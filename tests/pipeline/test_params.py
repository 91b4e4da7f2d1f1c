import os
import subprocess
import sys

import numpy as np
import pytest
import yaml

from tms.core.schema import ParamsError
from tms.engine.grid import Schedule
from tms.pipeline import params, profiles


@pytest.mark.parametrize("name", ["default", "paper", "smoke"])
def test_shipped_profiles_are_valid(load_profile, name):
    assert params.SECTION.parse(load_profile(name)).persian_rug.eval.n_vectors >= 65536


def test_the_paper_profile_holds_the_authors_settings(load_profile):
    # docs/paper-gaps.md: a change to the default for CPU speed must not move these
    p = params.SECTION.parse(load_profile("paper"))
    pr, ip = p.persian_rug, p.incidental_polysemanticity
    t = pr.train
    assert (t.batch_size, t.lr_scale, t.lr, t.adam_eps, t.window, t.check_every, t.max_steps) \
        == (1024, 0.003, None, 1e-7, 200, 30, 45000)
    authors_grid = {"start": 0.002001, "stop": 0.8, "num": 20}
    assert pr.grid.p.model_dump() == pr.grid.ratio.model_dump() == authors_grid
    assert pr.grid.n_s == [128, 1024, 8192] and pr.grid.models == ["relu"]
    assert (pr.fig2.n_s, pr.fig2.p) == (8192, [0.001, 0.01, 0.05, 0.1, 0.4, 0.6])
    assert (pr.fig3.n_s, pr.fig3.n_d, pr.fig3.p, pr.fig3.lr, pr.fig3.max_steps) \
        == (512, 130, 0.044, None, None)
    assert pr.rug.n_s == 8192
    c = ip.collisions
    assert (c.n, c.m, c.instances, c.lam, c.steps) \
        == (256, list(range(256, 4097, 256)), 16, 1e-3, 7500)       # the authors' 16 m
    assert c.optimizer.model_dump() == {"name": "adamw", "lr": 1e-3, "weight_decay": 0.01}
    s = ip.sparsification
    assert (s.m, s.lam, s.init_std, s.euler.dt[0]) == ([100000], 1e-5, 0.9, 0.5)
    n = ip.noise
    assert (n.n, n.m, n.instances, n.steps, n.record_every) == (8, 16, 5, 100000, 5)
    assert (n.sigma, n.noise) == ([0.07, 0.1, 0.15], ["bipolar", "normal"])
    assert n.optimizer.model_dump() == {"name": "sgd", "lr": 0.02, "weight_decay": 0.0}
    assert ip.single.steps == 1_000_000


def test_linspace_grids_expand_like_numpy(load_profile):
    raw = load_profile("default")
    grid = params.SECTION.parse(raw).persian_rug.grid
    spec = raw["persian_rug"]["grid"]["ratio"]
    ratio = grid.at(grid.n_s[0]).ratio
    assert ratio == [float(v) for v in np.linspace(spec["start"], spec["stop"], spec["num"])]
    assert len(ratio) == spec["num"] and ratio[0] == pytest.approx(spec["start"])


@pytest.mark.integration
def test_a_cpu_stage_validates_without_importing_torch(root):
    # stages that train nothing (theory, plots, site) must not pay torch's import on CPU
    code = ("import sys; from tms.pipeline import params, stage; "
            "params.SECTION.check_devices(params.SECTION.load('params.yaml')); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=root, env={**os.environ, "TMS_DEVICE": "cpu"})
    assert out.stdout.strip() == "False"


def test_schedule_of_a_params_section(load_profile):
    p = params.SECTION.parse(load_profile("default"), "params.yaml")
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
    ({"persian_rug": {"train": {"max_step": 3}}},
     "persian_rug.train.max_step: unknown key (value 3); did you mean 'max_steps'?"),
    ({"persian_rugg": {}}, "persian_rugg: unknown key"),
    ({"persian_rug": {"train": {"lr": -1.0}}}, "persian_rug.train.lr = -1.0"),
    ([1, 2], "the top level must be a mapping"),
])
def test_a_bad_overlay_is_an_error_naming_the_file_and_the_key(tmp_path, load_profile, overlay,
                                                               shown):
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(overlay))
    with pytest.raises(ParamsError) as err:
        profiles.profile(load_profile("default"), path)
    assert str(err.value).startswith(str(path)) and shown in str(err.value)


def test_an_overlay_may_set_a_key_the_default_leaves_to_the_schema(tmp_path, load_profile):
    path = tmp_path / "x.yaml"
    path.write_text("persian_rug:\n  train:\n    lr: 0.002\n")
    assert "lr" not in load_profile("default")["persian_rug"]["train"]
    raw = profiles.profile(load_profile("default"), path)
    assert params.SECTION.parse(raw).persian_rug.train.lr == 0.002


def test_profiles_hold_only_what_differs_from_the_default(root, load_profile):
    default = load_profile("default")
    for path in [root / "profiles/paper.yaml", root / "profiles/smoke.yaml"]:
        overlay = yaml.safe_load(path.read_text())

        def same(node, base, at=""):
            for key, value in node.items():
                if isinstance(value, dict) and isinstance(base[key], dict) and \
                        not {"start", "stop", "num"} >= set(value):
                    yield from same(value, base[key], f"{at}{key}.")
                elif value == base[key]:
                    yield f"{at}{key}"
        assert list(same(overlay, default)) == [], path


@pytest.mark.integration
def test_make_profile_switches_profiles_and_rejects_a_bad_overlay(root, tmp_path):
    subprocess.run(["git", "clone", "-q", str(root), str(tmp_path / "repo")], check=True)
    repo = tmp_path / "repo"

    def make_profile(name: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "tms.pipeline.profiles", name], cwd=repo,
                              capture_output=True, text=True)
    default = profiles.default_params(repo)
    comments = [line for line in (repo / "params.yaml").read_text().splitlines() if "#" in line]
    assert make_profile("paper").returncode == 0
    paper = yaml.safe_load((repo / "params.yaml").read_text())
    assert paper == profiles.profile(default, repo / "profiles/paper.yaml") != default
    # the default's comments stay: each comment line, and each value's comment after its value
    written = (repo / "params.yaml").read_text()
    assert all(c.partition("#")[2] in written for c in comments), "a comment of the default lost"
    assert profiles.default_params(repo) == default       # the committed one, under a profile
    (repo / "profiles/cpu.yaml").write_text("persian_rug:\n  device: cpu\n")
    assert make_profile("cpu").returncode == 0            # from the default, not from paper
    assert yaml.safe_load((repo / "params.yaml").read_text()) == default
    (repo / "profiles/bad.yaml").write_text("persian_rug:\n  train:\n    max_step: 3\n")
    before = (repo / "params.yaml").read_bytes()
    run = make_profile("bad")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "profiles/bad.yaml (over the default params.yaml): invalid parameters" in run.stderr
    assert "persian_rug.train.max_step: unknown key" in run.stderr
    assert "did you mean 'max_steps'?" in run.stderr
    assert (repo / "params.yaml").read_bytes() == before
    # a profile committed (as a snapshot's run is) is not the default the next one goes over
    assert make_profile("smoke").returncode == 0
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam",
                    "a run of the smoke profile"], cwd=repo, check=True)
    assert make_profile("paper").returncode == 0
    assert yaml.safe_load((repo / "params.yaml").read_text()) == paper
    assert profiles.profile_name(repo / "params.yaml") == "paper"


def test_the_profile_of_a_params_file_is_named_through_a_byte_order_mark(tmp_path):
    text = profiles.dump({"a": 1}, "profiles/gpu.yaml")
    for prefix in ("", "\ufeff", "\n  "):
        (tmp_path / "params.yaml").write_text(prefix + text, encoding="utf-8")
        assert profiles.profile_name(tmp_path / "params.yaml") == "gpu", repr(prefix)
    (tmp_path / "params.yaml").write_text("\ufeffa: 1\n", encoding="utf-8")
    assert profiles.profile_name(tmp_path / "params.yaml") == "default"


def test_a_per_n_s_grid_changes_only_its_n_s_and_meets_the_others_cells(load_profile):
    raw = load_profile("paper")
    raw["persian_rug"]["grid"]["by_n_s"] = [
        {"n_s": 8192, "ratio": [0.044, 0.086], "seeds": 2,       # two linspace points, rounded
         "keep_weights": [{"p": 0.2121, "ratio": 0.086}]}]
    grid = params.SECTION.parse(raw).persian_rug.grid
    base = grid.at(1024)
    assert (base.p, base.ratio, base.seeds, base.keep_weights) == (
        grid.p.values(), grid.ratio.values(), 1, "all")
    big = grid.at(8192)
    assert big.ratio == base.ratio[1:3] and big.p == base.p and big.seeds == 2
    assert big.models_count() == 2 * 20 * 2
    assert big.keeps(base.p[5], base.ratio[2]) and not big.keeps(base.p[5], base.ratio[1])
    assert all(base.keeps(p, r) for p in base.p for r in base.ratio)
    raw["persian_rug"]["grid"]["keep_weights"] = "none"
    assert not params.SECTION.parse(raw).persian_rug.grid.at(128).keeps(base.p[0], base.ratio[0])
    with pytest.raises(ValueError, match="n_s = 64 is not one of grid.n_s"):
        grid.at(64)


def test_the_gpu_profile_is_the_paper_profile_but_for_its_own_keys(load_profile, tmp_path):
    paper, gpu = load_profile("paper"), load_profile("gpu")
    pr = params.SECTION.parse(gpu).persian_rug
    assert pr.compute.precision == "tf32"
    assert pr.train == params.SECTION.parse(paper).persian_rug.train
    assert [pr.grid.at(n).models_count() for n in pr.grid.n_s] == [400, 400, 80]
    assert set(pr.grid.at(8192).p) < set(pr.grid.at(1024).p)      # cells meet the other n_s
    assert set(pr.grid.at(8192).ratio) < set(pr.grid.at(1024).ratio)
    assert gpu["autoencoding_notes"] == paper["autoencoding_notes"]
    # a profile that extends itself, through another, is refused
    (tmp_path / "a.yaml").write_text("extends: b\n")
    (tmp_path / "b.yaml").write_text("extends: a\n")
    with pytest.raises(ParamsError, match="which extends it again"):
        profiles.profile(load_profile("default"), tmp_path / "a.yaml")


@pytest.mark.parametrize("profile", [None, "cpu-paper", "smoke"])
def test_a_dvc_set_param_edit_changes_one_line_of_params_yaml(root, tmp_path, profile):
    """params.yaml (and every profile `make profile` writes) is in the style DVC writes back,
    so `dvc exp run -S key=value` changes that key's line and no other."""
    from dvc.utils.hydra import apply_overrides

    from tms.pipeline import profiles

    path = tmp_path / "params.yaml"
    default = (root / "params.yaml").read_text()
    text = (default if profile is None else profiles.dump(
        profiles.profile(profiles.default_params(root), root / f"profiles/{profile}.yaml"),
        f"profiles/{profile}.yaml", default))
    assert profiles.dvc_style(text) == text
    path.write_text(text)
    apply_overrides(str(path), ["persian_rug.fig1.seed=7"])
    before, after = text.splitlines(), path.read_text().splitlines()
    assert len(before) == len(after)
    assert [(a, b) for a, b in zip(before, after) if a != b] == [
        ("    seed: 0", "    seed: 7")]


def test_an_unknown_profile_is_named_with_the_profiles_there_are(capsys):
    from tms.pipeline import forecast, profiles

    for main in (profiles.main, forecast.main):
        assert main(["papr"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: no profile profiles/papr.yaml (profiles: cpu-paper, gpu, ")
        assert "Traceback" not in err


def test_a_missing_params_file_an_oversized_one_and_a_bad_tms_device_are_named(
        tmp_path, monkeypatch, capsys):
    from tms.core import device, params_file
    from tms.core.schema import ParamsError
    from tms.pipeline import stage
    from tms.pipeline.params import SECTION

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as code:
        stage.run(lambda section: None, "doc", params=SECTION, argv=[])
    assert code.value.code == 2
    assert "params.yaml is missing: `git checkout params.yaml`" in capsys.readouterr().err
    big = tmp_path / "params.yaml"
    big.write_text("a: 1\n" + "# pasted\n" * (params_file.MAX_BYTES // 9 + 1))
    with pytest.raises(ParamsError, match="over the 1,000,000 a params file may hold"):
        params_file.read_yaml(big)
    monkeypatch.setenv("TMS_DEVICE", "tpu")
    with pytest.raises(ParamsError, match=r"^TMS_DEVICE \(in the environment, over "
                                          r"persian_rug.device\) = 'tpu'"):
        device.resolve_device("cpu", "persian_rug.device")
