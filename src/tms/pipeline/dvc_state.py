"""DVC's own state files that can stop every DVC command when a fault damages them, checked
before ``make repro`` and ``make verify`` start DVC, so that the fault is named with its fix
instead of DVC's traceback.

DVC records the outputs in use by running commands in ``.dvc/tmp/rwlock`` (JSON). A command
killed while writing it, or a full disk, can leave it truncated: every later DVC command then
fails until it is deleted.
"""

from __future__ import annotations

import json
from pathlib import Path

RWLOCK = Path(".dvc/tmp/rwlock")


def problem(repo: str | Path = ".") -> str | None:
    """What is wrong with DVC's state files in ``repo`` and what to do, or None."""
    path = Path(repo) / RWLOCK
    if not path.is_file():
        return None
    try:
        json.loads(path.read_text(encoding="utf-8") or "{}")
    except (ValueError, UnicodeDecodeError) as err:
        return (f"{RWLOCK} is damaged ({err.__class__.__name__}: {err}), which stops every DVC "
                f"command; if no DVC command is running, delete it (`rm {RWLOCK}`) and run again")
    return None
