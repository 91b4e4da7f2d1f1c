"""End to end: `dvc repro` of a tiny profile in a temporary copy of the repository."""

import hashlib
from pathlib import Path

import pandas as pd
import pytest
from dvc.repo import Repo

from repo_copy import TINY, pipeline_copy, repro

PAPERS = ["persian_rug", "autoencoding_notes", "incidental_polysemanticity"]
#: every file of each repository copy, with its hash, before its `dvc repro`
BEFORE: dict[Path, dict[str, str]] = {}


def _repro_tiny(repo: Path) -> dict:
    """Copy the pipeline into ``repo`` with the tiny profile and run ``dvc repro`` there."""
    env = pipeline_copy(repo, TINY.read_text())
    BEFORE[repo] = _hashes(repo, ".")
    repro(repo, env)
    return env


def _hashes(repo: Path, *dirs: str) -> dict[str, str]:
    """sha256 of every file under ``dirs`` of ``repo`` (default: the data and the figures)."""
    files = [f for d in dirs or ("data", "reports/figures") for f in sorted((repo / d).rglob("*"))
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


@pytest.mark.parametrize("paper", PAPERS)
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
    for paper in PAPERS:                      # the data and the figures of every paper
        for d in (f"data/{paper}/", f"reports/figures/{paper}/"):
            assert any(k.startswith(d) for k in first), d
    assert [k for k in first if first[k] != second[k]] == []


def test_no_stage_writes_outside_its_declared_outs(tiny_repo):
    repo, _ = tiny_repo
    with Repo(str(repo)) as dvc:                        # every stage, matrix entries expanded
        stages = list(dvc.index.stages)
        outs = [Path(o.fs_path).relative_to(repo) for st in stages for o in st.outs]
    assert len(stages) >= 18
    assert [o for o in outs if not (repo / o).exists()] == []   # each stage wrote its outs
    before, after = BEFORE[repo], _hashes(repo, ".")
    written = [f for f in after if before.get(f) != after[f]
               and not f.startswith(".dvc/") and f != "dvc.lock"]
    assert len(written) > 30
    outside = [f for f in written if not any(Path(f) == o or o in Path(f).parents for o in outs)]
    assert outside == []
    assert [f for f in before if f not in after] == []          # nothing of the copy deleted
