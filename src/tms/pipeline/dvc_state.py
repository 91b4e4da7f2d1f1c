"""DVC's own state files that can stop every DVC command when a fault damages them, checked
before ``make repro`` and ``make verify`` start DVC, so that the fault is named with its fix
instead of DVC's traceback.

DVC records the outputs in use by running commands in ``.dvc/tmp/rwlock`` (JSON). A command
killed while writing it, or a full disk, can leave it truncated: every later DVC command then
fails until it is deleted. ``dvc.lock`` (YAML), cut short by a kill or a full disk, stops them too;
git holds the last committed one.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

RWLOCK = Path(".dvc/tmp/rwlock")
LOCK = Path("dvc.lock")


def problem(repo: str | Path = ".") -> str | None:
    """What is wrong with DVC's state files in ``repo`` and what to do, or None."""
    return _rwlock(Path(repo) / RWLOCK) or _lock(Path(repo) / LOCK)


def _lock(path: Path) -> str | None:
    if not path.is_file():
        return None
    try:
        content = _read(path)
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        where = getattr(err, "problem_mark", None)
        return (f"{LOCK} is damaged (not YAML{f', line {where.line + 1}' if where else ''}): "
                f"`git checkout {LOCK}` restores the last committed one (then `make repro` "
                f"reruns what it does not record), or delete it to run every stage again")
    if content is not None and not _well_formed(content):
        return (f"{LOCK} is damaged (its stages cut short): `git checkout {LOCK}` restores "
                f"the last committed one, or delete it to run every stage again")
    return None


def recorded_stages(lock: str | Path = LOCK) -> dict[str, dict]:
    """{stage: its dvc.lock entry} of the lock file ``lock``; empty where there is none, or where
    it is damaged (:func:`problem` names that)."""
    try:
        content = _read(Path(lock)) if Path(lock).is_file() else None
    except (yaml.YAMLError, UnicodeDecodeError):
        return {}
    return (content.get("stages") or {}) if _well_formed(content) else {}


def _read(path: Path) -> object:
    return yaml.load(path.read_text(encoding="utf-8"),
                     Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _well_formed(content: object) -> bool:
    """Whether a parsed dvc.lock is a mapping whose stages are mappings, their ``outs`` lists of
    mappings with a ``path`` (a file cut short can parse and still not be one)."""
    if not isinstance(content, dict) or not isinstance(stages := content.get("stages") or {},
                                                       dict):
        return False
    return all(isinstance(entry, dict) and isinstance(outs := entry.get("outs") or [], list)
               and all(isinstance(o, dict) and isinstance(o.get("path"), str) for o in outs)
               for entry in stages.values())


def _rwlock(path: Path) -> str | None:
    if not path.is_file():
        return None
    try:
        json.loads(path.read_text(encoding="utf-8") or "{}")
    except (ValueError, UnicodeDecodeError) as err:
        return (f"{RWLOCK} is damaged ({err.__class__.__name__}: {err}), which stops every DVC "
                f"command; if no DVC command is running, delete it (`rm {RWLOCK}`) and run again")
    return None
