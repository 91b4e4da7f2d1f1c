"""Warm starts (stages/starter.py, tms.pipeline.warm): a stage handed to the starter runs in a
child of it, with the libraries already imported, as its own process would: the same streams,
exit status, signals, process group and outputs; the starter declines a stage whose environment,
session or process is not its own, and stops a stage whose client is gone."""

import hashlib
import os
import runpy
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tms.pipeline import warm

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="Linux only")]

#: A stand-in stage: says whether torch was imported before it ran, and its process and parent;
#: then does what its argument says.
PROBE = """
import os, signal, sys, time
print("torch" in sys.modules, os.getpid(), os.getppid(), os.getpgrp(), flush=True)
print("to stderr", file=sys.stderr, flush=True)
what = sys.argv[1]
if what == "echo":
    print(sys.stdin.read().upper())
elif what == "sleep":
    time.sleep(60)
elif what == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
elif what != "nothing":
    exec(what)
"""
#: Endings of a process whose exit status and last line of stderr a fresh Python decides.
ENDINGS = ["sys.exit(7)", "sys.exit(-1)", "sys.exit('a message')", "sys.exit(None)",
           "raise ValueError('uncaught')", "raise KeyboardInterrupt", "kill"]


@pytest.fixture(scope="module")
def probe_repo(tmp_path_factory, root, load_profile) -> Path:
    """A folder with the stages, the probe stage stages/probe.py and the smoke profile's params
    but for fig. 3's lone model at its default shape: two threads in its products."""
    repo = tmp_path_factory.mktemp("warm")
    shutil.copytree(root / "stages", repo / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "stages/probe.py").write_text(PROBE)
    raw = load_profile("smoke")
    raw["persian_rug"]["fig3"].update(n_s=512, n_d=130, p=0.044, max_steps=40)
    raw["persian_rug"]["train"]["batch_size"] = 1024
    (repo / "params.yaml").write_text(yaml.safe_dump(raw))
    return repo


@pytest.fixture(scope="module")
def started(probe_repo):
    """The environment of a warm starter running in ``probe_repo``, its imports done (a stage
    that asks before then starts cold)."""
    with warm.starter(dict(os.environ), probe_repo) as env:
        _wait_until_warm(probe_repo, env)
        yield env


def _wait_until_warm(repo: Path, env: dict) -> None:
    deadline = time.monotonic() + 120
    while _probe(repo, env, "nothing").stdout.split()[:1] != ["True"]:
        assert time.monotonic() < deadline, "the starter never took a stage"
        time.sleep(0.2)


def _probe(repo: Path, env: dict, what: str, cwd: Path | None = None,
           **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(repo / "stages/run.py"), "stages/probe.py", what],
                          cwd=cwd or repo, env=env, capture_output=True, text=True, timeout=120,
                          **kwargs)


def _spawn(repo: Path, env: dict, what: str, **kwargs) -> tuple[subprocess.Popen, list[str]]:
    """The probe started, and its first line (imported, pid, parent, group)."""
    job = subprocess.Popen([sys.executable, "stages/run.py", "stages/probe.py", what], cwd=repo,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           **kwargs)
    return job, job.stdout.readline().split()


