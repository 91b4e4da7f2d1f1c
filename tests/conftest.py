"""Fixtures shared by the test packages: the repository, its params profiles, and a temporary copy
of the pipeline to run ``dvc repro`` in (or every stage in the test's process)."""

import hashlib
import json
import math
import os
import runpy
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import networkx as nx
import pytest
import yaml
from dvc.repo import Repo
from filelock import FileLock

from tms.core.io import write_json
from tms.pipeline import profiles, warm

ROOT = Path(__file__).resolve().parents[1]
#: Overlays on the default params.yaml, by name.
PROFILES = {name: ROOT / f"profiles/{name}.yaml"
            for name in ("paper", "gpu", "smoke", "cpu-paper")}
DVC = [sys.executable, "-m", "dvc"]
pytest_plugins = ["pytester"]     # tests/test_groups.py runs a small suite under pytest-xdist


#: A test that takes one of these fixtures runs DVC on a copy of the pipeline.
PIPELINE_FIXTURES = {"smoke_repo", "pipeline_copy", "dvc_repro", "run_stages"}
#: Beside the shared smoke run (:func:`smoke_repo`): its files' hashes around its `dvc repro`.
SMOKE_HASHES = "smoke_hashes.json"


@pytest.hookimpl(tryfirst=True)                 # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items) -> None:
    """Mark ``integration`` every test that runs the pipeline under DVC (it takes one of
    :data:`PIPELINE_FIXTURES`; the other integration tests carry the marker themselves), and,
    where pytest-xdist is loaded, group them (``pytest -n 2 --dist loadgroup``): those that read
    the shared smoke run in one process, which builds it once; the others by module, so that a
    module's own copy of the pipeline is built once too, in a process beside it."""
    xdist = config.pluginmanager.hasplugin("xdist")     # its marker is unknown without it
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if PIPELINE_FIXTURES & fixtures:
            item.add_marker(pytest.mark.integration)
            group = "smoke_repo" if "smoke_repo" in fixtures else item.module.__name__
            if xdist:
                item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test drew (pyplot keeps every open figure alive)."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


@pytest.fixture(scope="session")
def root() -> Path:
    """The repository's root folder."""
    return ROOT


@pytest.fixture(scope="session")
def load_profile() -> Callable[[str], dict]:
    """``load_profile(name)``: a fresh copy of the params of profile ``name``: 'default' (the
    default params.yaml, tms.pipeline.profiles.default_params), or 'paper', 'gpu', 'smoke' and
    'cpu-paper', overlays on it validated by the schema."""
    def load(name: str) -> dict:
        default = profiles.default_params(ROOT)
        return default if name == "default" else profiles.profile(default, PROFILES[name])
    return load


@pytest.fixture(scope="session")
def stage_env() -> Iterator[dict]:
    """The environment to run dvc and the stages of a pipeline copy with: this one, with this
    Python's folder first on PATH, no TMS_DEVICE, and a warm starter (tms.pipeline.warm) for the
    stages run under it, this process's whole session, as `make repro` starts them."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("TMS_DEVICE", None)
    with warm.starter(env, ROOT) as env:
        yield env


@pytest.fixture(scope="session")
def pipeline_copy(stage_env) -> Callable[[Path, dict], dict]:
    """``pipeline_copy(repo, params)``: copy the pipeline (dvc.yaml, stages, library, report
    templates) into ``repo`` with ``params`` as its params.yaml and run ``dvc init`` there
    (without git) with the project's DVC configuration; returns the environment to run dvc and
    the stages with."""
    def copy(repo: Path, params: dict) -> dict:
        for item in ["dvc.yaml", "pyproject.toml", "stages", "src", "reports/templates"]:
            src, dst = ROOT / item, repo / item
            if src.is_dir():
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, dst)
        (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        env = dict(stage_env)
        subprocess.run(DVC + ["init", "--no-scm", "-q"], cwd=repo, env=env, check=True)
        for config in [".dvc/config", ".dvcignore"]:
            shutil.copy2(ROOT / config, repo / config)
        subprocess.run(DVC + ["config", "core.no_scm", "true"], cwd=repo, env=env, check=True)
        return env
    return copy


@pytest.fixture(scope="session")
def dvc_repro() -> Callable[..., subprocess.CompletedProcess]:
    """``dvc_repro(repo, env, *targets)``: ``dvc repro [targets]`` in ``repo``; asserts it
    succeeded and returns the finished process."""
    def repro(repo: Path, env: dict, *targets: str) -> subprocess.CompletedProcess:
        run = subprocess.run(DVC + ["repro", *targets], cwd=repo, env=env, capture_output=True,
                             text=True)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        return run
    return repro


@pytest.fixture(scope="session")
def run_stages() -> Callable[[Path], None]:
    """``run_stages(repo)``: every stage of the pipeline copy ``repo`` (:func:`pipeline_copy`),
    matrix entries expanded, each after the stages whose outputs it reads, all in this process
    through stages/run.py as dvc.yaml's commands name it: a whole run without a Python process
    and DVC's bookkeeping per stage (about a quarter of the smoke profile's time). Asserts each
    stage exits 0; this process's cwd, path, environment and signal handlers are restored."""
    def run(repo: Path) -> None:
        with Repo(str(repo)) as dvc:
            commands = [st.cmd for st in reversed(list(nx.topological_sort(dvc.index.graph)))]
        handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(repo)
            mp.setattr(sys, "path", list(sys.path))              # what stages/run.py changes
            mp.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
            mp.delenv("TMS_DEVICE", raising=False)
            try:
                for cmd in commands:
                    argv = shlex.split(cmd)
                    assert argv[:2] == ["python", "stages/run.py"], cmd
                    mp.setattr(sys, "argv", argv[1:])
                    with pytest.raises(SystemExit) as end:
                        runpy.run_path("stages/run.py", run_name="__main__")
                    assert end.value.code == 0, cmd
            finally:
                for s, handler in handlers.items():     # the stages' own (tms.pipeline.stage)
                    signal.signal(s, handler)
    return run


