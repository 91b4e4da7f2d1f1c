"""Every stage script's command line: --help without side effects, bad arguments refused, and
each run's time in the console and the log."""

import errno
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tms.core import machine, progress
from tms.core.schema import ParamsError
from tms.persian_rug import params as pr_params
from tms.pipeline import params, repro, stage

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in ROOT.glob("stages/*/*.py") if not p.name.startswith("_"))


def test_every_stage_script_is_found():
    assert len(SCRIPTS) == len({s.stem for s in SCRIPTS}) >= 17


def _in_process(script: Path, argv: list[str], cwd: Path, monkeypatch, capsys):
    """Run stage ``script`` as ``python script argv…`` would, in this process (its imports are
    shared, so thirty scripts cost one import of the package): (exit status, stdout, stderr)."""
    monkeypatch.chdir(cwd)
    monkeypatch.syspath_prepend(str(script.parent))            # where it finds _guard
    monkeypatch.setattr(sys, "argv", [str(script), *argv])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr()
    return exit_.value.code, out.out, out.err


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.stem)
def test_help_describes_the_stage_and_touches_nothing(tmp_path, monkeypatch, capsys, script):
    # an empty folder: no params.yaml to read, nothing to write into
    code, out, err = _in_process(script, ["--help"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert out.startswith("usage: ")
    first = script.read_text().split('"""')[1].strip().splitlines()[0]
    assert first in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.integration                        # the stage as its own process
def test_a_stage_run_bare_where_the_package_is_missing_says_what_to_do(tmp_path):
    """`python3 stages/<paper>/<stage>.py` by the interpreter the environment was made from
    (it lacks the package): one message naming stages/run.py and make repro, no traceback,
    nothing written; every stage script imports the guard first (stages/_guard.py)."""
    bare = Path(sys.base_prefix) / "bin" / "python3"
    if subprocess.run([bare, "-c", "import tms"], capture_output=True).returncode == 0:
        pytest.skip(f"{bare} imports the package")
    out = subprocess.run([bare, str(ROOT / "stages/persian_rug/pr_theory.py")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "cannot import the tms package" in out.stderr, out.stderr
    assert "stages/run.py" in out.stderr and "make repro" in out.stderr
    assert "Traceback" not in out.stderr and list(tmp_path.iterdir()) == []
    for script in [*SCRIPTS, ROOT / "stages/validate.py"]:
        code = script.read_text().split('"""', 2)[2].lstrip()
        assert code.startswith('if __name__ == "__main__":'), script   # then the guard
    assert all((script.parent / "_guard.py").resolve() == ROOT / "stages/_guard.py"
               for script in SCRIPTS)


@pytest.mark.parametrize("script, argv, message", [
    ("stages/persian_rug/pr_train.py", [], "the following arguments are required: --n-s"),
    ("stages/persian_rug/pr_baseline.py", ["--n-s", "x"], "invalid int value: 'x'"),
    ("stages/reporting/report.py", ["persian"], "invalid choice: 'persian'"),
    ("stages/persian_rug/pr_theory.py", ["--n-s", "8"], "unrecognized arguments: --n-s 8"),
])
def test_bad_arguments_are_refused_before_any_work(tmp_path, monkeypatch, capsys, script, argv,
                                                   message):
    code, _, err = _in_process(ROOT / script, argv, tmp_path, monkeypatch, capsys)
    assert code == 2 and message in err
    assert list(tmp_path.iterdir()) == []


def test_an_n_s_outside_the_grid_is_a_params_error(tmp_path, monkeypatch, capsys, load_profile):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(load_profile("smoke")))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        stage.run(lambda pr, n_s: stage.check_n_s(pr, n_s), "", stage.N_S,
                  params=pr_params.SECTION, argv=["--n-s", "3"])
    assert exit_.value.code == 2
    assert "--n-s 3 is not in persian_rug.grid.n_s" in capsys.readouterr().err


@pytest.mark.integration
@pytest.mark.parametrize("of", ["3", "fig", "-16"])
def test_a_convergence_check_of_no_grid_is_refused_before_any_work(tmp_path, load_profile, of):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(load_profile("smoke")))
    out = subprocess.run([sys.executable, str(ROOT / "stages/persian_rug/pr_converge.py"),
                          "--of", of], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "one of persian_rug.grid.n_s = [16, 32], or fig3" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "params.yaml"]


def test_each_run_logs_its_time_and_status(tmp_path, monkeypatch, capsys, load_profile):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(load_profile("smoke")))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DVC_STAGE", "pr_train@16")
    seen = []

    def trains(pr, n_s):
        seen.append(n_s)
        with progress.Progress("pr_train@16", 2, every=0.0, terminal=False) as p:
            p.update(1)

    stage.run(trains, "", stage.N_S, params=pr_params.SECTION, argv=["--n-s", "16"])
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
        "pr_train@16: started", "pr_train@16: pr_train@16: step 1 of 2 (50%), 0m00s elapsed, "
        "0m00s left", "pr_train@16: done", "site: started",
        "site: warning: a run that is likely not meant", "site: failed (exit status 1)"]
    # the same records for programs: each with its stage, event and fields
    records = repro.read_records(tmp_path / stage.RECORDS_FILE)
    assert [(r["stage"], r["event"]) for r in records] == [
        ("pr_train@16", "started"), ("pr_train@16", "progress"), ("pr_train@16", "ended"),
        ("site", "started"), ("site", "warning"), ("site", "ended")]
    assert records[1]["done"] == 1 and records[-1]["status"] == 1
    assert repro.stage_times(records) == [("pr_train@16", records[2]["seconds"], 1)]


