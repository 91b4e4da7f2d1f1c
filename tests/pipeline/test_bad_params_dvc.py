"""A bad value in params.yaml, met under DVC, costs nothing that was there. Through `make repro`
(tms.pipeline.repro) the whole file is validated before DVC starts, so no stage runs; under a
plain `dvc repro` the validate stage (stages/validate.py), which every stage runs after, refuses
it naming the dotted key and the value (exit status 2, no traceback) before DVC removes any
output; a stage run alone refuses it too, DVC records nothing (dvc.lock and its cache stay as they
were), and once the value is put back `dvc checkout` restores the previous output's bytes.

tests/pipeline/test_bad_params.py runs the stage scripts directly; this runs them as DVC does."""

import copy
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tms.persian_rug import artefacts
from tms.pipeline import stage

STAGE = "pr_theory"                     # the cheapest stage; it reads persian_rug.theory
KEY, BAD = "persian_rug.theory.ratio", {"start": 0.1, "stop": 2.0, "num": 5}
SHOWN = f"{KEY} = {BAD!r}"              # the dotted key and the value, as the message gives them
DVC = [sys.executable, "-m", "dvc"]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(folder: Path) -> dict[str, str]:
    return {str(f.relative_to(folder)): _sha(f) for f in sorted(folder.rglob("*")) if f.is_file()}


def _run(repo: Path, env: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), cwd=repo, env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_bad_value_under_dvc_is_refused_and_changes_nothing_dvc_keeps(
        tmp_path, pipeline_copy, load_profile, dvc_repro):
    good = load_profile("smoke")
    env = pipeline_copy(tmp_path, good)
    dvc_repro(tmp_path, env, STAGE)
    out, lock, cache = tmp_path / artefacts.THEORY, tmp_path / "dvc.lock", tmp_path / ".dvc/cache"
    log = tmp_path / stage.LOG_FILE
    before = {"out": _sha(out), "lock": lock.read_text(), "cache": _files(cache)}
    assert STAGE in before["lock"] and before["cache"]

    bad = load_profile("smoke")
    bad["persian_rug"]["theory"]["ratio"] = BAD
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(bad, sort_keys=False))

    # `make repro`: the whole file is checked before DVC starts; no stage runs
    logged = log.read_text()
    run = _run(tmp_path, env, sys.executable, "-m", "tms.pipeline.repro", STAGE)
    said = run.stdout + run.stderr
    assert run.returncode == 2, said
    assert SHOWN in said and "nothing was run" in said, said
    assert "Traceback" not in said
    assert log.read_text() == logged                    # no stage started
    assert _sha(out) == before["out"]                   # the output is untouched
    assert lock.read_text() == before["lock"] and _files(cache) == before["cache"]


def test_a_misspelt_key_under_a_plain_dvc_repro_is_named_and_removes_nothing(smoke_repo,
                                                                             tmp_path):
    built, env = smoke_repo
    repo = tmp_path / "repo"
    shutil.copytree(built, repo, symlinks=True)
    lock, good = (repo / "dvc.lock").read_text(), yaml.safe_load((repo / "params.yaml").read_text())
    bad = copy.deepcopy(good)
    bad["persian_rug"]["theory"]["ratoi"] = bad["persian_rug"]["theory"].pop("ratio")
    (repo / "params.yaml").write_text(yaml.safe_dump(bad, sort_keys=False))
    run = _run(repo, env, *DVC, "repro")
    said = run.stdout + run.stderr
    assert run.returncode != 0, said
    assert "persian_rug.theory.ratoi: unknown key" in said and "did you mean 'ratio'?" in said
    assert "validate: failed (exit status 2)" in said and "Traceback" not in said
    assert (repo / "dvc.lock").read_text() == lock
    verify = _run(repo, env, sys.executable, "-m", "tms.pipeline.verify")  # every output there
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # a valid edit reruns the validate stage, whose output stays the same bytes: the stages
    # whose params the edit does not touch stay up to date
    good["persian_rug"]["fig1"]["seed"] += 1
    (repo / "params.yaml").write_text(yaml.safe_dump(good, sort_keys=False))
    run = _run(repo, env, *DVC, "repro", STAGE)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Running stage 'validate'" in run.stdout and f"'{STAGE}' didn't change" in run.stdout


def test_params_edited_while_a_stage_runs_are_never_recorded(tmp_path, pipeline_copy,
                                                             load_profile, dvc_repro):
    # DVC reads params.yaml when a stage ends: an edit made while the stage ran would be
    # recorded in dvc.lock (and the run cache) for outputs made from the old values, and
    # `make verify` would pass. The stage compares its section with what it read and fails.
    import time

    from tms.pipeline import repro

    seed5 = load_profile("smoke")
    seed5["persian_rug"]["train"]["seed"] = 5
    env = {**pipeline_copy(tmp_path, seed5), "TMS_DEVICE": "auto"}   # a record once it has read
    dvc_repro(tmp_path, env, "validate")
    records = tmp_path / stage.RECORDS_FILE
    with subprocess.Popen(DVC + ["repro", "--single-item", "pr_train@16"], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as run:
        deadline = time.monotonic() + 120
        while not [r for r in repro.read_records(records)
                   if r["event"] == stage.DEVICE and r["stage"] == "pr_train@16"]:
            assert run.poll() is None and time.monotonic() < deadline, run.stdout.read()
            time.sleep(0.02)
        seed0 = copy.deepcopy(seed5)
        seed0["persian_rug"]["train"]["seed"] = 0
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(seed0, sort_keys=False))
        said = run.communicate(timeout=300)[0]
    assert run.returncode != 0, said
    assert "params.yaml changed while this stage ran (persian_rug is not what it read" in said
    assert "Traceback" not in said
    lock = tmp_path / "dvc.lock"
    assert not lock.exists() or "pr_train@16" not in lock.read_text()
    assert not (tmp_path / ".dvc/cache/runs").exists()             # nor in the run cache
