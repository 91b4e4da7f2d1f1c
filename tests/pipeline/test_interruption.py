"""A training stage killed mid-run (SIGTERM, SIGKILL) leaves nothing DVC could cache as complete,
and the next `dvc repro` resumes from its checkpoint and gives the uninterrupted run's bytes."""

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

STAGE = "pr_train@16"
OUTS = ["data/persian_rug/train/n16.parquet", "data/persian_rug/train/n16_weights"]


def _params(tiny: dict, checkpoint_every: int) -> dict:
    """The smoke profile with a longer training of one model kind (4,000 steps: the stopping rule
    cannot fire before step 4,000), so that a kill after the first checkpoint lands mid-training
    on any machine, and checkpoints every ``checkpoint_every`` steps."""
    tiny["persian_rug"]["grid"]["models"] = ["relu"]
    tiny["persian_rug"]["train"].update(max_steps=4000, window=2000, check_every=10,
                                        checkpoint_every=checkpoint_every)
    return tiny


def _outputs(repo: Path) -> dict[str, str]:
    files = [f for out in OUTS for f in ([repo / out] if (repo / out).is_file()
                                         else sorted((repo / out).rglob("*")))]
    return {str(f.relative_to(repo)): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


def _wait_for_end(repo: Path, line: str, timeout: float = 60) -> None:
    """Wait until the stage's log (tms.pipeline.stage.LOG_FILE) records ``line``: dvc exits on
    SIGTERM at once, while the stage it ran is still removing its temporary files."""
    log, deadline = repo / "logs" / "repro.log", time.monotonic() + timeout
    while not (log.exists() and line in log.read_text()):
        assert time.monotonic() < deadline, f"the stage's log never said {line!r}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, pipeline_copy, load_profile, dvc_repro):
    """The stage's outputs from one run without checkpoints or interruption."""
    repo = tmp_path_factory.mktemp("uninterrupted")
    dvc_repro(repo, pipeline_copy(repo, _params(load_profile("smoke"), 0)), STAGE)
    return _outputs(repo)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killed_training_resumes_to_the_same_outputs(tmp_path, uninterrupted, pipeline_copy,
                                                     load_profile, dvc_repro, sig):
    env = pipeline_copy(tmp_path, _params(load_profile("smoke"), 100))
    job = subprocess.Popen([sys.executable, "-m", "dvc", "repro", STAGE], cwd=tmp_path, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)      # its own process group: dvc and stage
    checkpoints = tmp_path / ".checkpoints" / STAGE
    deadline = time.monotonic() + 300
    while not list(checkpoints.glob("*/stack-*.pt")):
        assert job.poll() is None, "the stage ended before its first checkpoint"
        assert time.monotonic() < deadline, "no checkpoint within 300 s"
        time.sleep(0.05)
    os.killpg(job.pid, sig)                             # mid-training, like Ctrl-C or an OOM kill
    assert job.wait(timeout=120) != 0
    assert _outputs(tmp_path) == {} and not any((tmp_path / out).exists() for out in OUTS)
    lock = tmp_path / "dvc.lock"
    assert not lock.exists() or STAGE not in lock.read_text()    # nothing recorded as complete
    if sig == signal.SIGTERM:                           # the stage cleaned its temporary files
        _wait_for_end(tmp_path, f"{STAGE}: failed (exit status 143)")
        assert [f for f in (tmp_path / "data").rglob("*") if f.is_file()] == []
    assert list(checkpoints.glob("*/stack-*.pt"))       # the checkpoint survives

    run = dvc_repro(tmp_path, env, STAGE)
    assert "resuming from the checkpoint at step" in run.stdout + run.stderr
    assert _outputs(tmp_path) == uninterrupted
    assert not (tmp_path / ".checkpoints").exists()     # removed after success
    assert STAGE in lock.read_text()
