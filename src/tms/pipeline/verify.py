"""Re-hash every output of the pipeline against ``dvc.lock`` and name those that differ.

``dvc status`` trusts its record of each file's size and modification time and does not read
a file whose both are unchanged, so a byte changed in place (by a disk error, or a tool that
restores times) goes unseen. This check runs DVC's status with a fresh, empty record
(``core.site_cache_dir`` in a temporary folder), so DVC hashes every output anew.

    python -m tms.pipeline.verify            # `make verify`
    python -m tms.pipeline.verify --repair   # `make verify REPAIR=1`

Exit status 0: every output matches; 1: an output differs or is missing (each named, with what
to do); 2: the check could not run (not a DVC repository, DVC busy with another command, a
broken dvc.yaml), said in one line.

**Repair.** Outputs are hard links to DVC's cache (``cache.type hardlink,symlink``: one copy of
80 GiB of weights, not two), so an edit in place of an output (``truncate``, an editor that
writes in place, a disk error) damages the cache copy too, and ``dvc checkout`` would restore
the damaged bytes, and a rerun of the stage relink them (DVC finds an object of the right name
and keeps it). ``--repair`` re-hashes the cache object of every output that differs (every file
of a directory output), deletes each whose content is not its name (DVC itself drops a damaged
object of a directory output when it re-hashes it), removes the damaged output, then restores it
with ``dvc checkout`` where its cache is whole, else reruns its stage alone (``dvc repro --force
--single-item``); then it reruns every stage downstream of a repaired output, in the pipeline's
order (:func:`downstream`): what a later stage computed from the damaged bytes (a summary of a
flipped verdict, a page) is not left standing; and it checks again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from dvc.exceptions import DvcException
from dvc.repo import Repo

from tms.pipeline import dvc_state, repro

#: What to do about an output, by DVC's word for it.
ADVICE = {"deleted": "missing: `dvc checkout` restores it from the cache, or `make repro` "
                      "rebuilds it",
          "modified": "modified (its content is not what dvc.lock records): `make verify "
                      "REPAIR=1` drops a damaged cache copy and restores or rebuilds it"}


def changed_by_stage(repo: str = ".") -> dict[str, dict[str, str]]:
    """{stage: {output path: DVC's word for it}} of the outputs :func:`changed_outputs` finds."""
    with tempfile.TemporaryDirectory() as tmp, \
            Repo(repo, config={"core": {"site_cache_dir": tmp}}) as dvc:
        status = dvc.status()
    out: dict[str, dict[str, str]] = {}
    for stage, entries in status.items():
        name = _name(stage)
        for entry in entries:
            if isinstance(entry, dict) and entry.get("changed outs"):
                out.setdefault(name, {}).update(entry["changed outs"])
    return out


def changed_outputs(repo: str = ".") -> dict[str, str]:
    """{output path: DVC's word for it ('modified', 'deleted', …)} for every output of every
    stage whose content, hashed anew, is not what ``dvc.lock`` records. Changed dependencies
    are not reported here (``dvc status`` does that)."""
    return dict(sorted((path, how) for outs in changed_by_stage(repo).values()
                       for path, how in outs.items()))


def _md5(path: Path) -> str:
    digest = hashlib.md5()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _objects(repo: Path, path: str) -> list[str]:
    """The cache object names (md5) of the output ``path`` as dvc.lock records it: one for a
    file, the manifest's entries and the manifest itself for a directory."""
    lock = yaml.safe_load((repo / "dvc.lock").read_text(encoding="utf-8"))["stages"]
    md5 = next((o["md5"] for st in lock.values() for o in st.get("outs", [])
                if o["path"] == path), None)
    if md5 is None:
        return []
    if not md5.endswith(".dir"):
        return [md5]
    manifest = _object_path(repo, md5)
    entries = json.loads(manifest.read_text()) if manifest.is_file() else []
    return [md5, *(e["md5"] for e in entries)]


def _object_path(repo: Path, md5: str) -> Path:
    return repo / ".dvc/cache/files/md5" / md5[:2] / md5[2:]


def damaged_objects(repo: str | Path, path: str) -> list[Path]:
    """The cache objects of the output ``path`` whose content is not their name."""
    repo = Path(repo)
    return [obj for md5 in _objects(repo, path)
            if (obj := _object_path(repo, md5)).is_file()
            and _md5(obj) != md5.removesuffix(".dir")]


def downstream(repo: str, stages: list[str]) -> list[str]:
    """The stages that depend, directly or through others, on an output of one of ``stages``
    (not those themselves), in an order DVC can run them (each after what it reads)."""
    import networkx as nx

    with Repo(repo) as dvc:
        graph = dvc.index.graph                 # an edge runs from a stage to what it reads
        named = [s for s in graph if _name(s.addressing) in stages]
        later = set().union(*(nx.ancestors(graph, s) for s in named)) - set(named)
        return [_name(s.addressing) for s in reversed(list(nx.topological_sort(graph)))
                if s in later]


def _name(address: str) -> str:
    """A stage's name from DVC's address of it (which names dvc.yaml outside the cwd)."""
    return address.rsplit("dvc.yaml:", 1)[-1]


def _dvc(root: Path, *args: str) -> None:
    run = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=root,
                         env=repro.dvc_environment(), capture_output=True, text=True)
    if run.returncode != 0:
        raise DvcException(f"dvc {' '.join(args)} failed: {run.stderr.strip()}")


def repair(repo: str = ".") -> list[str]:
    """Repair every output that differs from dvc.lock, then rerun what was computed from it (see
    the module's text); returns what was done, one line per output and per stage."""
    root, done = Path(repo), []
    repaired = changed_by_stage(repo)
    for stage, outs in repaired.items():
        rerun = False
        for path in outs:
            bad = damaged_objects(root, path)
            for obj in bad:
                obj.chmod(0o644)
                obj.unlink()
            gone = [m for m in _objects(root, path) if not _object_path(root, m).is_file()]
            target = root / path
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            rerun = rerun or bool(gone)
            done.append(f"{path}: " + (f"{len(bad)} damaged cache object(s) deleted, "
                                       f"{len(gone)} to rebuild" if gone else "cache whole"))
        _dvc(root, *(["repro", "--force", "--single-item", stage] if rerun
                     else ["checkout", "--force", *outs]))
        done.append(f"{stage}: " + ("rerun" if rerun else "restored from the cache"))
    if later := downstream(repo, list(repaired)):
        _dvc(root, "repro", "--force", "--single-item", *later)
        done += [f"{stage}: rerun (downstream of a repaired output)" for stage in later]
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repair", action="store_true",
                    help="delete damaged cache objects, restore or rebuild what differs")
    args = ap.parse_args(argv)
    if why := dvc_state.problem():
        print(f"verify: cannot check the outputs: {why} (exit status 2)", file=sys.stderr)
        return 2
    try:
        if args.repair:
            for line in repair():
                print(f"repair: {line}")
        changed = changed_outputs()
    except DvcException as err:
        print(f"verify: cannot check the outputs: {err} (exit status 2)", file=sys.stderr)
        return 2
    for path, how in changed.items():
        print(f"{path}: {ADVICE.get(how, f'{how} (its content is not what dvc.lock records)')}")
    if not changed:
        print("every output matches dvc.lock")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