def _gone(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_the_starter_the_runner_and_the_owner_name_the_same_variable(root):
    assert runpy.run_path(str(root / "stages/run.py"))["STARTER"] == warm.STARTER
    assert runpy.run_path(str(root / "stages/starter.py"))["STARTER"] == warm.STARTER


def test_a_warm_stage_runs_in_a_child_of_the_starter_with_its_libraries_imported(probe_repo,
                                                                                 started):
    job, (imported, pid, parent, group) = _spawn(probe_repo, started, "nothing",
                                                 process_group=0)
    assert job.wait(timeout=60) == 0
    assert imported == "True" and int(pid) != job.pid and int(parent) != job.pid
    assert int(group) == job.pid                        # the client's own process group
    cold = _probe(probe_repo, {k: v for k, v in started.items() if k != warm.STARTER}, "nothing")
    assert cold.stdout.split()[0] == "False"            # the same probe, started cold


def test_a_warm_stage_has_its_clients_streams(probe_repo, started):
    echo = _probe(probe_repo, started, "echo", input="words in\n")
    assert echo.returncode == 0 and echo.stdout.split("\n")[1] == "WORDS IN"
    assert echo.stderr.endswith("\nto stderr\n")       # after the copy's warning: not the checkout


@pytest.mark.parametrize("ending", ENDINGS)
def test_a_warm_stage_ends_as_a_cold_one(probe_repo, started, ending):
    # exit status (255 for -1, 1 and the message for a string, death by SIGINT after an uncaught
    # KeyboardInterrupt, by SIGKILL for a stage the OOM killer ends) and the last line of stderr
    cold_env = {k: v for k, v in started.items() if k != warm.STARTER}
    warm_run, cold_run = (_probe(probe_repo, env, ending) for env in (started, cold_env))
    assert warm_run.stdout.split()[0] == "True" and cold_run.stdout.split()[0] == "False"
    assert warm_run.returncode == cold_run.returncode
    assert warm_run.stderr.splitlines()[-1:] == cold_run.stderr.splitlines()[-1:]


def test_the_starter_declines_a_stage_whose_environment_differs(probe_repo, started):
    # a variable a library reads as it is imported (OpenMP's) must not come from the starter's
    run = _probe(probe_repo, {**started, "OMP_NUM_THREADS": "1"}, "nothing")
    assert run.returncode == 0 and run.stdout.split()[0] == "False"
    # nor the process's own settings (its umask: the modes of the files it writes)
    run = _probe(probe_repo, started, "nothing", preexec_fn=lambda: os.umask(0o077))
    assert run.returncode == 0 and run.stdout.split()[0] == "False"
    # but DVC's per-stage variables do not count
    run = _probe(probe_repo, {**started, "DVC_STAGE": "probe"}, "nothing")
    assert run.stdout.split()[0] == "True"


def test_the_starter_declines_a_stage_outside_its_session(probe_repo, started):
    # the stage must be in its client's process group, where a kill of the group reaches it
    run = _probe(probe_repo, started, "nothing", start_new_session=True)
    assert run.returncode == 0 and run.stdout.split()[0] == "False"


def test_the_starter_takes_a_stage_in_another_folder_unless_matplotlib_reads_a_file_there(
        probe_repo, started, tmp_path):
    assert _probe(probe_repo, started, "nothing", cwd=tmp_path).stdout.split()[0] == "True"
    (tmp_path / "matplotlibrc").write_text("lines.linewidth: 3\n")     # read as it is imported
    assert _probe(probe_repo, started, "nothing", cwd=tmp_path).stdout.split()[0] == "False"


def test_a_signal_to_the_client_reaches_the_stage_and_ends_the_client_alike(probe_repo,
                                                                            started):
    job, (_, pid, *_) = _spawn(probe_repo, started, "sleep")
    job.send_signal(signal.SIGTERM)
    assert job.wait(timeout=60) == -signal.SIGTERM
    assert _gone(int(pid))


def test_a_stage_whose_client_is_killed_is_stopped(probe_repo, started):
    job, (_, pid, *_) = _spawn(probe_repo, started, "sleep")
    job.kill()                                          # SIGKILL: nothing to pass on
    assert job.wait(timeout=60) == -signal.SIGKILL
    assert _gone(int(pid))
    assert _probe(probe_repo, started, "nothing").stdout.split()[0] == "True"   # still serving


def test_a_starter_stopped_mid_stage_lets_the_stage_end_and_its_client_have_its_status(
        probe_repo):
    # as when `make repro` is stopped: DVC gone, the stage still cleaning up
    with warm.starter(dict(os.environ), probe_repo) as env:
        _wait_until_warm(probe_repo, env)
        job, (imported, *_) = _spawn(probe_repo, env, "time.sleep(2); sys.exit(3)")
        assert imported == "True"
    assert job.wait(timeout=60) == 3


def _hashes(folder: Path) -> dict[str, str]:
    return {str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(folder.rglob("*")) if f.is_file()}


def test_a_training_stage_writes_the_same_bytes_warm_and_cold(probe_repo, started):
    # OpenMP's threads started in the child, never in the starter
    assert _probe(probe_repo, started, "nothing").stdout.split()[0] == "True"   # warm here
    command = [sys.executable, "stages/run.py", "stages/persian_rug/pr_fig3.py"]
    outputs = {}
    for how, env in [("cold", {k: v for k, v in started.items() if k != warm.STARTER}),
                     ("warm", started)]:
        shutil.rmtree(probe_repo / "data", ignore_errors=True)
        run = subprocess.run(command, cwd=probe_repo, env=env, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        outputs[how] = _hashes(probe_repo / "data")
    assert len(outputs["cold"]) > 2 and outputs["warm"] == outputs["cold"]


def test_where_the_kernel_gives_no_pidfd_the_stages_start_cold(monkeypatch, probe_repo):
    def no_pidfd(pid):
        raise OSError(38, "Function not implemented")     # Linux before 5.3
    monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    with warm.starter({"PATH": os.environ["PATH"]}, probe_repo) as env:
        assert env == {"PATH": os.environ["PATH"]}