def _hashes(repo: Path, *dirs: str) -> dict[str, str]:
    """sha256 of every file under ``dirs`` of ``repo`` (default: the data and the figures)."""
    files = [f for d in dirs or ("data", "reports/figures") for f in sorted((repo / d).rglob("*"))
             if f.is_file() and f.name != ".gitignore"]
    return {str(f.relative_to(repo)): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


@pytest.fixture(scope="session")
def file_hashes() -> Callable[..., dict[str, str]]:
    """``file_hashes(repo, *dirs)``: {path: sha256} of every file under ``dirs`` of ``repo``
    (default: the data and the figures)."""
    return _hashes


#: How far a number computed from the same data may move on another CPU family: numpy and MKL pick
#: their vector kernels by CPU (AVX2, AVX-512) and sum in another order, and an iterative fit
#: carries that to its own tolerance. Measured 2026-11-28 by judging the three committed
#: snapshots (made on AMD EPYC with AVX-512) again on an AMD EPYC with AVX2: at most 2.2e-10
#: relative (fig3.m_exponent, a Poisson fit), 4e-14 for the closed forms. 1e-6 leaves room for
#: other families and fails on any change a printed digit (4 significant) could show.
CROSS_CPU_REL = 1e-6


def _cross_cpu_differences(got, want, at: str = "") -> list[str]:
    """Where the JSON values ``got`` and ``want`` differ by more than another CPU family can make
    them: a number by more than :data:`CROSS_CPU_REL` (relative), anything else at all."""
    if isinstance(got, dict) and isinstance(want, dict):
        if got.keys() != want.keys():
            return [f"{at}: keys {sorted(got)} != {sorted(want)}"]
        return [d for k in got for d in _cross_cpu_differences(got[k], want[k], f"{at}.{k}")]
    if isinstance(got, list) and isinstance(want, list):
        if len(got) != len(want):
            return [f"{at}: {len(got)} items != {len(want)}"]
        return [d for k, (g, w) in enumerate(zip(got, want))
                for d in _cross_cpu_differences(g, w, f"{at}[{k}]")]
    numbers = all(isinstance(v, float | int) and not isinstance(v, bool) for v in (got, want))
    if numbers and math.isclose(got, want, rel_tol=CROSS_CPU_REL, abs_tol=0):
        return []
    return [] if got == want or (numbers and math.isnan(got) and math.isnan(want)) else [
        f"{at}: {got!r} != {want!r}"]


@pytest.fixture(scope="session")
def cross_cpu_differences() -> Callable[..., list[str]]:
    """``cross_cpu_differences(got, want)``: where two JSON values differ by more than another
    CPU family can make them differ (numbers within :data:`CROSS_CPU_REL` relative, everything
    else exactly); [] when they agree."""
    return _cross_cpu_differences


@pytest.fixture(scope="session")
def smoke_repo(tmp_path_factory, pipeline_copy, load_profile, dvc_repro,
               stage_env) -> tuple[Path, dict]:
    """(repository, environment): the pipeline run once on the smoke profile for the whole
    session, shared by every test that reads its outputs (copy it before changing anything). It
    lies in a folder every pytest-xdist process shares: the first process to ask builds it under
    a file lock, another waits for it (``--dist loadgroup`` sends its tests to one process; the
    lock keeps one build where they are spread), and a build that failed is tried again by the
    next to ask. The hashes of all its files right before and right after its ``dvc repro`` are
    in :data:`SMOKE_HASHES` beside it."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    repo, hashes = shared / "smoke", shared / SMOKE_HASHES
    with FileLock(shared / "smoke.lock"):
        if not hashes.exists():
            shutil.rmtree(repo, ignore_errors=True)
            repo.mkdir()
            env = pipeline_copy(repo, load_profile("smoke"))
            before = _hashes(repo, ".")
            dvc_repro(repo, env)
            write_json({"before": before, "after": _hashes(repo, ".")}, hashes)
    return repo, dict(stage_env)


@pytest.fixture(scope="session")
def smoke_hashes(smoke_repo) -> tuple[dict[str, str], dict[str, str]]:
    """(hashes of all the shared smoke run's files before its `dvc repro`, right after)."""
    saved = json.loads((smoke_repo[0].parent / SMOKE_HASHES).read_text())
    return saved["before"], saved["after"]
