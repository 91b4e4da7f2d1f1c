"""A training stage killed mid-run (SIGTERM, SIGKILL) leaves nothing DVC could cache as complete,
and the next `dvc repro` resumes from its checkpoint and gives the uninterrupted run's bytes.

A stage killed inside the write of an output (tms.core.io.atomic_path: written under a hidden
temporary name, renamed when complete) leaves the output as it was before: absent, or the
previous complete file, never a half-written one; after SIGTERM no temporary file is left, after
SIGKILL only hidden temporaries DVC ignores, which the next write of that output removes."""

import hashlib
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tms.core import io
from tms.persian_rug import artefacts
from tms.pipeline import params, repro, stage

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
        assert [f for f in (tmp_path / "data").rglob("*")      # but the params check's, done
                if f.is_file() and f != tmp_path / params.VALID] == []
    assert list(checkpoints.glob("*/stack-*.pt"))       # the checkpoint survives

    run = dvc_repro(tmp_path, env, STAGE)
    assert "resuming from the checkpoint at step" in run.stdout + run.stderr
    # the stage's time, from its records, is both runs': the one killed and the one resumed
    times = repro.stage_times(repro.read_records(tmp_path / stage.RECORDS_FILE))
    assert {name: runs for name, _, runs in times}[STAGE] == 2
    assert _outputs(tmp_path) == uninterrupted
    assert not (tmp_path / ".checkpoints").exists()     # removed after success
    assert STAGE in lock.read_text()


#: Runs the stage pr_theory as DVC does (stages/run.py), its Parquet writer replaced by one that
#: writes the first half of the real bytes to the path it is given, says that path on the file
#: descriptor $READY_FD, and then blocks until the process is killed: a kill mid-write, at a
#: moment the test controls.
_MID_WRITE = """
import io, os, runpy, sys, time
import pandas as pd

def half_then_block(df, path, *args, **kwargs):
    whole = io.BytesIO()
    written(df, whole, *args, **kwargs)
    data = whole.getvalue()
    with open(path, "wb") as f:
        f.write(data[:len(data) // 2])
        f.flush()
        os.fsync(f.fileno())
        os.write(int(os.environ["READY_FD"]), str(path).encode() + b"\\n")
        while True:
            time.sleep(1)

written, pd.DataFrame.to_parquet = pd.DataFrame.to_parquet, half_then_block
sys.argv = ["stages/run.py", "stages/persian_rug/pr_theory.py"]
runpy.run_path("stages/run.py", run_name="__main__")
"""


@pytest.mark.parametrize("earlier", [False, True], ids=["no earlier output", "earlier output"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_stage_killed_mid_write_leaves_no_partial_output(tmp_path, root, load_profile, sig,
                                                           earlier):
    shutil.copytree(root / "stages", tmp_path / "stages",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(load_profile("smoke")))
    out = tmp_path / artefacts.THEORY
    previous = None
    if earlier:                                        # a complete output of an earlier run
        io.write_parquet(pd.DataFrame({"p": [0.5], "loss": [1.0]}), out)
        previous = out.read_bytes()
    env = {k: v for k, v in os.environ.items() if k != "TMS_DEVICE"}
    read, write = os.pipe()
    env["READY_FD"] = str(write)
    job = subprocess.Popen([sys.executable, "-c", _MID_WRITE], cwd=tmp_path, env=env,
                           pass_fds=[write], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(write)
    try:
        assert select.select([read], [], [], 120)[0], "the stage never reached its write"
        writing = tmp_path / os.read(read, 4096).decode().strip()   # relative to the stage
        assert writing.is_file() and writing.stat().st_size > 0    # some bytes are written
    finally:
        os.close(read)
        job.send_signal(sig)                           # mid-write
        stderr = job.communicate(timeout=60)[1].decode()
    assert job.returncode == (128 + sig if sig == signal.SIGTERM else -sig), stderr
    assert "Traceback" not in stderr

    if previous is None:
        assert not out.exists()                        # no output at all
    else:
        assert out.read_bytes() == previous            # the earlier output, whole
    left = sorted(f.name for f in out.parent.iterdir() if f != out)
    if sig == signal.SIGTERM:                          # the stage removed its temporary file
        assert left == []
    else:                                              # hidden, ignored by DVC (.dvcignore)
        assert left and all(name.startswith(f".{out.name}.tmp.") for name in left), left
        io.write_parquet(pd.DataFrame({"p": [0.1]}), out)   # the next write removes them
        assert sorted(f.name for f in out.parent.iterdir()) == [out.name]
