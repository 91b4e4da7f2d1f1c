"""Results snapshots: refused unless the run is named by a revision; the folder and its README;
every snapshot kept in the repository whole and linked from the README."""

import json
import os
import re
import signal
import subprocess
import sys

import pytest

from tms.core import io, progress
from tms.core.claim_rows import Claim
from tms.pipeline import host, profiles, repro, snapshot, stage, verdicts
from tms.pipeline.stage import DEVICE, ENDED, STARTED


def _rec(minute: int, stage_name: str, event: str, **fields) -> dict:
    """A record of the stages' log (tms.pipeline.stage.RECORDS_FILE) at 10:``minute``."""
    return {"at": f"2026-11-27T10:{minute:02d}:00+00:00", "stage": stage_name, "event": event,
            "message": "", **fields}


def _ended(minute: int, stage_name: str, seconds: float, status: int = 0) -> dict:
    return _rec(minute, stage_name, ENDED, seconds=seconds, status=status)


def _git(repo, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    """A git and DVC repository with one stage, up to date and committed."""
    _git(tmp_path, "init", "-q")
    subprocess.run([sys.executable, "-m", "dvc", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "params.yaml").write_text("a: 1\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n  s:\n    cmd: cp code.py out.txt\n    deps: [code.py]\n    outs: [out.txt]\n")
    subprocess.run([sys.executable, "-m", "dvc", "repro", "-q"], cwd=tmp_path, check=True)
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "run")
    return tmp_path


@pytest.mark.integration
def test_check_clean_names_the_revision_only_for_an_up_to_date_committed_run(repo):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                          text=True).stdout.strip()
    assert snapshot.check_clean(repo) == head
    (repo / "params.yaml").write_text("a: 2\n")        # a profile: params.yaml is not code
    assert snapshot.check_clean(repo) == head
    (repo / "code.py").write_text("x = 2\n")
    with pytest.raises(snapshot.SnapshotError, match="not up to date"):
        snapshot.check_clean(repo)
    subprocess.run([sys.executable, "-m", "dvc", "repro", "-q"], cwd=repo, check=True)
    with pytest.raises(snapshot.SnapshotError, match="commit them first"):
        snapshot.check_clean(repo)
    _git(repo, "commit", "-q", "-am", "code")
    (repo / "new_module.py").write_text("y = 1\n")          # code that no commit holds
    with pytest.raises(snapshot.SnapshotError, match="new_module.py"):
        snapshot.check_clean(repo)


