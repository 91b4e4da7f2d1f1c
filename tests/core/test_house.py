"""The shape of the library (src/tms/__init__.py): small modules, an engine of few arguments, and
imports that only run down the layers pipeline → reporting → papers → engine → core."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "tms"
MODULES = sorted(PACKAGE.rglob("*.py"))
#: The layers, top first; a module may import its own layer's and those below.
LAYERS = [{"pipeline"}, {"reporting"}, {"persian_rug", "incidental", "notes"}, {"engine"}, {"core"}]
#: A paper imports no other paper.
PAPERS = LAYERS[2]


def _layer(package: str) -> int:
    return next(k for k, layer in enumerate(LAYERS) if package in layer)


def _imported_packages(path: Path) -> set[str]:
    """The tms subpackages that ``path`` imports (anywhere in it)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        out |= {n.split(".")[1] for n in names if n.startswith("tms.") and n.count(".") >= 1}
    return out


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_has_at_most_500_lines(path):
    assert len(path.read_text().splitlines()) <= 500


def test_no_engine_function_takes_more_than_8_parameters():
    over = []
    for path in (PACKAGE / "engine").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs
                         if x.arg not in ("self", "cls")]
                count = len(names) + bool(a.vararg) + bool(a.kwarg)
                if count > 8:
                    over.append(f"{path.name}:{node.name} ({count})")
    assert over == []


@pytest.mark.parametrize("path", [p for p in MODULES if p.parent != PACKAGE],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_down_the_layers_and_no_paper_imports_another(path):
    own = path.relative_to(PACKAGE).parts[0]
    imported = _imported_packages(path) - {own}
    assert all(_layer(p) >= _layer(own) for p in imported), imported
    assert not (own in PAPERS and imported & PAPERS), imported


def test_an_import_back_up_is_found(tmp_path):
    up = tmp_path / "x.py"
    up.write_text("def f():\n    from tms.pipeline import stage\n")
    assert _imported_packages(up) == {"pipeline"} and _layer("pipeline") < _layer("engine")
