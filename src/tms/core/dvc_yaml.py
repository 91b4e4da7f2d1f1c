"""The code deps of ``dvc.yaml``'s stages: every stage declares exactly the project files its
script (and report template) runs (tms.core.code_deps.executed), so that an edit reruns only the
stages that run the edited file, and the site (:data:`REVISION_STAGE`) declares every stage's
code.

    python -m tms.core.dvc_yaml            # say which stages' code deps differ (exit 1 if any)
    python -m tms.core.dvc_yaml --write    # rewrite dvc.yaml's code deps (make deps)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

from tms.core.code_deps import ROOT, executed
from tms.core.io import atomic_path

DVC_YAML = ROOT / "dvc.yaml"


def is_code(dep: str) -> bool:
    """Whether a dvc.yaml dep is code (a script, a module, a report template), not data."""
    return dep.endswith((".py", ".ipynb")) or dep.startswith(("src/", "stages/"))


def entry_points(stage: dict) -> list[str]:
    """The files a stage runs, as dvc.yaml names them: the ``.py``/``.ipynb`` files of its
    command and the report templates among its deps (a report stage executes its template)."""
    named = [t for t in stage["cmd"].split() if t.endswith((".py", ".ipynb"))]
    return named + [d for d in stage.get("deps", []) if d.endswith(".ipynb") and d not in named]


def code_deps(stage: dict) -> list[str]:
    """The code deps a stage must declare: its entry points, then every project module they run
    (sorted), as paths relative to the repository root."""
    entries = entry_points(stage)
    modules = executed(ROOT / e for e in entries) - {(ROOT / e).resolve() for e in entries}
    return entries + sorted(str(m.relative_to(ROOT)) for m in modules)


#: The stage whose page names the revision of the code every stage runs
#: (tms.reporting.revision.git_revision): it declares every stage's code deps, after its own, so that
#: a commit of any of them reruns it (a few seconds) and its page never names a stale revision.
REVISION_STAGE = "site"


def wanted(stages: dict) -> dict[str, list[str]]:
    """The code deps each stage of ``stages`` (a dvc.yaml's mapping) must declare:
    :func:`code_deps`, and for :data:`REVISION_STAGE` its own followed by every other stage's
    (sorted, each once)."""
    out = {name: code_deps(stage) for name, stage in stages.items() if name != REVISION_STAGE}
    if REVISION_STAGE in stages:     # what it runs itself: its command (the templates it
        own = code_deps({"cmd": stages[REVISION_STAGE]["cmd"]})   # declares, it does not run)
        out[REVISION_STAGE] = own + sorted({d for deps in out.values() for d in deps} - set(own))
    return out


def differences(stages: dict) -> dict[str, dict[str, list[str]]]:
    """Per stage whose declared code deps are not those of :func:`wanted`: the files it should
    declare and does not (``missing``) and the code it declares and should not (``surplus``)."""
    out, every = {}, wanted(stages)
    for name, stage in stages.items():
        declared = [d for d in stage.get("deps", []) if is_code(d)]
        wanted_here = every[name]
        missing = [d for d in wanted_here if d not in declared]
        surplus = [d for d in declared if d not in wanted_here]
        if missing or surplus:
            out[name] = {"missing": missing, "surplus": surplus}
    return out


def read_stages(path: Path = DVC_YAML) -> dict:
    """The ``stages`` mapping of a dvc.yaml (plain dicts and lists)."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))["stages"]


def write(path: Path = DVC_YAML) -> list[str]:
    """Rewrite every stage's code deps in ``path`` to those of :func:`wanted`, data deps kept
    after them in their order. Only the lines of each block-style ``deps:`` list change (comments
    and layout elsewhere are kept). Returns the names of the stages changed."""
    stages = read_stages(path)
    every = wanted(stages)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    out, changed, stage, k = [], [], None, 0
    while k < len(lines):
        line = lines[k]
        out.append(line)
        k += 1
        if re.fullmatch(r"  (\w+):\n", line):
            stage = line.strip()[:-1]
        elif line == "    deps:\n" and stage in stages:
            old = []
            while k < len(lines) and lines[k].startswith("      - "):
                old.append(lines[k][8:].strip())
                k += 1
            new = every[stage] + [d for d in old if not is_code(d)]
            out += [f"      - {d}\n" for d in new]
            if new != old:
                changed.append(stage)
    if changed:
        with atomic_path(path) as tmp:
            tmp.write_text("".join(out), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite dvc.yaml's code deps")
    args = ap.parse_args(argv)
    if args.write:
        changed = write()
        print(f"dvc.yaml: code deps rewritten in {len(changed)} stage(s)"
              + (f": {', '.join(changed)}" if changed else ""))
        return 0
    diff = differences(read_stages())
    for name, d in diff.items():
        print(f"{name}: missing {d['missing']}, surplus {d['surplus']}")
    if diff:
        print("run `python -m tms.core.dvc_yaml --write` (`make deps`) to fix dvc.yaml")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
