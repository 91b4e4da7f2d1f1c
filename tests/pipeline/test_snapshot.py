"""Results snapshots: refused unless the run is named by a revision; the folder and its README;
every snapshot kept in the repository whole and linked from the README."""

import json
import re
import subprocess
import sys

import pytest

from tms.core.claim_rows import Claim
from tms.pipeline import host, profiles, repro, snapshot, verdicts


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
    (tmp_path / "logs/repro.log").write_text(
        "t s1: started\nt s1: done in 1.0 s\nt s2: done in 2.5 s\nt s1: done in 4.0 s\n"
        "t gone: done in 9.0 s\n")                   # a stage no longer in the pipeline
    out = snapshot.snapshot(tmp_path / "results/gpu", tmp_path, revision="abc123",
                            where="a test machine", stages=["s2", "s1"])
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["README.md", "claim_values.json", "claims.json", "claims/p.json",
                     "data/persian_rug/fig3_weights/W.npy", "data/persian_rug/theory.parquet",
                     "data/persian_rug/train/n64.parquet", "dvc.lock", "params.yaml",
                     "site/figures/a.png", "site/index.html"]          # no grid weights
    text = (out / "README.md").read_text()
    assert "`gpu` profile" in text and "`abc123`" in text and "a test machine" in text
    assert "| s1 | 4.0 |" in text and "| s2 | 2.5 |" in text and "| total | 6.5 |" in text
    assert "gone" not in text and text.index("| s2 |") < text.index("| s1 |")   # dvc's order
    (tmp_path / "reports/claims.json").unlink()
    with pytest.raises(FileNotFoundError, match="claims.json"):
        snapshot.snapshot(tmp_path / "results/gpu", tmp_path, revision="abc", where="m",
                          stages=[])
    assert (out / "claims.json").exists()               # the old snapshot is left whole


def test_the_readme_puts_the_forecast_range_beside_each_measured_stage():
    text = snapshot.readme("cpu", "abc123", "m", [("s1", 4.0, 1), ("s2", 2.5, 1), ("s3", 1.0, 1)],
                           {"s1": (3.0, 9.0), "s2": (2.2, 2.4)})
    assert "| s1 | 4.0 | 3–9 |" in text and "| s2 | 2.5 | 2 |" in text   # one number: 2 = 2
    assert "| s3 | 1.0 | — |" in text and "| total | 7.5 | 5–11 (training) |" in text


def test_the_readme_names_the_device_each_auto_stage_ran_on():
    log = ["t s1: started", "t s1: persian_rug.device = 'auto': cuda (NVIDIA H200, 1 CUDA "
           "device(s))", "t s1: done in 4.0 s",
           "t s2: persian_rug.device = 'auto': cuda (NVIDIA H200, 1 CUDA device(s))",
           "t s2: persian_rug.device = 'auto': cpu (CUDA is not available to this torch build "
           "or machine)", "t s2: done in 2.5 s", "t s3: done in 1.0 s"]
    devices = repro.stage_devices(log)
    assert devices == {"s1": "cuda (NVIDIA H200)", "s2": "cpu"}      # the last run's, s3 none
    text = snapshot.readme("cpu", "abc123", "m", [("s1", 4.0, 1), ("s2", 2.5, 1), ("s3", 1.0, 1)],
                           {"s1": (3.0, 9.0)}, devices)
    assert "| s1 | 4.0 | 3–9 | cuda (NVIDIA H200) |" in text and "| s2 | 2.5 | — | cpu |" in text
    assert "| s3 | 1.0 | — | — |" in text and "| total | 7.5 | 3–9 (training) |  |" in text
    plain = snapshot.readme("cpu", "abc123", "m", [("s1", 4.0, 1)], None, {"other": "cpu"})
    assert "| s1 | 4.0 |\n" in plain and "device" not in plain     # no column without one


def test_a_resumed_stage_counts_the_runs_whose_checkpoints_it_took_up():
    t = "2026-11-27T10:{:02d}:00+00:00 ".format
    resume = "pr_train@1024: resuming from the checkpoint at step 3000"
    log = [t(0) + "a: started", t(1) + "a: step 100 of 900 (11%)",
           t(5) + "a: step 500 of 900 (56%)",
           t(6) + "b: started", t(6) + "b: done in 30.0 s",              # a cut off (SIGKILL)
           t(7) + "a: started", t(7) + "a: " + resume,
           t(8) + "a: failed (exit status 143) in 90.0 s",               # a, SIGTERM
           t(9) + "a: started", t(9) + "a: " + resume, t(10) + "a: done in 45.0 s",
           t(11) + "c: started", t(12) + "c: failed (exit status 2) in 1.0 s",
           t(13) + "c: started", t(14) + "c: done in 8.0 s",              # c started afresh
           t(15) + "a: started", t(16) + "a: done in 50.0 s"]             # a again, no resume
    times = repro.stage_times(log)
    assert times[:3] == [("b", 30.0, 1), ("a", 300.0 + 90.0 + 45.0, 3), ("c", 8.0, 1)]
    assert times[3] == ("a", 50.0, 1)                 # the earlier runs are not counted twice
    assert repro.stage_times(log[6:])[0] == ("a", 90.0 + 45.0, 2)   # the log from run 2
    chain = [t(0) + "d: started", t(2) + "d: step 10 of 90 (11%)",
             t(3) + "d: failed (exit status 143) in 180.0 s",
             t(4) + "d: started", t(4) + "d: failed (exit status 2) in 1.0 s",   # never trained
             t(5) + "d: started", t(5) + "d: " + resume, t(6) + "d: done in 60.0 s",
             t(7) + "d: started", t(8) + "d: step 50 of 90 (56%)",              # afresh, cut off
             t(9) + "d: started", t(9) + "d: " + resume, t(9) + "d: done in 5.0 s"]
    assert repro.stage_times(chain) == [("d", 241.0, 3), ("d", 60.0 + 5.0, 2)]
    assert repro.stage_times(["x a: started", "x a: started", "x a: done in 1.0 s"]) == [
        ("a", 1.0, 1)]                                   # unreadable stamps: no crash
    text = snapshot.readme("cpu", "abc123", "m", times[:3])
    assert "| a | 435.0 |" in text and "| total | 473.0 |" in text
    assert "interruption" in text and ": a (3 runs)." in text and "b (" not in text
    assert "interruption" not in snapshot.readme("cpu", "abc123", "m", [("a", 1.0, 1)])
    assert repro.summary(times[3:])[1] == f"  {'a':<24} {50.0:8.1f} s"


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
