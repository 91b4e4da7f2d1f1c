"""`make verify REPAIR=1` on an output edited in place: a hard link to DVC's cache, so the cache
copy is damaged too, which `dvc checkout` and a rerun would spread (tms.pipeline.verify)."""

import subprocess
import sys

import pytest

from tms.pipeline import verify

#: They run DVC repositories, `dvc repro` and `dvc checkout`.
pytestmark = pytest.mark.integration

TEXT = "the right bytes\n" * 100


def _dvc(repo, *args, check=True):
    return subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, capture_output=True,
                          text=True, check=check)


@pytest.fixture
def repo(tmp_path):
    """A DVC repository with the project's linked cache and two stages: a file and a folder."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _dvc(tmp_path, "init", "-q")
    _dvc(tmp_path, "config", "cache.type", "hardlink,symlink")
    (tmp_path / "code.txt").write_text(TEXT)
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n"
        "  file:\n    cmd: cp code.txt out.txt\n    deps: [code.txt]\n    outs: [out.txt]\n"
        "  folder:\n    cmd: mkdir -p dir && echo a > dir/a.txt && echo b > dir/b.txt\n"
        "    deps: [code.txt]\n    outs: [dir]\n")
    _dvc(tmp_path, "repro", "-q")
    return tmp_path


def test_an_output_truncated_in_place_damages_the_cache_and_repair_restores_it(repo):
    out = repo / "out.txt"
    assert out.stat().st_nlink == 2                       # linked to its cache object
    subprocess.run(["truncate", "-s", "100", str(out)], check=True)
    (repo / "dir/b.txt").chmod(0o644)
    with (repo / "dir/b.txt").open("r+") as f:             # in place, as an editor might
        f.write("X")
    changed = verify.changed_outputs(str(repo))
    assert set(changed) == {"dir", "out.txt"} and changed["out.txt"] == "modified"
    assert [p.name for p in verify.damaged_objects(repo, "out.txt")]       # the cache too
    _dvc(repo, "checkout", "--force", "out.txt", check=False)    # DVC's fix keeps the damage
    assert out.stat().st_size == 100
    said = verify.repair(str(repo))
    assert "out.txt: 1 damaged cache object(s) deleted, 1 to rebuild" in said
    assert "file: rerun" in said and "folder: rerun" in said
    assert [line for line in said if line.startswith("dir: ")]     # DVC dropped b.txt's copy
    assert verify.changed_outputs(str(repo)) == {}
    assert out.read_text() == TEXT and (repo / "dir/b.txt").read_text() == "b\n"
    assert not verify.damaged_objects(repo, "out.txt")


def test_a_replaced_output_with_a_whole_cache_comes_back_from_the_cache(repo):
    out = repo / "out.txt"
    out.unlink()
    out.write_text("another file, not the cache's\n")      # a new inode: the cache is whole
    assert verify.damaged_objects(repo, "out.txt") == []
    assert verify.repair(str(repo)) == ["out.txt: cache whole", "file: restored from the cache"]
    assert out.read_text() == TEXT


def test_a_truncated_dvc_lock_file_is_named_with_its_fix(repo, root, monkeypatch, capsys):
    from tms.pipeline import dvc_state, repro
    monkeypatch.chdir(repo)
    assert dvc_state.problem() is None
    (repo / ".dvc/tmp").mkdir(exist_ok=True)
    (repo / ".dvc/tmp/rwlock").write_text('{"read": {"a": ')          # cut by a full disk
    assert "delete it (`rm .dvc/tmp/rwlock`)" in dvc_state.problem()
    assert verify.main([]) == 2
    assert "rwlock is damaged" in capsys.readouterr().err
    (repo / "params.yaml").write_text((root / "params.yaml").read_text())   # valid params
    assert repro.main([]) == 2                                 # before DVC starts
    assert "rwlock is damaged" in capsys.readouterr().err
    (repo / ".dvc/tmp/rwlock").write_text("{}")
    assert dvc_state.problem() is None and verify.main([]) == 0
