"""Every stage script's command line: --help without side effects, bad arguments refused, and
each run's time in the console and the log."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tms.persian_rug import params as pr_params
from tms.pipeline import params, stage

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(ROOT.glob("stages/*/*.py"))


def test_every_stage_script_is_found():
    assert len(SCRIPTS) == len({s.stem for s in SCRIPTS}) >= 17


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.stem)
def test_help_describes_the_stage_and_touches_nothing(tmp_path, script):
    # an empty folder: no params.yaml to read, nothing to write into
    out = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: ")
    first = script.read_text().split('"""')[1].strip().splitlines()[0]
    assert first in out.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("script, argv, message", [
    ("stages/persian_rug/pr_train.py", [], "the following arguments are required: --n-s"),
    ("stages/persian_rug/pr_baseline.py", ["--n-s", "x"], "invalid int value: 'x'"),
    ("stages/reporting/report.py", ["persian"], "invalid choice: 'persian'"),
    ("stages/persian_rug/pr_theory.py", ["--n-s", "8"], "unrecognized arguments: --n-s 8"),
])
def test_bad_arguments_are_refused_before_any_work(tmp_path, script, argv, message):
    out = subprocess.run([sys.executable, str(ROOT / script), *argv], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and message in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_n_s_outside_the_grid_is_a_params_error(tmp_path, monkeypatch, capsys, load_profile):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(load_profile("smoke")))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        stage.run(lambda pr, n_s: stage.check_n_s(pr, n_s), "", stage.N_S,
                  params=pr_params.SECTION, argv=["--n-s", "3"])
    assert exit_.value.code == 2
    assert "--n-s 3 is not in persian_rug.grid.n_s" in capsys.readouterr().err


def test_each_run_logs_its_time_and_status(tmp_path, monkeypatch, capsys, load_profile):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(load_profile("smoke")))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DVC_STAGE", "pr_train@16")
    seen = []
    stage.run(lambda pr, n_s: seen.append(n_s), "", stage.N_S, params=pr_params.SECTION,
              argv=["--n-s", "16"])
    assert seen == [16]

    def fails(params):
        stage.warn(["a run that is likely not meant"])
        raise RuntimeError("boom")

    monkeypatch.setenv("DVC_STAGE", "site")
    with pytest.raises(RuntimeError):
        stage.run(fails, "", params=params.SECTION, argv=[])
    err = capsys.readouterr().err
    assert "pr_train@16: done in " in err and "site: failed (exit status 1) in " in err
    log = [line.split(" ", 1)[1] for line in (tmp_path / stage.LOG_FILE).read_text().splitlines()]
    assert [line.split(" in ")[0] for line in log] == [
        "pr_train@16: started", "pr_train@16: done", "site: started",
        "warning: a run that is likely not meant", "site: failed (exit status 1)"]
