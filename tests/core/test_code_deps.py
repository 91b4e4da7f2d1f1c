"""Code deps at file level: every dvc.yaml stage declares exactly the project files its script and
template run (tms.core.dvc_yaml, from tms.core.code_deps's walk), the checkpoints of a training
stage are keyed by the same files, and an edit of code a stage does not run leaves it up to date
in ``dvc status``."""

import functools
import json
import shutil
import subprocess
import sys

import pytest

from tms.core import code_deps, dvc_yaml
from tms.engine import checkpoint

STAGES = dvc_yaml.read_stages()
#: The stages that train models: an edit of a claim, a figure or the forecast must not rerun them.
TRAINING = ("pr_rug", "pr_train", "pr_fig3", "ip_collisions", "ip_noise", "ip_sweep", "ip_single",
            "notes_linear", "notes_relu")


@pytest.fixture(autouse=True, scope="module")
def _parse_each_text_once():
    """tms.core.code_deps's imports of a file, a function of its text alone, parsed once per
    text for this module's tests: each walk of every stage reads the same files again (the two
    slowest unit tests, 8 s and 7 s, were mostly ast.parse). A file edited by a test is a new
    text, parsed anew."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(code_deps, "_imports", functools.cache(code_deps._imports))
        yield


@functools.cache
def _differences() -> dict:
    """dvc_yaml.differences of every stage, walked once for all the stages' tests."""
    return dvc_yaml.differences(STAGES)


@pytest.mark.parametrize("name", sorted(STAGES))
def test_a_stage_declares_exactly_the_files_it_runs(name):
    assert dvc_yaml.entry_points(STAGES[name]), f"{name}: no script in its cmd"
    assert name not in _differences(), "run `make deps` (python -m tms.core.dvc_yaml --write)"


def test_the_site_declares_the_code_of_every_stage_whose_revision_it_names():
    site = set(STAGES[dvc_yaml.REVISION_STAGE]["deps"])
    assert "pyproject.toml" in site                      # the versions of what runs
    for name, stage in STAGES.items():
        assert set(dvc_yaml.code_deps(stage)) <= site, name
    # alone, the site stage would declare only what it runs: the others' code is surplus there
    alone = dvc_yaml.differences({"site": STAGES["site"]})["site"]
    assert "stages/persian_rug/pr_train.py" in alone["surplus"] and not alone["missing"]
    # a template no report stage declares any more is surplus at the site too
    without = {**STAGES, "pr_report": {**STAGES["pr_report"], "deps": [
        d for d in STAGES["pr_report"]["deps"] if not d.endswith("persian_rug.ipynb")]}}
    assert "reports/templates/persian_rug.ipynb" not in dvc_yaml.wanted(without)["site"]


def test_a_file_missing_from_the_deps_or_one_too_many_is_found():
    # pr_report without the comparisons its template imports and the rug (with the engine's
    # sampler, which the rug imports), and with the notes' claims that it never runs
    stage = dict(STAGES["pr_report"])
    dropped = ["src/tms/persian_rug/compare.py", "src/tms/persian_rug/rug.py",
               "src/tms/engine/sampler.py"]
    stage["deps"] = [d for d in stage["deps"] if d not in dropped] + ["src/tms/notes/claims.py"]
    assert dvc_yaml.differences({"pr_report": stage}) == {
        "pr_report": {"missing": sorted(dropped, key=dvc_yaml.code_deps(stage).index),
                      "surplus": ["src/tms/notes/claims.py"]}}
    # the walk reads the template's code cells and imports inside functions; a package file that
    # holds only its docstring runs nothing
    runs = dvc_yaml.code_deps(stage)
    assert "reports/templates/persian_rug.ipynb" in runs
    assert "src/tms/__init__.py" not in runs


@pytest.mark.parametrize("name", TRAINING)
def test_no_training_stage_runs_a_claim_a_figure_a_report_or_the_forecast(name):
    runs = dvc_yaml.code_deps(STAGES[name])
    assert not [f for f in runs if f.endswith(("/claims.py", "/figures.py", "/forecast.py"))
                or "/reporting/" in f or f.endswith("pipeline/params.py")], runs


