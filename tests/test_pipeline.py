"""End to end: `dvc repro` of a tiny profile in a temporary copy of the repository."""

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from repo_copy import TINY, pipeline_copy, repro


def _repro_tiny(repo: Path) -> dict:
    """Copy the pipeline into ``repo`` with the tiny profile and run ``dvc repro`` there."""
    env = pipeline_copy(repo, TINY.read_text())
    repro(repo, env)
    return env


def _hashes(repo: Path) -> dict[str, str]:
    files = [f for d in ("data", "reports/figures") for f in sorted((repo / d).rglob("*"))
             if f.is_file() and f.name != ".gitignore"]
    return {str(f.relative_to(repo)): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


@pytest.fixture(scope="module")
def tiny_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("repo")
    return repo, _repro_tiny(repo)


def test_repro_builds_the_report_and_figures(tiny_repo):
    repo, _ = tiny_repo
    html = (repo / "reports/persian_rug.html").read_text()
    for text in ("Figure 1", "Figure 2", "Figure 3", "Claims", "data:image/png;base64"):
        assert text in html
    for fig in ("fig1", "fig2", "fig3"):
        for ext in ("png", "svg"):
            assert (repo / f"reports/figures/persian_rug/{fig}.{ext}").stat().st_size > 1000


@pytest.mark.parametrize("paper", ["persian_rug", "autoencoding_notes",
                                   "incidental_polysemanticity"])
def test_every_paper_report_is_built_with_its_claims(tiny_repo, paper):
    repo, _ = tiny_repo
    html = (repo / f"reports/{paper}.html").read_text()
    assert "Claims" in html and "data:image/png;base64" in html
    assert "Traceback" not in html
    assert len(list((repo / f"reports/figures/{paper}").glob("*.png"))) >= 3


def test_tables_have_one_row_per_model(tiny_repo):
    repo, _ = tiny_repo
    train = pd.read_parquet(repo / "data/persian_rug/train/n16.parquet")
    assert len(train) == 2 * 2 * 2 * 2              # models × seeds × ratios × p
    assert set(train.model) == {"relu", "linear"}
    assert (train.loss > 0).all() and train.steps.le(60).all()
    rug = pd.read_parquet(repo / "data/persian_rug/rug.parquet")
    assert len(rug) == 2 * 2
    assert len(pd.read_parquet(repo / "data/persian_rug/theory.parquet")) == 2 * 5


def test_same_params_give_byte_identical_data_and_figures(tiny_repo, tmp_path):
    repo, _ = tiny_repo
    again = tmp_path / "again"
    again.mkdir()
    _repro_tiny(again)
    first, second = _hashes(repo), _hashes(again)
    assert len(first) > 20 and first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []
