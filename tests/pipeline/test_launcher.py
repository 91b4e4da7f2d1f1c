"""stages/run.py, the command of every stage: a `python` that cannot import the package (DVC
started as `.venv/bin/dvc repro` without activating .venv) restarts under .venv's python, or
says what to do with exit status 2; a copied checkout runs its own code; a stage out of memory
says so in one line."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

#: They run stage scripts as their own processes.
pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = "stages/run.py"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"


@pytest.fixture
def bare_python(tmp_path):
    """A PATH whose `python` is the interpreter behind this one without its environment: what
    DVC's shell finds when .venv is not activated."""
    base = Path(os.path.realpath(sys.executable))
    probe = subprocess.run([base, "-c", "import tms"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip(f"{base} imports tms: no interpreter without the package here")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").symlink_to(base)
    return {**os.environ, "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}


def test_every_stage_runs_through_the_launcher():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    commands = {name: s["cmd"].split() for name, s in stages.items()}
    assert {name: c[:2] for name, c in commands.items()} == {
        name: ["python", LAUNCHER] for name in stages}
    assert all(c[2].startswith("stages/") and c[2].endswith(".py") for c in commands.values())


@pytest.mark.skipif(not VENV_PYTHON.is_file(), reason="no .venv in this checkout")
def test_a_bare_python_restarts_under_the_venv(bare_python, tmp_path):
    script = tmp_path / "where.py"
    script.write_text("import os, sys\nimport tms\nprint(sys.executable, sys.argv[1:], "
                      "os.environ.get('TMS_STAGE_RESTARTED'))\n")
    run = subprocess.run(["sh", "-c", f"python {LAUNCHER} {script} --n-s 8"], cwd=ROOT,
                         env=bare_python, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(VENV_PYTHON), "['--n-s',", "'8']", "None"]


def test_without_a_venv_it_says_what_to_do(bare_python):
    env = {**bare_python, "TMS_STAGE_RESTARTED": "1"}      # as if the restart had not helped
    run = subprocess.run(["sh", "-c", f"python {LAUNCHER} stages/persian_rug/pr_theory.py"],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 2
    assert "cannot import the tms package" in run.stderr
    assert "make repro" in run.stderr and ". .venv/bin/activate" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_stage_sees_its_own_arguments():
    run = subprocess.run([sys.executable, LAUNCHER, "stages/persian_rug/pr_train.py", "--help"],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0
    assert run.stdout.startswith("usage: pr_train.py [-h] --n-s N_S")


@pytest.mark.parametrize("argv", [[], ["stages/persian_rug/pr_theroy.py"], ["params.yaml"]])
def test_a_script_that_is_not_there_gets_the_usage(argv):
    run = subprocess.run([sys.executable, LAUNCHER, *argv], cwd=ROOT, capture_output=True,
                         text=True)
    assert run.returncode == 2 and run.stderr.startswith("usage: python stages/run.py")


def test_a_copied_checkout_runs_its_own_code_and_says_how_to_install_it(tmp_path):
    # a copy (cp -al, or a checkout moved) whose environment's editable install names the first
    # checkout: the stage once ran the first checkout's code without a word
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "stages").mkdir()
    shutil.copy2(ROOT / LAUNCHER, tmp_path / LAUNCHER)
    (tmp_path / "stages/probe.py").write_text("import tms\nprint(tms.__file__)\n")
    run = subprocess.run([sys.executable, LAUNCHER, "stages/probe.py"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(tmp_path / "src/tms/__init__.py")
    assert run.stderr.strip() == (
        f"warning: this environment's tms package is installed from {ROOT / 'src/tms'}, not "
        f"from this checkout (it was moved or copied): running {tmp_path / 'src/tms'}; "
        f"`make env` installs this checkout's")
    here = subprocess.run([sys.executable, LAUNCHER, "stages/persian_rug/pr_train.py", "--help"],
                          cwd=ROOT, capture_output=True, text=True)
    assert here.returncode == 0 and "warning" not in here.stderr          # its own checkout


def test_a_stage_out_of_memory_says_so_in_one_line(tmp_path):
    # `ulimit -v` too low to load torch and scipy: once an ImportError's or a MemoryError's
    # traceback ("failed to map segment from shared object")
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (250 * 2**20, resource.RLIM_INFINITY))

    run = subprocess.run([sys.executable, str(ROOT / LAUNCHER), "stages/persian_rug/pr_theory.py"],
                         cwd=tmp_path, capture_output=True, text=True, preexec_fn=limit,
                         timeout=120)
    assert run.returncode == 2, run.stderr
    assert "stages/persian_rug/pr_theory.py ran out of memory" in run.stderr
    assert f"to {250 * 1024} KiB (`ulimit -v`): raise the limit" in run.stderr
    assert "Traceback" not in run.stderr and list(tmp_path.iterdir()) == []


def test_a_checkout_moved_or_copied_gets_a_venv_of_its_own_from_make(tmp_path):
    # .venv's scripts and the editable install name the folder it was made in: make rebuilds it
    shutil.copy2(ROOT / "Makefile", tmp_path / "Makefile")
    venv = tmp_path / ".venv"
    venv.mkdir()
    (venv / "made-elsewhere").write_text("")
    (venv / ".checkout").write_text("/somewhere/else\n")
    run = subprocess.run(["make", "-s", ".venv/.checkout"], cwd=tmp_path, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == (".venv was made in /somewhere/else, not here: making it again "
                                  "(a few minutes)")
    assert sorted(p.name for p in venv.iterdir()) == [".checkout"]
    assert (venv / ".checkout").read_text().strip() == str(tmp_path)
    again = subprocess.run(["make", "-s", ".venv/.checkout"], cwd=tmp_path, capture_output=True,
                           text=True)
    assert again.stdout == "" and (venv / ".checkout").read_text().strip() == str(tmp_path)