def test_snapshot_holds_site_run_files_and_readme(tmp_path):
    (tmp_path / "reports/figures").mkdir(parents=True)
    (tmp_path / "reports/index.html").write_text('<img src="figures/a.png">')
    (tmp_path / "reports/figures/a.png").write_text("png")
    (tmp_path / "reports/figures/unlinked.csv").write_text("x")
    (tmp_path / "params.yaml").write_text(profiles.dump({"a": 1}, "profiles/gpu.yaml"))
    for name in ("reports/claims.json", "reports/claim_values.json"):
        (tmp_path / name).write_text(name)
    (tmp_path / "reports/claims").mkdir()
    (tmp_path / "reports/claims/p.json").write_text("{}")
    for rel in ("data/persian_rug/theory.parquet", "data/persian_rug/train/n64_weights/W.npy",
                "data/persian_rug/fig3_weights/W.npy", "data/persian_rug/train/n64.parquet"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    (tmp_path / "dvc.lock").write_text("dvc.lock")
    (tmp_path / "logs").mkdir()
    records = [_rec(0, "s1", STARTED), _ended(0, "s1", 1.0), _ended(1, "s2", 2.5),
               _ended(2, "s1", 4.0), _ended(3, "gone", 9.0)]  # a stage no longer in the pipeline
    (tmp_path / stage.RECORDS_FILE).write_text("".join(json.dumps(r) + "\n" for r in records)
                                               + "a damaged line\n")
    out = snapshot.snapshot(tmp_path / "results/gpu", tmp_path, revision="abc123",
                            where="a test machine", stages=["s2", "s1"])
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["README.md", "claim_values.json", "claims.json", "claims/p.json",
                     "data/persian_rug/fig3_weights/W.npy", "data/persian_rug/theory.parquet",
                     "data/persian_rug/train/n64.parquet",
                     "data/persian_rug/train/n64_weights/W.npy", "dvc.lock", "params.yaml",
                     "site/figures/a.png", "site/index.html"]          # the grid's weights too
    text = (out / "README.md").read_text()
    assert "Weights: all kept, 0.0 MiB in 2 folders" in text
    assert "`gpu` profile" in text and "`abc123`" in text and "a test machine" in text
    assert "| s1 | 4.0 |" in text and "| s2 | 2.5 |" in text and "| total | 6.5 |" in text
    assert "gone" not in text and text.index("| s2 |") < text.index("| s1 |")   # dvc's order
    (tmp_path / "reports/claims.json").unlink()
    with pytest.raises(FileNotFoundError, match="claims.json"):
        snapshot.snapshot(tmp_path / "results/gpu", tmp_path, revision="abc", where="m",
                          stages=[])
    assert (out / "claims.json").exists()               # the old snapshot is left whole


def test_a_sigterm_while_a_snapshot_is_written_leaves_the_committed_one_whole(tmp_path,
                                                                              monkeypatch):
    old = tmp_path / "results/smoke"
    old.mkdir(parents=True)
    (old / "README.md").write_text("the committed snapshot")

    def killed_midway(out):                     # SIGTERM while the new folder is being written
        with io.atomic_path(out, directory=True) as tmp:
            (tmp / "README.md").write_text("half of a new one")
            os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("SIGTERM did not stop the snapshot")

    monkeypatch.setattr(snapshot, "snapshot", killed_midway)
    before = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(KeyboardInterrupt):
            snapshot.main([str(old)])
    finally:
        signal.signal(signal.SIGTERM, before)
    assert (old / "README.md").read_text() == "the committed snapshot"
    assert sorted(p.name for p in old.parent.iterdir()) == ["smoke"]      # no temporary left


def test_the_readme_puts_the_forecast_range_beside_each_measured_stage():
    text = snapshot.readme("cpu", "abc123", "m", [("s1", 4.0, 1), ("s2", 2.5, 1), ("s3", 1.0, 1)],
                           {"s1": (3.0, 9.0), "s2": (2.2, 2.4)})
    assert "| s1 | 4.0 | 3–9 |" in text and "| s2 | 2.5 | 2 |" in text   # one number: 2 = 2
    assert "| s3 | 1.0 | — |" in text and "| total | 7.5 | 5–11 (training) |" in text


def _device(stage_name, device, why):
    return _rec(0, stage_name, DEVICE, key="persian_rug.device", device=device, why=why)


def test_the_readme_names_the_device_each_auto_stage_ran_on():
    h200 = "NVIDIA H200, 1 CUDA device(s)"
    log = [_rec(0, "s1", STARTED), _device("s1", "cuda", h200), _ended(0, "s1", 4.0),
           _device("s2", "cuda", h200), _device("s2", "cpu", "CUDA is not available"),
           _ended(0, "s2", 2.5), _ended(0, "s3", 1.0)]
    devices = repro.stage_devices(log)
    assert devices == {"s1": "cuda (NVIDIA H200)", "s2": "cpu"}      # the last run's, s3 none
    text = snapshot.readme("cpu", "abc123", "m", [("s1", 4.0, 1), ("s2", 2.5, 1), ("s3", 1.0, 1)],
                           {"s1": (3.0, 9.0)}, devices)
    assert "| s1 | 4.0 | 3–9 | cuda (NVIDIA H200) |" in text and "| s2 | 2.5 | — | cpu |" in text
    assert "| s3 | 1.0 | — | — |" in text and "| total | 7.5 | 3–9 (training) |  |" in text
    plain = snapshot.readme("cpu", "abc123", "m", [("s1", 4.0, 1)], None, {"other": "cpu"})
    assert "| s1 | 4.0 |\n" in plain and "device" not in plain     # no column without one


def test_a_resumed_stage_counts_the_runs_whose_checkpoints_it_took_up():
    def step(minute, name):
        return _rec(minute, name, progress.PROGRESS, done=100, total=900)

    def resume(minute, name):
        return _rec(minute, name, progress.RESUMED, step=3000)

    log = [_rec(0, "a", STARTED), step(1, "a"), step(5, "a"),
           _rec(6, "b", STARTED), _ended(6, "b", 30.0),                   # a cut off (SIGKILL)
           _rec(7, "a", STARTED), resume(7, "a"), _ended(8, "a", 90.0, 143),   # a, SIGTERM
           _rec(9, "a", STARTED), resume(9, "a"), _ended(10, "a", 45.0),
           _rec(11, "c", STARTED), _ended(12, "c", 1.0, 2),
           _rec(13, "c", STARTED), _ended(14, "c", 8.0),                  # c started afresh
           _rec(15, "a", STARTED), _ended(16, "a", 50.0)]                 # a again, no resume
    times = repro.stage_times(log)
    assert times[:3] == [("b", 30.0, 1), ("a", 300.0 + 90.0 + 45.0, 3), ("c", 8.0, 1)]
    assert times[3] == ("a", 50.0, 1)                 # the earlier runs are not counted twice
    assert repro.stage_times(log[6:])[0] == ("a", 90.0 + 45.0, 2)   # the log from run 2
    chain = [_rec(0, "d", STARTED), step(2, "d"), _ended(3, "d", 180.0, 143),
             _rec(4, "d", STARTED), _ended(4, "d", 1.0, 2),                # never trained
             _rec(5, "d", STARTED), resume(5, "d"), _ended(6, "d", 60.0),
             _rec(7, "d", STARTED), step(8, "d"),                          # afresh, cut off
             _rec(9, "d", STARTED), resume(9, "d"), _ended(9, "d", 5.0)]
    assert repro.stage_times(chain) == [("d", 241.0, 3), ("d", 60.0 + 5.0, 2)]
    unreadable = [{**r, "at": "x"} for r in (_rec(0, "a", STARTED), _rec(0, "a", STARTED),
                                             _ended(0, "a", 1.0))]
    assert repro.stage_times(unreadable) == [("a", 1.0, 1)]        # unreadable stamps: no crash
    text = snapshot.readme("cpu", "abc123", "m", times[:3])
    assert "| a | 435.0 |" in text and "| total | 473.0 |" in text
    assert "interruption" in text and ": a (3 runs)." in text and "b (" not in text
    assert "interruption" not in snapshot.readme("cpu", "abc123", "m", [("a", 1.0, 1)])
    assert repro.summary(times[3:])[1] == f"  {'a':<24} {50.0:8.1f} s"


@pytest.mark.integration
def test_the_site_names_the_revision_of_the_snapshot_only_when_its_code_is_heads(repo):
    def commit(msg):
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", msg)
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                              text=True).stdout.strip()
    with open(repo / ".gitignore", "a") as ignore:        # the site is a DVC output
        ignore.write("/reports/\n")
    built = commit("code and params")
    (repo / "reports").mkdir()
    (repo / "reports/index.html").write_text(f'<code id="revision">{built}</code>')
    (repo / "dvc.lock").write_text("# another run\n")
    head = commit("the run's lock")                      # a later commit of what a run writes
    assert snapshot.site_revision(repo) == built != head
    (repo / "notes.md").write_text("docs\n")                # no stage runs it
    commit("docs")
    assert snapshot.site_revision(repo) == built
    (repo / "code.py").write_text("x = 3\n")
    commit("code")
    with pytest.raises(snapshot.SnapshotError, match="whose stages' code differs from HEAD"):
        snapshot.site_revision(repo)
    (repo / "reports/index.html").write_text(
        f'<code id="revision">{built} + uncommitted changes to code.py</code>')
    with pytest.raises(snapshot.SnapshotError, match="not a commit"):
        snapshot.site_revision(repo)


