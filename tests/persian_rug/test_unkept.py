import hashlib
from pathlib import Path

import numpy as np
import pytest

from tms.core import code_deps
from tms.persian_rug import stats, unkept


def _model(seed, n_d=3, n_s=8):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n_d, n_s)).astype(np.float32),
            rng.normal(size=(n_s, n_d)).astype(np.float32), rng.normal(size=n_s).astype(np.float32))


def test_statistics_measured_in_training_read_back_as_the_statistics_of_the_weights(tmp_path):
    rows = {("relu", 3): unkept.measure(*_model(0), 0.2), ("linear", 1): unkept.measure(
        *_model(1), 0.05)}
    unkept.write(rows, tmp_path)
    back = unkept.read(tmp_path)
    assert sorted(back) == [("linear", 1), ("relu", 3)]
    expect = stats.weight_statistics(*_model(0), 0.2)
    assert back[("relu", 3)] == pytest.approx(expect, nan_ok=True)
    assert "code" not in back[("relu", 3)]


def test_a_grid_that_keeps_every_model_writes_no_file_and_reads_back_empty(tmp_path):
    unkept.write({}, tmp_path)
    assert list(tmp_path.iterdir()) == [] and unkept.read(tmp_path) == {}


def test_statistics_measured_by_other_statistics_code_are_refused_naming_the_fix(
        tmp_path, monkeypatch):
    unkept.write({("relu", 0): unkept.measure(*_model(0), 0.2)}, tmp_path)
    monkeypatch.setattr(unkept, "code", lambda: "0123456789abcdef")
    with pytest.raises(ValueError, match=r"statistics of 1 models whose weights were not kept "
                                         r".* rerun their training stage with -f"):
        unkept.read(tmp_path)


def test_the_code_hash_is_that_of_the_statistics_module_training_does_not_import():
    files = [code_deps.SRC / "tms/persian_rug/stats.py", code_deps.SRC / "tms/persian_rug/rows.py"]
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]
    assert unkept.code() == digest
    # the training stage runs the rows and this module, never the statistics themselves
    ran = code_deps.executed([code_deps.ROOT / "stages/persian_rug/pr_train.py"])
    assert Path(files[1]).resolve() in ran and Path(files[0]).resolve() not in ran
