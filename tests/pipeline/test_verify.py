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
    """A DVC repository with the project's linked cache and three stages: a file, a folder, and
    a count of the file's lines (downstream of it)."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _dvc(tmp_path, "init", "-q")
    _dvc(tmp_path, "config", "cache.type", "hardlink,symlink")
    (tmp_path / "code.txt").write_text(TEXT)
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n"
        "  file:\n    cmd: cp code.txt out.txt\n    deps: [code.txt]\n    outs: [out.txt]\n"
        "  folder:\n    cmd: mkdir -p dir && echo a > dir/a.txt && echo b > dir/b.txt\n"
        "    deps: [code.txt]\n    outs: [dir]\n"
        "  count:\n    cmd: grep -c right out.txt > count.txt || true\n    deps: [out.txt]\n"
        "    outs: [count.txt]\n")
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
    assert verify.repair(str(repo)) == ["out.txt: cache whole", "file: restored from the cache",
                                        "count: rerun (downstream of a repaired output)"]
    assert out.read_text() == TEXT


def test_repair_reruns_what_was_computed_from_the_damage(repo):
    # an output damaged in place, then a run that computes from it: DVC relinks the rebuilt
    # output to the damaged cache copy (an object of the right name), so the stage downstream
    # counts the damaged bytes and records them as right; repair restores the output and reruns
    # the stage downstream, so no count of the damage stays
    out, count = repo / "out.txt", repo / "count.txt"
    assert count.read_text() == "100\n"
    with out.open("r+") as f:
        f.write("wrong")                                  # in place: the cache copy too
    (repo / "code.txt").write_text(TEXT + "one more right line\n")
    (repo / "code.txt").write_text(TEXT)                  # touched: the pipeline reruns
    _dvc(repo, "repro", "-q", "--force", "count")
    assert count.read_text() == "99\n"                    # computed from the damage
    said = verify.repair(str(repo))
    assert "count: rerun (downstream of a repaired output)" in said
    assert count.read_text() == "100\n" and verify.changed_outputs(str(repo)) == {}


def test_downstream_lists_every_later_stage_in_an_order_dvc_can_run(repo):
    assert verify.downstream(str(repo), ["file"]) == ["count"]
    assert verify.downstream(str(repo), ["folder"]) == [] == verify.downstream(str(repo), ["count"])


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


def test_a_damaged_dvc_lock_is_named_with_its_fix(repo, root, monkeypatch, capsys):
    # dvc.lock cut short by a kill or a full disk: once a traceback of `make repro`'s pruning
    from tms.pipeline import dvc_state, repro
    monkeypatch.chdir(repo)
    (repo / "params.yaml").write_text((root / "params.yaml").read_text())
    whole = (repo / "dvc.lock").read_text()
    for cut, says in [(whole[:whole.index("md5:") + 2] + '\n  x: "', "not YAML, line "),
                      ("schema: '2.0'\nstages:\n  file:\n    outs:\n    - 3\n",
                       "its stages cut short")]:
        (repo / "dvc.lock").write_text(cut)
        assert says in dvc_state.problem()
        assert repro.main([]) == 2 and verify.main([]) == 2
        err = capsys.readouterr().err
        assert "dvc.lock is damaged" in err and "`git checkout dvc.lock` restores" in err
        assert "Traceback" not in err
    (repo / "dvc.lock").write_text(whole)
    assert dvc_state.problem() is None
