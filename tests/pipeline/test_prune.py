"""A profile switch and back: the stale outputs of stages no longer in the pipeline removed, so
the workspace is as a fresh run leaves it and unchanged stages come back from the run cache
(tms.pipeline.prune)."""

import subprocess
import sys

import pytest
import yaml

from tms.pipeline import prune

#: They run DVC repositories and `dvc repro`.
pytestmark = pytest.mark.integration


def _dvc(repo, *args):
    return subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, capture_output=True,
                          text=True, check=True)


DVC_YAML = """stages:
  train:
    matrix:
      n: ${sizes}
    cmd: mkdir -p out && echo ${item.n} > out/n${item.n}.txt
    params: [sizes]
    outs:
      - out/n${item.n}.txt
  total:
    cmd: cat out/*.txt > total.txt && echo run >> log.txt
    deps: [out]
    outs: [total.txt]
"""


def test_switching_params_and_back_leaves_no_stale_output_and_reruns_nothing(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _dvc(tmp_path, "init", "-q")
    (tmp_path / "dvc.yaml").write_text(DVC_YAML)
    (tmp_path / ".gitignore").write_text("/out/\n/total.txt\n/log.txt\n")   # as /data/ here
    (tmp_path / "params.yaml").write_text("sizes: [64, 128]\n")
    _dvc(tmp_path, "repro", "-q")
    lock = (tmp_path / "dvc.lock").read_text()
    (tmp_path / "params.yaml").write_text("sizes: [16]\n")        # another profile
    assert prune.prune(tmp_path) == ["train@128", "train@64"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []
    assert "train@64" not in (tmp_path / "dvc.lock").read_text()
    _dvc(tmp_path, "repro", "-q")
    assert (tmp_path / "total.txt").read_text() == "16\n"
    (tmp_path / "params.yaml").write_text("sizes: [64, 128]\n")   # and back
    assert prune.prune(tmp_path) == ["train@16"]
    _dvc(tmp_path, "repro", "-q")
    assert (tmp_path / "total.txt").read_text() == "128\n64\n"
    assert (tmp_path / "log.txt").read_text() == "run\nrun\n"   # total came from the run cache
    assert yaml.safe_load((tmp_path / "dvc.lock").read_text()) == yaml.safe_load(lock)  # as then
    assert prune.prune(tmp_path) == []
