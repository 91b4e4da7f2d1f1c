"""The incidental-polysemanticity stages and report on the smoke profile: their outputs in the
shared smoke run (tests/conftest.py, ``smoke_repo``: `dvc repro`), a stage run again in this
process on the same params, and the report stage stopped mid-run."""

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml

from tms.core import io
from tms.incidental import params
from tms.pipeline import stage

#: They read the smoke run of `dvc repro`, or run the report stage as a process.
pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
OUT = "data/incidental_polysemanticity"


def _stage(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "stages/incidental" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ip_repo(smoke_repo) -> Path:
    """The shared smoke run (read it; copy before changing anything)."""
    return smoke_repo[0]


def test_report_has_every_figure_and_the_claims(ip_repo):
    html = (ip_repo / "reports/incidental_polysemanticity.html").read_text()
    assert "Figure 6 (printed σ)" in html and "Figure 6 (10× the printed σ)" in html
    for k in [*range(1, 8), "6_printed"]:
        assert f"Figure {str(k)[0]}" in html
        for ext in ("png", "svg"):
            path = ip_repo / f"reports/figures/incidental_polysemanticity/fig{k}.{ext}"
            assert path.stat().st_size > 1000
    for text in ("Claims", "data:image/png;base64", "Fitted", "interval", "reproduced"):
        assert text in html


def test_tables_and_arrays_have_the_grid_shape(ip_repo):
    col = pd.read_parquet(ip_repo / OUT / "collisions.parquet")
    assert len(col) == 3 * 4 and col.seed.tolist() == list(range(12))
    noise = pd.read_parquet(ip_repo / OUT / "noise.parquet")
    fourth = io.read_arrays(ip_repo / OUT / "noise_fourth")
    assert len(noise) == 2 * 2 * 2 and fourth["fourth"].shape == (8, 500 // 10 + 1)
    assert fourth["steps"][[0, -1]].tolist() == [0, 500]
    sweep = pd.read_parquet(ip_repo / OUT / "sweep.parquet")
    assert sweep.kind.tolist() == ["baseline", "l1", "l1", "noise", "noise"]
    for run in ("single", "single_printed"):
        single = io.read_arrays(ip_repo / OUT / run)
        assert single["W"].shape == (2, 4, 8) and single["fourth"].shape == (2, 51, 4)
    assert (col.poly_from_init <= col.polysemantic).all()
    won = col[[f"won_rank{r}" for r in range(1, 9)]].sum(axis=1)   # ranks 1–8 of every rank
    assert (won <= (col.represented * col.n).round()).all() and (col.won_rank1 > 0).any()
    traj = pd.read_parquet(ip_repo / OUT / "sparsification.parquet")
    assert len(traj) == 50 and traj.m_prime.iloc[-1] == 1


def test_same_params_give_identical_files(ip_repo, tmp_path, monkeypatch):
    # the stage's main in this process, on the params `dvc repro` ran it with: the same bytes
    shutil.copy2(ip_repo / "params.yaml", tmp_path / "params.yaml")
    monkeypatch.chdir(tmp_path)
    _stage("ip_noise").main(params.SECTION.load("params.yaml"))
    for name in ("noise.parquet", "noise_fourth/fourth.npy"):
        assert (tmp_path / OUT / name).read_bytes() == (ip_repo / OUT / name).read_bytes(), name


@pytest.mark.parametrize("section, key, value, message", [
    ("noise", "sigma", [0.1, -0.1], "greater than or equal to 0"),
    ("collisions", "optimizer", {"name": "rmsprop", "lr": 1e-3}, "'adam', 'adamw' or 'sgd'"),
    ("single", "noise", "uniform", "'bipolar' or 'normal'"),
])
def test_bad_params_stop_an_ip_stage_before_any_output(tmp_path, monkeypatch, capsys,
                                                       load_profile, section, key, value,
                                                       message):
    bad = load_profile("smoke")
    bad["incidental_polysemanticity"][section][key] = value
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(bad))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        stage.run(_stage(f"ip_{section}").main, "", params=params.SECTION, argv=[])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"incidental_polysemanticity.{section}.{key}" in err and message in err
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL],
                         ids=["SIGTERM", "SIGINT", "SIGKILL"])
def test_a_report_stopped_mid_run_leaves_no_file_and_no_kernel(ip_repo, tmp_path, sig):
    # SIGTERM and SIGINT: nothing left. SIGKILL, where nothing runs on the way out: the kernel
    # still goes with its stage, and what the stage left (its private temporary folder, the
    # hidden notebook beside the report) goes with the next run of a report
    repo = tmp_path / "repo"                  # what the report stage reads
    repo.mkdir()
    for item in ("params.yaml", OUT, "reports/claims"):
        (shutil.copytree if (ip_repo / item).is_dir() else shutil.copy2)(
            ip_repo / item, repo / item)
    shutil.copytree(ROOT / "stages", repo / "stages")
    shutil.copytree(ROOT / "reports/templates", repo / "reports/templates")
    marker = tmp_path / "executing"           # a first cell says so, then waits to be stopped
    template = repo / "reports/templates/incidental_polysemanticity.ipynb"
    nb = nbformat.read(template, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(600)"))
    original = template.read_bytes()
    nbformat.write(nb, template)
    temp = tmp_path / "temp"                  # the stage's temporary folder: kernel files go here
    temp.mkdir()
    job = subprocess.Popen([sys.executable, "stages/reporting/report.py",
                            "incidental_polysemanticity"], cwd=repo,
                           env={**os.environ, "TMPDIR": str(temp)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not marker.exists():                # the kernel runs a cell: mid-execution at any speed
        assert job.poll() is None and time.monotonic() < deadline, "no cell ran"
        time.sleep(0.05)
    kernel = _kernel_pids(temp)
    assert kernel
    job.send_signal(sig)
    assert job.wait(timeout=60) != 0
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in kernel):  # the kernel goes with its stage
        assert time.monotonic() < deadline, "the kernel outlived its stage"
        time.sleep(0.1)
    if sig == signal.SIGKILL:
        assert list(temp.iterdir()) and [p for p in (repo / "reports").iterdir()
                                         if p.name.startswith(".")]     # the litter
        template.write_bytes(original)
        subprocess.run([sys.executable, "stages/reporting/report.py", "incidental_polysemanticity"],
                       cwd=repo, env={**os.environ, "TMPDIR": str(temp)}, check=True,
                       capture_output=True, timeout=600)
        (repo / "reports/incidental_polysemanticity.html").unlink()
    assert list(temp.iterdir()) == []          # no connection file, nor its folder
    assert [p.name for p in (repo / "reports").iterdir() if p.name.startswith(".")] == []
    assert not (repo / "reports/incidental_polysemanticity.html").exists()


def _kernel_pids(temp: Path) -> list[int]:
    """The processes whose command line names a connection file in ``temp``."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if str(temp).encode() in (proc / "cmdline").read_bytes():
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status