def _claims_file(folder, paper, verdict, direction=None):
    row = Claim("fig2.loss", "loss | matches", "fig. 2", "≈", "n_s 8192", None, ("t",)).row(
        True, "x", "t", "n_s 64", value=0.5)
    row.update(verdict=verdict, direction=direction)
    (folder / "claims").mkdir(parents=True)
    (folder / "claims" / f"{paper}.json").write_text(json.dumps(
        {"paper": paper, "title": f"The {paper} paper", "claims": [row]}))
    (folder / "README.md").write_text(f"Made by git revision `{'a' * 40}` with `params.yaml` and "
                                      "`dvc.lock` of this folder, on a test machine.\n")


def test_the_verdicts_page_shows_every_snapshot_side_by_side(tmp_path):
    _claims_file(tmp_path / "zeta", "persian_rug", "reproduced")
    _claims_file(tmp_path / "default", "persian_rug", "inconclusive at this scale", "fails")
    (tmp_path / "empty").mkdir()                          # no claims: not a snapshot
    text = verdicts.page(tmp_path)
    assert "| [default](default/site/index.html) | `aaaaaaaaaaaa` | a test machine | " \
        "1 inconclusive (fails at this scale) |  |" in text
    assert "| claim | basis | default | zeta |" in text             # the default first
    assert ("| `fig2.loss`: loss \\| matches | empirical | **inconclusive (fails at this "
            "scale)** 0.5 (n_s 64) | **reproduced** 0.5 (n_s 64) |") in text
    assert "empty" not in text and "## The persian_rug paper" in text
    assert verdicts.write(tmp_path, readme=None).read_text() == text
    # stages the snapshot's table says ran on a GPU are named beside the machine
    readme = tmp_path / "zeta" / "README.md"
    readme.write_text(readme.read_text() + "\n| s1 | 4.0 | — | cpu |\n| s2 | 2.0 | 9 | cuda "
                      "(NVIDIA H200) |\n| s3 | 1.0 | — | cuda (NVIDIA H200) |\n")
    assert verdicts.about(tmp_path / "zeta") == (
        "aaaaaaaaaaaa", "a test machine; s2, s3 on cuda (NVIDIA H200)")
    with pytest.raises(FileNotFoundError, match="no snapshot"):
        verdicts.page(tmp_path / "empty")


