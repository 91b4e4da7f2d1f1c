"""The test suite's own grouping: under ``pytest -n 2 --dist loadgroup`` (``make test``) the tests
that read the shared smoke run go to one process, which builds it once. pytest 9.2 with
pytest-xdist 3.8 grouped nothing (pytest-xdist issue #1386) and every process built its own.
Without pytest-xdist (``-p no:xdist``) the suite runs too, in one process."""

import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]

SHARED = '''
import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def smoke_repo():
    with open(Path(os.environ["BUILT"]), "a") as f:
        f.write(f"{os.getpid()}\\n")
    return os.getpid()


@pytest.mark.parametrize("k", range(8))
def test_reads_the_shared_run(smoke_repo, k):
    assert smoke_repo == os.getpid()


@pytest.mark.parametrize("k", range(8))
def test_alone(k):
    pass
'''


def _suite(pytester, monkeypatch) -> Path:
    """A small suite with the project's conftest and markers; returns the file its shared fixture
    writes a line to each time it is built."""
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"]["markers"]
    pytester.makeini("[pytest]\nmarkers =\n" + "".join(f"    {m}\n" for m in markers))
    pytester.makeconftest((ROOT / "tests/conftest.py").read_text())
    pytester.makepyfile(test_shared=SHARED)
    built = pytester.path / "built.txt"
    monkeypatch.setenv("BUILT", str(built))
    return built


def test_the_shared_smoke_run_is_built_in_one_process(pytester, monkeypatch):
    built = _suite(pytester, monkeypatch)
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-p",
                                           "no:cacheprovider", "--strict-markers")
    result.assert_outcomes(passed=16)
    assert len(built.read_text().split()) == 1      # built once, by the one process of its group


def test_the_suite_runs_without_pytest_xdist_too(pytester, monkeypatch):
    built = _suite(pytester, monkeypatch)
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider",
                                           "--strict-markers")
    result.assert_outcomes(passed=16)
    assert len(built.read_text().split()) == 1