def _free(monkeypatch, gib: float) -> None:
    usage = type("Usage", (), {"free": int(gib * 2**30)})
    monkeypatch.setattr(machine.shutil, "disk_usage", lambda path: usage)


def test_the_disk_check_counts_every_output_the_stage_last_wrote(tmp_path, monkeypatch):
    # a stage whose outputs took 9 GiB last time (a folder of weights, a table, a notebook):
    # with 9.1 GiB free it stops before any work, naming the numbers; with 9.5 GiB it runs
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".dvc").mkdir()
    (tmp_path / ".dvc/config").write_text("[cache]\n    type = hardlink,symlink\n")
    outs = [{"path": "w", "size": 8 * 2**30}, {"path": "t.parquet", "size": 2**29},
            {"path": "r.ipynb", "size": 2**29}]
    (tmp_path / "dvc.lock").write_text(yaml.safe_dump({"stages": {"big": {"outs": outs}}}))
    _free(monkeypatch, 9.1)
    with pytest.raises(ParamsError, match=r"stage big \(its outputs as last written\) needs "
                                          r"about 9.25 GiB of disk \(with a margin of 256 "
                                          r"MiB\), and .* has 9.1 GiB free: free disk space"):
        stage.check_disk("big")
    stage.check_disk("other")                      # never run: the margin alone
    _free(monkeypatch, 9.5)
    stage.check_disk("big")
    (tmp_path / ".dvc/config").write_text("[cache]\n    type = reflink,copy\n")
    with pytest.raises(ParamsError, match="18.2 GiB"):   # DVC's cache holds a second copy
        stage.check_disk("big")


@pytest.mark.parametrize("code, says", [
    (errno.ENOSPC, "error: the disk filled while writing (data/x.parquet.tmp): free space"),
    # `ulimit -f`: Python ignores SIGXFSZ, so the write fails with EFBIG (once a traceback)
    (errno.EFBIG, "error: a file grew past this shell's limit on file size (`ulimit -f` is "
                  "unlimited) while writing (data/x.parquet.tmp): raise the limit"),
], ids=["disk full", "file size limit"])
def test_a_disk_that_fills_during_a_stage_ends_in_a_message(tmp_path, monkeypatch, capsys, code,
                                                            says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text((ROOT / "params.yaml").read_text())

    def main(section):
        raise OSError(code, os.strerror(code), "data/x.parquet.tmp")

    with pytest.raises(SystemExit) as exit_:
        stage.run(main, "doc", params=params.SECTION, argv=[])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err

    def other(section):                            # any other OSError is not disguised
        raise OSError(errno.EACCES, "Permission denied", "data")

    with pytest.raises(PermissionError):
        stage.run(other, "doc", params=params.SECTION, argv=[])


@pytest.mark.integration
def test_a_real_file_size_limit_stops_a_stage_in_one_line(tmp_path, load_profile):
    import resource

    (tmp_path / "params.yaml").write_text(yaml.safe_dump(load_profile("smoke")))

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))

    run = subprocess.run([sys.executable, str(ROOT / "stages/run.py"),
                          "stages/persian_rug/pr_theory.py"], cwd=tmp_path, capture_output=True,
                         text=True, preexec_fn=limit, timeout=300)
    assert run.returncode == 2, run.stderr
    assert "`ulimit -f` is 4 blocks of 1 KiB" in run.stderr and "Traceback" not in run.stderr
    assert not [p for p in (tmp_path / "data").rglob("*") if p.is_file()]


@pytest.mark.parametrize("edit, fails", [
    (lambda raw: raw["persian_rug"]["train"].update(seed=5), True),   # its own section
    (lambda raw: raw["persian_rug"].update(device="cpu"), False),     # the same value
    (lambda raw: raw["autoencoding_notes"]["flows"].update(seed=7), False),   # another's
], ids=["own section", "same values", "another section"])
def test_params_edited_while_the_stage_runs_fail_it_when_they_are_its_own(
        tmp_path, monkeypatch, capsys, load_profile, edit, fails):
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(load_profile("smoke")))
    monkeypatch.chdir(tmp_path)

    def main(pr, n_s):
        raw = yaml.safe_load(path.read_text())
        edit(raw)
        path.write_text("# edited while the stage ran\n" + yaml.safe_dump(raw, width=60))

    if not fails:
        stage.run(main, "", stage.N_S, params=pr_params.SECTION, argv=["--n-s", "16"])
        return
    with pytest.raises(SystemExit) as exit_:
        stage.run(main, "", stage.N_S, params=pr_params.SECTION, argv=["--n-s", "16"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert ("error: params.yaml changed while this stage ran (persian_rug is not what it read at "
            "its start): its outputs are from the old values, and DVC would record the new "
            "ones, so it records nothing; run again") in err
