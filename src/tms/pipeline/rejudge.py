"""A results snapshot's verdicts judged again by the claims code as it stands, from the evidence
the snapshot keeps.

    python -m tms.pipeline.rejudge results/ladder-settled     # `make rejudge SNAPSHOT=…`

When the rules that judge the claims change, a snapshot whose run cannot be repeated cheaply (a
GPU's, or hours of two cores) is judged again from its own ``data/`` (every table a claim reads:
tms.pipeline.snapshot.evidence_files) and ``params.yaml``. Each paper's claims stage
(``stages/*/*_claims.py``: its ``main``, given its params section) runs in a scratch folder that
sees the snapshot's ``data/``; ``claims/``, ``claims.json`` and ``claim_values.json`` are
replaced by what it writes (tms.reporting.metrics.metrics and claim_values, as the site stage
writes them). ``site/`` stays the run's: its reports show the verdicts of the revision that made
it. The snapshot's README says so, names the revision that judged again and every claim whose
verdict changed; ``results/README.md`` and the README's answer table are rewritten
(tms.pipeline.verdicts).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import tms
from tms.core import io
from tms.pipeline import verdicts
from tms.pipeline.outcome import changes
from tms.pipeline.snapshot import CLAIMS_DIR, SnapshotError
from tms.pipeline.stage import PARAMS_FILE
from tms.reporting import metrics

#: The claims stages, one per paper, relative to the repository root.
CLAIMS_STAGES = "stages/*/*_claims.py"
#: The README paragraph a judging writes (replaced by the next one), and the one it follows.
NOTE = re.compile(rf"^{re.escape(verdicts.JUDGED_AGAIN)} .*?\n\n", re.M | re.S)
MADE = re.compile(r"^Made by git revision .*?\n\n", re.M | re.S)


def own_package(repo: str | Path = ".") -> None:
    """Raise SnapshotError unless the ``tms`` package imported is ``repo``'s (under its src/):
    the claims stages of ``repo`` run with it."""
    src = Path(repo).resolve() / "src"
    if not Path(tms.__file__).resolve().is_relative_to(src):
        raise SnapshotError(f"the tms package imported is {Path(tms.__file__).parent}, not "
                            f"{src}'s: run it from that checkout's environment")


def code_revision(repo: str | Path = ".") -> str:
    """The last commit of ``repo``'s source, stages and pyproject.toml, when they are as
    committed: the revision that names the code that judges (a later commit of docs or results
    keeps it). Raises SnapshotError when they are not, or ``repo`` has no commit."""
    repo = Path(repo).resolve()
    git = lambda *args: subprocess.run(["git", *args], cwd=repo, capture_output=True,  # noqa: E731
                                       text=True)
    code = ("src", "stages", "pyproject.toml")      # and the library versions it pins
    dirty = git("status", "--porcelain", "--", *code)
    head = git("log", "-1", "--format=%H", "--", *code)
    if dirty.returncode or head.returncode or not head.stdout.strip():
        raise SnapshotError(f"{repo} is not a git checkout with a commit of src or stages: "
                            + (dirty.stderr + head.stderr).strip())
    if dirty.stdout.strip():
        raise SnapshotError("the claims code differs from the commit, so no revision names it; "
                            f"commit it first:\n{dirty.stdout.strip()}")
    return head.stdout.strip()


def _stage(path: Path):
    spec = importlib.util.spec_from_file_location(f"_rejudge_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def judge(folder: Path, repo: Path, out: Path) -> None:
    """Run ``repo``'s claims stages on the snapshot ``folder`` (its ``params.yaml`` and
    ``data/``) and put the claims files they write (tms.core.claim_rows.export) in ``out``.
    Raises FileNotFoundError where the snapshot lacks a table a claim reads."""
    folder, stages = folder.resolve(), sorted(repo.resolve().glob(CLAIMS_STAGES))
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / "data").symlink_to(folder / "data", target_is_directory=True)
        with contextlib.chdir(scratch):
            for path in stages:
                module = _stage(path)
                module.main(module.params.SECTION.load(folder / PARAMS_FILE))
        shutil.copytree(Path(scratch) / CLAIMS_DIR, out, dirs_exist_ok=True)


def note(revision: str, changed: list[str]) -> str:
    """The README paragraph of a judging by ``revision`` whose verdicts differ from the run's
    (its site's) as ``changed`` lists."""
    return (f"{verdicts.JUDGED_AGAIN} `{revision}` from this folder's `data/` and "
            "`params.yaml` (`make rejudge`): `claims/`, `claims.json` and `claim_values.json` "
            "are its verdicts; `site/` is the run's, with the verdicts of the revision that "
            "made it. " + ("Changed: " + "; ".join(changed) + "." if changed
                           else "No verdict changed from the run's.") + "\n\n")


def _split(change: str) -> tuple[str, str, str]:
    """('paper id', old, new) of one change as tms.pipeline.outcome.changes words it."""
    claim, _, verdicts_ = change.partition(": ")
    old, _, new = verdicts_.partition(" → ")
    return claim, old, new


def since_run(earlier: str, changed: list[str]) -> list[str]:
    """The changes from the run's own verdicts to the new ones: those of this judging
    (``changed``) composed with those an earlier judging's README paragraph (``earlier``, its
    text; '' for none) lists from the run's; a claim back at the run's verdict drops out."""
    listed = re.search(r"Changed: (.*)\.\n", earlier)
    before = [_split(c) for c in listed.group(1).split("; ")] if listed else []
    run = {claim: old for claim, old, _ in before}
    new = {claim: verdict for claim, _, verdict in before}
    for claim, old, verdict in map(_split, changed):
        run.setdefault(claim, old)
        new[claim] = verdict
    return [f"{claim}: {run[claim]} → {new[claim]}" for claim in run if run[claim] != new[claim]]


def rejudge(folder: str | Path, repo: str | Path = ".", revision: str | None = None) -> list[str]:
    """Judge the snapshot ``folder`` again with ``repo``'s claims code (:func:`judge`), replace
    its claims files and its README's judging paragraph (:func:`note`, after the paragraph that
    names the run's revision, replacing an earlier one); returns the verdicts that differ from
    the run's own (:func:`since_run`). revision: the revision to name (None: :func:`code_revision`,
    which raises SnapshotError when the code is not committed). Raises FileNotFoundError, before
    anything is written, for a folder without claims/, README.md, params.yaml or data/."""
    folder, repo = Path(folder), Path(repo)
    for need in (folder / "claims", folder / "README.md", folder / PARAMS_FILE, folder / "data"):
        if not need.exists():
            raise FileNotFoundError(f"{need} is missing: {folder} is not a results snapshot")
    if revision is None:
        own_package(repo)
        revision = code_revision(repo)
    with io.atomic_path(folder / "claims", directory=True) as tmp:
        judge(folder, repo, tmp)
        changed = changes(folder / "claims", tmp)
    after = metrics.load_claims(folder / "claims")
    io.write_json(metrics.metrics(after), folder / "claims.json")
    io.write_json(metrics.claim_values(after), folder / "claim_values.json")
    readme = folder / "README.md"
    text = readme.read_text(encoding="utf-8")
    changed = since_run(earlier.group(0) if (earlier := NOTE.search(text)) else "", changed)
    text = NOTE.sub("", text)
    made = MADE.search(text)
    at = made.end() if made else len(text)
    with io.atomic_path(readme) as tmp:
        tmp.write_text(text[:at] + note(revision, changed) + text[at:], encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="the snapshot to judge again, e.g. results/ladder-settled")
    args = ap.parse_args(argv)
    try:
        changed = rejudge(args.folder)
        page = verdicts.write(Path(args.folder).parent)
    except (SnapshotError, FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print("\n".join(changed) or "no verdict changed")
    print(f"wrote {args.folder}/claims/ and {page}; commit both to keep them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
