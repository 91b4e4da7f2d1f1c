"""A snapshot judged again (tms.pipeline.rejudge) gets the verdicts its own data gives under the
claims code as it stands, says so in its README and on the verdicts page, and refuses code that
no revision names."""

import json
import re
import shutil
import subprocess

import pytest

from tms.core import papers
from tms.pipeline import rejudge, verdicts
from tms.pipeline.snapshot import SnapshotError


def _stored(folder, name):
    return json.loads((folder / name).read_text())


def test_a_snapshot_judged_again_gets_the_verdicts_its_data_gives(tmp_path, root,
                                                                  cross_cpu_differences):
    kept = root / "results" / "default"
    snap = tmp_path / "default"
    shutil.copytree(kept, snap, ignore=shutil.ignore_patterns("site"))
    # a stored verdict its data does not give, as an older rule might have written it
    rows = _stored(snap, "claims/persian_rug.json")
    row = next(r for r in rows["claims"] if r["id"] == "fig2.rug_theory")
    row["verdict"] = "not reproduced"
    (snap / "claims" / "persian_rug.json").write_text(json.dumps(rows))
    changed = rejudge.rejudge(snap, root, revision="0123456789abcdef")
    # the changes from the run's verdicts: those its README lists already, and the one made here
    listed = re.search(r"Changed: (.*)\.\n", (kept / "README.md").read_text())
    assert sorted(changed) == sorted([*(listed.group(1).split("; ") if listed else []),
                                      "persian_rug fig2.rug_theory: not reproduced → reproduced"])
    # the stored claims may come from another CPU family (the run's or the last judging's): numbers
    # within what its kernels change (conftest.CROSS_CPU_REL), every verdict and word the same
    names = (*(f"claims/{p.key}.json" for p in papers.PAPERS), "claims.json",
             "claim_values.json")
    for name in names:
        assert cross_cpu_differences(_stored(snap, name), _stored(kept, name)) == [], name
    first = {name: (snap / name).read_bytes() for name in names}
    text = (snap / "README.md").read_text()
    assert text.count("judged again") == 1
    assert text.index("Made by git revision") < text.index(
        "Verdicts judged again by git revision `0123456789abcdef`") < text.index("Open `site/")
    assert f"Changed: {'; '.join(changed)}." in text
    # judged again: the paragraph is replaced, still listing what differs from the run's site
    assert rejudge.rejudge(snap, root, revision="fedcba9876") == changed
    # on one machine, judging again writes the same bytes
    assert {name: (snap / name).read_bytes() for name in names} == first
    text = (snap / "README.md").read_text()
    assert text.count("judged again") == 1 and f"Changed: {'; '.join(changed)}." in text
    assert verdicts.judged_again(snap) == "fedcba9876"
    assert "| `" + verdicts.about(snap)[0] + "`, verdicts judged again at `fedcba9876` |" in (
        verdicts.page(tmp_path))


def test_another_cpu_familys_last_digits_pass_and_a_real_change_fails(root,
                                                                     cross_cpu_differences):
    kept = _stored(root / "results" / "default", "claim_values.json")
    value = kept["persian_rug"]["fig2.rug_theory"]["value"]
    moved = json.loads(json.dumps(kept))
    # the AVX2 machine's value of the AVX-512 snapshot's 0.026120752323625984
    moved["persian_rug"]["fig2.rug_theory"]["value"] = 0.026120752323627094
    assert cross_cpu_differences(moved, kept) == []
    moved["persian_rug"]["fig2.rug_theory"]["value"] = value * (1 + 1e-5)
    assert cross_cpu_differences(moved, kept) == [
        f".persian_rug.fig2.rug_theory.value: {value * (1 + 1e-5)!r} != {value!r}"]
    rows = _stored(root / "results" / "default", "claims/persian_rug.json")
    flipped = json.loads(json.dumps(rows))
    flipped["claims"][0]["verdict"] = "caveat"
    assert len(cross_cpu_differences(flipped, rows)) == 1
    assert cross_cpu_differences({"a": [1.0, "x"]}, {"a": [1.0]}) == [".a: 2 items != 1"]


def test_a_judging_lists_what_differs_from_the_runs_own_verdicts():
    earlier = ("Verdicts judged again by git revision `abcdef1` from … made it. Changed: p a: "
               "reproduced → not reproduced; p b: inconclusive (fails at this scale) → "
               "erratum.\n\n")
    assert rejudge.since_run(earlier, ["p a: not reproduced → reproduced",
                                       "p c: caveat → finding"]) == [
        "p b: inconclusive (fails at this scale) → erratum", "p c: caveat → finding"]
    assert rejudge.since_run("", ["p a: x → y"]) == ["p a: x → y"]
    assert rejudge.since_run(earlier, []) == ["p a: reproduced → not reproduced",
                                              "p b: inconclusive (fails at this scale) → erratum"]
    assert "No verdict changed from the run's." in rejudge.note("abcdef1", [])


def test_judging_again_refuses_code_that_no_revision_names(tmp_path, root):
    rejudge.own_package(root)
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    git = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True,  # noqa: E731
                                    capture_output=True)
    git("init", "-q")
    (repo / "src" / "rule.py").write_text("TOL = 0.02\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "rule")
    head = git("rev-parse", "HEAD").stdout.decode().strip()
    assert rejudge.code_revision(repo) == head
    (repo / "notes.md").write_text("a later commit of docs\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "docs")
    assert rejudge.code_revision(repo) == head               # names the code, not the docs
    (repo / "src" / "rule.py").write_text("TOL = 0.05\n")
    with pytest.raises(SnapshotError, match="src/rule.py"):
        rejudge.code_revision(repo)
    with pytest.raises(SnapshotError, match="not a git checkout"):
        rejudge.code_revision(tmp_path)
    # the claims code that runs must be that checkout's own package
    with pytest.raises(SnapshotError, match="the tms package imported is"):
        rejudge.own_package(repo)


def test_judging_again_writes_nothing_for_a_folder_that_is_not_a_snapshot(tmp_path, root):
    snap = tmp_path / "half"
    shutil.copytree(root / "results" / "default" / "claims", snap / "claims")
    with pytest.raises(FileNotFoundError, match="README.md is missing"):
        rejudge.rejudge(snap, root, revision="0123456789abcdef")
    assert sorted(p.name for p in snap.iterdir()) == ["claims"]
