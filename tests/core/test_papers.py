"""The registry of papers (tms.core.papers): the one place the list of papers is spelled, and what
reads it (the params schema, the site's order, the errata, a paper's module)."""

import ast
import re
from pathlib import Path

import pytest

from tms.core import papers
from tms.pipeline import params
from tms.reporting import metrics

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "src/tms/core/papers.py"


def _strings(path: Path) -> list[str]:
    """The string constants of ``path`` that are not docstrings (prose may name papers)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docs]


def _named(texts, keys=papers.KEYS) -> set[str]:
    """The paper keys spelled out in ``texts`` (as a string, or a part of a path or module name
    in one)."""
    return {key for text in texts for key in keys
            if re.search(rf"(?<![a-z_]){key}(?![a-z_])", text)}


def papers_named(path: Path) -> set[str]:
    """The paper keys that the code (not the docstrings) of ``path`` spells out."""
    return _named(_strings(path))


def paper_lists(path: Path) -> list[int]:
    """The lines of ``path`` where one list, tuple, set or dict literal holds two paper keys or
    more (a test may read one paper's data by name, or list files, but not enumerate the papers)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict)
            and len({e.value for e in (node.keys if isinstance(node, ast.Dict) else node.elts)
                     if isinstance(e, ast.Constant) and e.value in papers.KEYS}) > 1]


def _files(*folders: str) -> list[Path]:
    return [f for d in folders for f in sorted((ROOT / d).rglob("*.py"))]


def test_no_file_but_the_registry_spells_out_more_than_one_paper():
    spelled = {str(f.relative_to(ROOT)): sorted(named) for f in _files("src", "stages", "bench")
               if f != REGISTRY and len(named := papers_named(f)) > 1}
    assert spelled == {}, "papers named outside tms.core.papers (read the registry instead)"
    lists = {str(f.relative_to(ROOT)): lines for f in _files("tests")
             if f != Path(__file__) and (lines := paper_lists(f))}
    assert lists == {}, "lists of papers in tests (iterate tms.core.papers.PAPERS instead)"


def test_the_check_finds_a_list_of_papers(tmp_path):
    listed = tmp_path / "listed.py"
    listed.write_text('"""persian_rug and autoencoding_notes in prose are fine."""\n'
                      'one = {"persian_rug": 1}["persian_rug"]\n'
                      'FILES = ["persian_rug.json", "autoencoding_notes.json"]\n'
                      'PAPERS = ["persian_rug", "autoencoding_notes"]\n')
    assert papers_named(listed) == {"persian_rug", "autoencoding_notes"}
    assert paper_lists(listed) == [4]
    assert papers_named(REGISTRY) == set(papers.KEYS)


def test_the_schema_the_site_and_the_errata_follow_the_registry():
    assert tuple(params.Params.model_fields) == metrics.PAPERS == papers.KEYS
    for paper in papers.PAPERS:
        assert paper.module("params").KEY == paper.key
        assert paper.module("params").SECTION.model is params.Params.model_fields[
            paper.key].annotation
        assert {e.paper for e in paper.module("errata").ERRATA} <= {paper.key}
        assert paper.claims == f"reports/claims/{paper.key}.json"
    assert papers.of_package("tms.incidental.claims") is papers.paper("incidental_polysemanticity")


def test_an_unknown_paper_names_the_papers_there_are():
    with pytest.raises(KeyError, match="the papers are persian_rug, incidental_polysemanticity"):
        papers.paper("persian_rugs")