def test_make_deps_writes_back_what_it_checks(tmp_path):
    path = tmp_path / "dvc.yaml"
    text = dvc_yaml.DVC_YAML.read_text()
    broken = text.replace("      - src/tms/engine/optim.py\n", "", 1).replace(
        "      - src/tms/persian_rug/stats.py\n", "      - src/tms/notes\n", 1)
    assert broken != text
    path.write_text(broken)
    assert dvc_yaml.differences(dvc_yaml.read_stages(path))
    assert dvc_yaml.write(path) and path.read_text() == text
    assert dvc_yaml.write(path) == []


@pytest.fixture
def source_copy(tmp_path, root, monkeypatch):
    """A copy of src/ and stages/ that code_deps (and so the checkpoint key) reads instead."""
    for d in ("src", "stages"):
        shutil.copytree(root / d, tmp_path / d, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(code_deps, "ROOT", tmp_path)
    monkeypatch.setattr(code_deps, "SRC", tmp_path / "src")
    checkpoint.code_digest.cache_clear()
    yield tmp_path
    checkpoint.code_digest.cache_clear()


def test_a_checkpoint_key_changes_with_the_code_its_stage_runs_only(source_copy):
    script = str(source_copy / "stages/persian_rug/pr_train.py")

    def key() -> str:
        checkpoint.code_digest.cache_clear()
        return checkpoint.code_digest(script)

    before = key()
    with (source_copy / "src/tms/persian_rug/claims.py").open("a") as f:
        f.write("# a claim's wording edited\n")
    assert key() == before
    with (source_copy / "src/tms/persian_rug/training.py").open("a") as f:
        f.write("# the trainer edited\n")
    assert key() != before


def _changed_deps(repo, env) -> set[str]:
    run = subprocess.run([sys.executable, "-m", "dvc", "status", "--json"], cwd=repo, env=env,
                         capture_output=True, text=True, check=True)
    return {name for name, changes in json.loads(run.stdout).items()
            if any("changed deps" in c for c in changes if isinstance(c, dict))}


def test_an_edit_of_the_claims_reruns_only_the_claims_stage_and_what_follows(smoke_repo,
                                                                             tmp_path):
    repo, env = smoke_repo
    work = tmp_path / "repo"
    shutil.copytree(repo, work, symlinks=True)
    assert _changed_deps(work, env) == set()
    with (work / "src/tms/persian_rug/claims.py").open("a") as f:
        f.write("# a claim's tolerance edited\n")
    # then its report; the site, which names the revision of every stage's code, declares it
    assert _changed_deps(work, env) == {"pr_claims", dvc_yaml.REVISION_STAGE}
    with (work / "src/tms/persian_rug/training.py").open("a") as f:
        f.write("# the trainer edited\n")
    changed = _changed_deps(work, env)
    assert {"pr_fig3", "pr_rug"} | {f"pr_train@{n}" for n in (16, 32)} <= changed


def test_a_statistic_edited_reruns_the_statistics_and_no_training(smoke_repo, tmp_path):
    repo, env = smoke_repo
    work = tmp_path / "repo"
    shutil.copytree(repo, work, symlinks=True)
    with (work / "src/tms/persian_rug/stats.py").open("a") as f:
        f.write("# a statistic of the trained weights added\n")
    changed = _changed_deps(work, env)
    assert {f"pr_stats@{n}" for n in (16, 32)} <= changed
    trains = ("pr_train", "pr_fig3", "pr_converge", "ip_", "notes_")
    assert not {name for name in changed if name.startswith(trains)}, changed


def test_naming_a_new_output_reruns_no_training(smoke_repo, tmp_path):
    repo, env = smoke_repo
    work = tmp_path / "repo"
    shutil.copytree(repo, work, symlinks=True)
    with (work / "src/tms/persian_rug/artefacts.py").open("a") as f:
        f.write('NEW = f"{DATA}/new.parquet"   # the output of a new analysis stage\n')
    changed = _changed_deps(work, env)
    assert {f"pr_stats@{n}" for n in (16, 32)} <= changed
    assert not {n for n in changed if n.startswith(("pr_train", "pr_fig3", "pr_converge"))}
