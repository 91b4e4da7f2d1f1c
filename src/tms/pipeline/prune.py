"""Before ``dvc repro``: the outputs of stages that are no longer in the pipeline, removed.

A params edit or a profile switch can drop items of a matrix stage (``pr_train@16`` after
``n_s: [16, 32]`` becomes ``[64, 128]``). DVC keeps their entries in ``dvc.lock`` and their files
in the workspace, and since the stages downstream read whole folders (``data/persian_rug/train``),
the stale files change those folders' hashes: the downstream stages rerun instead of coming back
from DVC's run cache. Removing the stale outputs and their ``dvc.lock`` entries leaves the
workspace as a fresh run of the current params would; their content stays in DVC's cache, so
switching back restores them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tms.pipeline import dvc_state


def pipeline_stages(repo: str | Path = ".") -> list[str]:
    """The stages of ``repo``'s pipeline as its params make it, in DVC's order, matrix items
    expanded (``dvc stage list``; dvc.lock may still hold stages that a change of params
    removed). Raises RuntimeError if DVC cannot list them."""
    run = subprocess.run([sys.executable, "-m", "dvc", "stage", "list", "--name-only"],
                         cwd=repo, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"dvc stage list failed: {run.stderr.strip()}")
    return run.stdout.split()


def stale(repo: str | Path = ".") -> dict[str, list[str]]:
    """{stage: its output paths} of the dvc.lock entries whose stage is not in the pipeline."""
    recorded = dvc_state.recorded_stages(Path(repo) / "dvc.lock")
    if not recorded:
        return {}
    stages = set(pipeline_stages(repo))
    return {name: [o["path"] for o in (entry.get("outs") or [])]
            for name, entry in recorded.items() if name not in stages}


def prune(repo: str | Path = ".") -> list[str]:
    """Remove the outputs and the dvc.lock entries of :func:`stale` stages; returns their names.
    An output another current stage also declares is left alone."""
    from dvc.utils.serialize import modify_yaml

    repo = Path(repo)
    gone = stale(repo)
    if not gone:
        return []
    with modify_yaml(repo / "dvc.lock") as lock:
        kept = {o["path"] for name, entry in lock["stages"].items() if name not in gone
                for o in (entry.get("outs") or [])}
        for name in gone:
            del lock["stages"][name]
    for path in (p for outs in gone.values() for p in outs if p not in kept):
        target = repo / path
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
    return sorted(gone)
