"""The project files a script runs: its code dependencies, from its imports.

One walk serves two readers: ``dvc.yaml``, whose every stage declares exactly the files its
script (and report template) runs (tms.core.dvc_yaml checks and writes them), so that an edit
reruns only the stages that run the edited file; and the training checkpoints
(tms.engine.checkpoint), keyed by the same files, so that an edit of code a stage does not run
keeps its checkpoints.

The walk is static: every ``import tms…`` and ``from tms… import …`` anywhere in a file (inside
functions too), followed transitively; a package's ``__init__.py`` counts when it holds more
than a docstring. A call ``….module("name")`` (tms.core.papers.Paper.module, a paper's module
imported through the registry) counts as importing ``tms.<package>.name`` of every paper. A
report template (``.ipynb``) is read through its code cells.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from pathlib import Path

from tms.core.papers import PAPERS

#: The repository root (the folder holding src/, stages/ and dvc.yaml).
ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "src"


def module_file(name: str) -> Path | None:
    """The file that importing module ``name`` runs, or None if it is not a project module."""
    base = SRC.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _source(path: Path) -> str:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return path.read_text(encoding="utf-8")


def _imports(source: str) -> set[str]:
    """Names of the project modules that ``source`` imports (``tms`` and below), those a paper's
    registry line imports (``Paper.module("name")``) included."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "module" and len(node.args) == 1
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names |= {f"tms.{p.package}.{node.args[0].value}" for p in PAPERS}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.split(".")[0] == "tms"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tms":
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names
                      if module_file(f"{node.module}.{a.name}")}
    return names


def _has_code(path: Path) -> bool:
    """Whether ``path`` holds more than a docstring (an empty package file runs nothing)."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return any(not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) for s in body)


def executed(entries: Iterable[Path]) -> set[Path]:
    """``entries`` (scripts, notebooks) and every project file that running them imports,
    transitively, as absolute paths. Raises FileNotFoundError for an entry that is missing and
    SyntaxError for one that does not parse."""
    seen = {Path(e).resolve() for e in entries}
    todo = list(seen)
    while todo:
        for name in _imports(_source(todo.pop())):
            parts = name.split(".")
            for k in range(1, len(parts) + 1):
                path = module_file(".".join(parts[:k]))
                if path and path not in seen and (path.name != "__init__.py" or _has_code(path)):
                    seen.add(path)
                    todo.append(path)
    return seen
