"""dvc.yaml: every project file a stage runs is covered by the stage's declared deps, and every
package it declares is one it runs."""

import ast
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
STAGES = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]


def _module_file(name: str) -> Path | None:
    """The file that importing module ``name`` runs, or None if it is not a project module."""
    base = SRC.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(source: str) -> set[str]:
    """Names of the project modules that ``source`` imports (``tms`` and below)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.split(".")[0] == "tms"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tms":
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names
                      if _module_file(f"{node.module}.{a.name}")}
    return names


def _source(path: Path) -> str:
    if path.suffix == ".ipynb":
        cells = nbformat.read(path, as_version=4).cells
        return "\n".join(c.source for c in cells if c.cell_type == "code")
    return path.read_text()


def _has_code(path: Path) -> bool:
    """Whether ``path`` holds more than a docstring (an empty package file runs nothing)."""
    body = ast.parse(path.read_text()).body
    return any(not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) for s in body)


def executed(entry: Path) -> set[Path]:
    """``entry`` and every project file that running it imports, transitively (the packages'
    ``__init__.py`` included where they hold code)."""
    seen, todo = {entry}, [entry]
    while todo:
        for name in _imports(_source(todo.pop())):
            parts = name.split(".")
            for k in range(1, len(parts) + 1):
                path = _module_file(".".join(parts[:k]))
                if path and path not in seen and (path.name != "__init__.py" or _has_code(path)):
                    seen.add(path)
                    todo.append(path)
    return seen


def entry_points(stage: dict) -> set[Path]:
    """The project files a stage runs: the files its command names (its script, a notebook)
    and the notebooks among its deps (a report stage executes its template)."""
    named = {ROOT / t for t in stage["cmd"].split() if t.endswith((".py", ".ipynb"))}
    return named | {ROOT / d for d in stage.get("deps", []) if d.endswith(".ipynb")}


def _covers(dep: Path, path: Path) -> bool:
    return path == dep or dep in path.parents


def uncovered(stage: dict) -> list[str]:
    """The project files the stage runs that none of its deps covers."""
    deps = [ROOT / d for d in stage.get("deps", [])]
    files = set().union(*(executed(e) for e in entry_points(stage)))
    return sorted(str(f.relative_to(ROOT)) for f in files if not any(_covers(d, f) for d in deps))


def unused(stage: dict) -> list[str]:
    """The stage's code deps under src/ that cover no file it runs (each would rerun it for
    nothing)."""
    files = set().union(*(executed(e) for e in entry_points(stage)))
    return [d for d in stage.get("deps", []) if d.startswith("src/")
            and not any(_covers(ROOT / d, f) for f in files)]


@pytest.mark.parametrize("name", sorted(STAGES))
def test_stage_deps_cover_every_module_it_runs_and_no_other_package(name):
    assert entry_points(STAGES[name]), f"{name}: no script in its cmd"
    assert uncovered(STAGES[name]) == []
    assert unused(STAGES[name]) == []


def test_a_module_missing_from_the_deps_is_found():
    # pr_report as it once was: its template imports the symmetry claims, the weights folders
    # and the rug (tms.persian_rug.claims, .weights, .rug), which imports the engine's sampler;
    # none of them declared
    stage = {"cmd": "python stages/reporting/report.py persian_rug",
             "deps": ["stages/reporting/report.py", "reports/templates/persian_rug.ipynb",
                      "src/tms/pipeline", "src/tms/reporting"]}
    missing = uncovered(stage)
    assert {"src/tms/persian_rug/claims.py", "src/tms/persian_rug/weights.py",
            "src/tms/engine/sampler.py"} <= set(missing)
    assert not any(m.startswith(("src/tms/pipeline/", "src/tms/reporting/")) for m in missing)
    assert "src/tms/__init__.py" not in missing          # a docstring runs nothing
    assert unused({**stage, "deps": stage["deps"] + ["src/tms/notes"]}) == ["src/tms/notes"]
