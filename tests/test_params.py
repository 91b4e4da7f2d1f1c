from pathlib import Path

import pytest

from params_edit import DEFAULT, DELETE, with_value
from tms import params

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("profile", sorted((ROOT / "profiles").glob("*.yaml")) + [ROOT / "params.yaml", ROOT / "tests/profiles/tiny.yaml"])
def test_shipped_profiles_are_valid(profile):
    assert params.load(profile).persian_rug.eval.n_vectors >= 65536


@pytest.mark.parametrize("path, value, expected", [
    ("persian_rug.grid.p", [0.1, 1.5], "persian_rug.grid.p"),
    ("persian_rug.grid.p", [0.0], "(0, 1]"),
    ("persian_rug.grid.ratio", [0.5, 1.2], "persian_rug.grid.ratio"),
    ("persian_rug.grid.ratio", [], "empty"),
    ("persian_rug.fig3.p", 0.0, "persian_rug.fig3.p"),
    ("persian_rug.train.lr", 0.0, "persian_rug.train.lr"),
    ("persian_rug.train.lr", -1e-3, "greater than 0"),
    ("persian_rug.train.lr_scale", "fast", "persian_rug.train.lr_scale"),
    ("persian_rug.train.batch_size", 0, "persian_rug.train.batch_size"),
    ("persian_rug.train.windw", 3, "unknown key"),
    ("persian_rug.rug.n_s", 1000, "power of two"),
    ("persian_rug.fig1.n_s", 100, "persian_rug.fig1.n_s"),
    ("persian_rug.fig1.n_d", 300, "n_d = 300"),
    ("persian_rug.eval.n_vectors", 1000, "persian_rug.eval.n_vectors"),
    ("persian_rug.compute.memory_budget_mb", 0, "persian_rug.compute.memory_budget_mb"),
    ("persian_rug.compute.executor", "dask", "'local' or 'ray'"),
    ("persian_rug.train.seed", -1, "persian_rug.train.seed"),
    ("persian_rug.grid.seeds", 1.5, "persian_rug.grid.seeds"),
    ("persian_rug.grid.models", ["relu", "tanh"], "persian_rug.grid.models"),
    ("persian_rug.device", "tpu", "persian_rug.device"),
    ("persian_rug.fig3", DELETE, "missing"),
])
def test_bad_params_name_key_value_and_rule(path, value, expected):
    with pytest.raises(params.ParamsError) as err:
        params.parse(with_value(path, value), "params.yaml")
    msg = str(err.value)
    assert expected in msg
    assert path.rsplit(".", 1)[0] in msg


def test_error_message_names_value_and_allowed_range():
    with pytest.raises(params.ParamsError) as err:
        params.parse(with_value("persian_rug.grid.p", [0.1, 1.5]), "params.yaml")
    assert "1.5" in str(err.value) and "(0, 1]" in str(err.value)


def test_linspace_grids_expand_like_numpy():
    grid = params.load(ROOT / "params.yaml").persian_rug.grid
    spec = DEFAULT["persian_rug"]["grid"]["ratio"]
    assert len(grid.ratio_values()) == spec["num"]
    assert grid.ratio_values()[0] == pytest.approx(spec["start"])


def test_missing_cuda_is_a_params_error(monkeypatch):
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("TMS_DEVICE", raising=False)
    with pytest.raises(params.ParamsError, match="CUDA"):
        params.resolve_device("cuda")
    assert params.resolve_device("auto") == "cpu"
