"""Atomic, deterministic artefact writing.

Every output is written to a hidden temporary file beside its target and moved into place
with ``os.replace`` only when complete, so an interrupted stage never leaves a half-written
file that DVC could cache. What a killed write leaves behind (``.NAME.tmp.*``, ``.NAME.*.tmp``)
is ignored by DVC (``.dvcignore``), so it never enters a hash, and removed by the next write of
the same output. Formats are byte-stable for equal content (no timestamps).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

#: Where training stages keep their checkpoints (tms.engine.checkpoint): outside every output
#: DVC hashes or deletes.
CHECKPOINTS = Path(".checkpoints")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (hidden, same suffix); on success move it onto ``path``.

    With ``directory=True`` the temporary path is an empty directory and replaces a
    previous directory at ``path``: the previous one is renamed aside whole, the new one renamed
    into place, and only then is the previous one removed, so that an interruption at any point
    leaves one of the two whole at ``path`` (or, between the two renames, the previous one aside,
    which the next call puts back before anything else). On an exception the temporary file is
    removed and the target is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    previous = _previous(path)
    if previous.exists() and not path.exists():   # cut off between the two renames
        os.replace(previous, path)
    for stale in _temporaries(path):          # left by an interrupted write of this output
        shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    if directory:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    else:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.tmp.", suffix=path.suffix, dir=path.parent)
        os.close(fd)
        tmp = Path(name)
    try:
        yield tmp
        tmp.chmod(0o755 if directory else 0o644)
        if directory and path.exists():
            os.replace(path, previous)
            os.replace(tmp, path)
            shutil.rmtree(previous)
        else:
            os.replace(tmp, path)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise


def _previous(path: Path) -> Path:
    """Where :func:`atomic_path` puts the directory it replaces until the new one is in place
    (one of :func:`_temporaries`)."""
    return path.parent / f".{path.name}.previous.tmp"


def _temporaries(path: Path) -> list[Path]:
    """The temporary files and directories :func:`atomic_path` makes for ``path``."""
    return [p for pattern in (f".{path.name}.tmp.*", f".{path.name}.*.tmp")
            for p in path.parent.glob(pattern)]


def write_parquet(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a table as Parquet, atomically, without the pandas index."""
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)


def write_csv(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``df`` as CSV without its index, floats to 10 significant digits (byte-stable),
    atomically."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False, float_format="%.10g")


def write_json(obj: object, path: str | os.PathLike) -> None:
    """Write JSON (sorted keys, 2-space indent, trailing newline), atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, allow_nan=True) + "\n")


def write_arrays(arrays: Mapping[str, np.ndarray], path: str | os.PathLike) -> None:
    """Write a directory of ``NAME.npy`` files (byte-stable, unlike zipped .npz), atomically."""
    with atomic_path(path, directory=True) as tmp:
        for name, arr in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(arr))


def read_arrays(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Read a directory written by :func:`write_arrays`."""
    return {p.stem: np.load(p) for p in sorted(Path(path).glob("*.npy"))}
