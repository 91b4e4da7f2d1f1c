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
    _repo(tmp_path, f"x86_64 Linux, {host.cpu_family()}, 2 CPU cores")
    _claims(tmp_path / "reports/claims", {"a.one": ("reproduced", "empirical"),
                                          "a.two": ("inconclusive at this scale", "empirical"),
                                          "a.three": ("sanity check", "mathematics")})
    said = outcome.lines("default", tmp_path)
    assert said[0] == ("empirical claims: 1 reproduced, 1 inconclusive (fails at this scale)")
    assert said[1] == "checks of the papers' mathematics: 1 sanity check"
    assert said[2] == "same verdicts as the snapshot results/default (revision bbbbbbbbbbbb)"
    (tmp_path / "dvc.lock").write_text("b\n")          # same CPU family: the params or code
    said = outcome.lines("default", tmp_path)
    assert said[3] == (f"git status: dvc.lock changed with this run's params or code "
                       f"({host.cpu_family()} made the snapshot too; every verdict is the same): "
                       "commit them with the change")
    assert outcome.lines("gpu", tmp_path)[-2:] == [
        "no committed snapshot of the gpu profile to compare with",
        "git status: dvc.lock changed with this run (its params, its code or this CPU family; no "
        "committed snapshot of the profile names the machine): commit them, or `git checkout "
        "dvc.lock` to keep the committed ones"]


def test_a_changed_verdict_is_named_and_another_cpu_explains_a_new_lock(tmp_path):
    # the model name alone does not tell the family: an AMD EPYC with AVX-512 and one without
    other = "x86_64 Linux, {} (torch CPU kernels: {}), 2 CPU cores".format(
        host.cpu_model(), "AVX2" if "AVX512" in host.cpu_family() else "AVX512")
    snap = _repo(tmp_path, other)
    (tmp_path / "dvc.lock").write_text("b\n")
    _claims(tmp_path / "reports/claims", {"a.one": ("reproduced", "empirical"),
                                          "a.two": ("inconclusive at this scale", "empirical"),
                                          "a.three": ("sanity check", "mathematics")})
    said = outcome.lines("default", tmp_path)
    assert said[-1] == (
        f"git status: the changes to dvc.lock come from this CPU, {host.cpu_family()}, not the "
        f"family that made the commit's ({other}): it rounds the last digits differently; every "
        "verdict is the same. Commit them to keep this machine's results, or `git checkout "
        "dvc.lock` to keep the committed ones (`make verify` then names every output that "
        "differs)")
    (tmp_path / "reports/claims/p.json").unlink()
    (tmp_path / "reports/claims").rmdir()
    _claims(tmp_path / "reports/claims", {"a.one": ("not reproduced", "empirical"),
                                          "a.two": ("inconclusive at this scale", "empirical"),
                                          "a.three": ("sanity check", "mathematics")})
    said = outcome.lines("default", tmp_path)
    assert said[2:4] == ["1 verdicts differ from the snapshot results/default (revision "
                         "bbbbbbbbbbbb):", "  p a.one: reproduced → not reproduced"]
    assert "; 1 verdicts differ (above). Commit them" in said[4] and len(said) == 5
    # a claim the snapshot lacks, or that the run lacks, is named too
    (tmp_path / "reports/claims/p.json").unlink()
    (tmp_path / "reports/claims").rmdir()
    _claims(tmp_path / "reports/claims", {"a.one": ("reproduced", "empirical"),
                                          "a.two": ("inconclusive at this scale", "empirical"),
                                          "a.four": ("erratum", "mathematics")})
    assert outcome.changes(snap / "claims", tmp_path / "reports/claims") == [
        "p a.four: — → erratum", "p a.three: sanity check → —"]
    assert snap.is_dir()
