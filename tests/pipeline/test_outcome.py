"""The end of `make repro`: the verdict counts by kind, and the comparison with the committed
snapshot of the same profile (tms.pipeline.outcome)."""

import json
import subprocess

from tms.core.claim_rows import Claim
from tms.pipeline import host, outcome


def _claims(folder, verdicts_by_id):
    folder.mkdir(parents=True)
    rows = []
    for cid, (verdict, basis) in verdicts_by_id.items():
        row = Claim(cid, "c", "s", "v", "—", None, ("t",)).row(True, "x", "t", "n_s 64")
        row.update(verdict=verdict, basis=basis,
                   direction="fails" if verdict.startswith("inconclusive") else None)
        rows.append(row)
    (folder / "p.json").write_text(json.dumps({"paper": "p", "title": "P", "claims": rows}))


def _repo(tmp_path, where):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "dvc.lock").write_text("a\n")
    subprocess.run(git + ["add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(git + ["commit", "-qm", "x"], cwd=tmp_path, check=True)
    snap = tmp_path / "results/default"
    _claims(snap / "claims", {"a.one": ("reproduced", "empirical"),
                              "a.two": ("inconclusive at this scale", "empirical"),
                              "a.three": ("sanity check", "mathematics")})
    (snap / "README.md").write_text(f"Made by git revision `{'b' * 40}` with `params.yaml` and "
                                    f"`dvc.lock` of this folder, on {where}.\n")
    return snap


def test_a_run_says_its_counts_and_that_its_verdicts_are_the_snapshots(tmp_path):
    _repo(tmp_path, f"x86_64 Linux, {host.cpu_model()}, 2 CPU cores")
    _claims(tmp_path / "reports/claims", {"a.one": ("reproduced", "empirical"),
                                          "a.two": ("inconclusive at this scale", "empirical"),
                                          "a.three": ("sanity check", "mathematics")})
    said = outcome.lines("default", tmp_path)
    assert said[0] == ("empirical claims: 1 reproduced, 1 inconclusive (fails at this scale)")
    assert said[1] == "checks of the papers' mathematics: 1 sanity check"
    assert said[2] == "same verdicts as the snapshot results/default (revision bbbbbbbbbbbb)"
    (tmp_path / "dvc.lock").write_text("b\n")          # same CPU: no explanation offered
    assert len(outcome.lines("default", tmp_path)) == 3
    assert outcome.lines("gpu", tmp_path)[-1] == (
        "no committed snapshot of the gpu profile to compare with")


def test_a_changed_verdict_is_named_and_another_cpu_explains_a_new_lock(tmp_path):
    snap = _repo(tmp_path, "x86_64 Linux, Some Other CPU (torch CPU kernels: AVX2), 2 CPU cores")
    (tmp_path / "dvc.lock").write_text("b\n")
    _claims(tmp_path / "reports/claims", {"a.one": ("reproduced", "empirical"),
                                          "a.two": ("inconclusive at this scale", "empirical"),
                                          "a.three": ("sanity check", "mathematics")})
    said = outcome.lines("default", tmp_path)
    assert said[-1].startswith("dvc.lock differs from the committed one because this CPU")
    assert "Some Other CPU" in said[-1]
    (tmp_path / "reports/claims/p.json").unlink()
    (tmp_path / "reports/claims").rmdir()
    _claims(tmp_path / "reports/claims", {"a.one": ("not reproduced", "empirical"),
                                          "a.two": ("inconclusive at this scale", "empirical"),
                                          "a.three": ("sanity check", "mathematics")})
    said = outcome.lines("default", tmp_path)
    assert said[2:] == ["1 verdicts differ from the snapshot results/default (revision "
                        "bbbbbbbbbbbb):", "  p a.one: reproduced → not reproduced"]
    # a claim the snapshot lacks, or that the run lacks, is named too
    (tmp_path / "reports/claims/p.json").unlink()
    (tmp_path / "reports/claims").rmdir()
    _claims(tmp_path / "reports/claims", {"a.one": ("reproduced", "empirical"),
                                          "a.two": ("inconclusive at this scale", "empirical"),
                                          "a.four": ("erratum", "mathematics")})
    assert outcome.changes(snap / "claims", tmp_path / "reports/claims") == [
        "p a.four: — → erratum", "p a.three: sanity check → —"]
    assert snap.is_dir()
