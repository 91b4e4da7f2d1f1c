"""The project's DVC cache links its outputs instead of copying them (.dvc/config: hard links,
else symbolic links), so a grid's weights take the disk once; DVC makes the linked outputs
read-only, and the stages still replace them on a rerun."""

import os
from pathlib import Path

import yaml

from tms.core import machine

STAGE = "pr_train@16"
OUTS = ["data/persian_rug/train/n16.parquet", "data/persian_rug/train/n16_weights/W_in.npy"]


def test_the_project_cache_links_before_it_copies(root):
    assert machine.disk_copies(root) == 1


def _stored_once(repo: Path, out: str) -> bool:
    """Whether ``out`` is (or links to) an entry of the repo's DVC cache, read-only."""
    cached = any(os.path.samefile(repo / out, entry)
                 for entry in (repo / ".dvc/cache").rglob("*") if entry.is_file())
    return cached and (repo / out).stat().st_mode & 0o222 == 0


def test_outputs_are_stored_once_and_replaced_on_a_rerun(tmp_path, pipeline_copy, load_profile,
                                                         dvc_repro):
    params = load_profile("smoke")
    env = pipeline_copy(tmp_path, params)
    dvc_repro(tmp_path, env, STAGE)
    first = {out: (tmp_path / out).read_bytes() for out in OUTS}
    assert all(_stored_once(tmp_path, out) for out in OUTS)
    params["persian_rug"]["train"]["seed"] += 1          # new weights in the same files
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    dvc_repro(tmp_path, env, STAGE)
    for out in OUTS:
        assert (tmp_path / out).read_bytes() != first[out]
        assert _stored_once(tmp_path, out)