def test_every_kept_snapshot_is_whole_and_linked_from_the_readme(root):
    readme = (root / "README.md").read_text()
    kept = sorted(p for p in (root / "results").iterdir() if p.is_dir())
    assert kept, "no results snapshot in results/"
    for folder in kept:
        for name in ("README.md", "params.yaml", "dvc.lock", "claims.json",
                     "claim_values.json", "site/index.html"):
            assert (folder / name).is_file(), f"{folder.name}: {name} missing"
        assert list((folder / "claims").glob("*.json")), f"{folder.name}: no claims rows"
        assert re.search(rf"\(results/{folder.name}/site/index\.html\)", readme), folder.name
        revision = re.search(r"git revision `([0-9a-f]{40})`", (folder / "README.md").read_text())
        assert revision, f"{folder.name}: README names no revision"
        site = re.search(r'<code id="revision">([^<]*)</code>',
                         (folder / "site/index.html").read_text())
        assert site and site.group(1) == revision.group(1), f"{folder.name}: two revisions"
    assert "(results/README.md)" in readme
    assert (root / "results/README.md").read_text() == verdicts.page(root / "results")


def test_the_machine_names_the_cpu_model_and_torch_kernels_that_decide_the_bytes():
    import torch

    where = host.machine()
    assert host.cpu_model() and host.cpu_model() in where
    assert f"torch CPU kernels: {torch.backends.cpu.get_cpu_capability()}" in where


def test_weights_over_the_cap_stay_out_of_a_snapshot_but_fig3s_and_the_readme_says_so(
        tmp_path, monkeypatch):
    for rel in ("data/persian_rug/train/n64_weights/W.npy", "data/persian_rug/fig3_weights/W.npy",
                "data/persian_rug/train/n64.parquet", "data/persian_rug/train/n64_ends/m.npy"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"x" * 1000)
    monkeypatch.setattr(snapshot, "MAX_WEIGHTS", 1999)
    files, said = snapshot.evidence_files(tmp_path)
    assert [f.as_posix() for f in files] == ["data/persian_rug/fig3_weights/W.npy",
                                             "data/persian_rug/train/n64.parquet"]
    assert "over the 0 MiB a snapshot keeps" in said and "fig3_weights" in said
    monkeypatch.setattr(snapshot, "MAX_WEIGHTS", 2000)
    assert len(snapshot.evidence_files(tmp_path)[0]) == 3     # never the training states
