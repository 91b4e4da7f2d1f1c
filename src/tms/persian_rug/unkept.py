"""The statistics of the models whose weights a grid does not keep (persian_rug.grid.keep_weights,
e.g. the paper profile's n_s 8192: 80 GiB of weights), measured where they trained: the one
exception to statistics downstream of the kept weights (tms.persian_rug.stats, the pr_stats stage).

The training stage reaches the statistics code through :func:`measure` alone, imported by name, so
that an edit of tms/persian_rug/stats.py reruns no training (dvc.yaml's code deps of pr_train do
not hold it, tms.core.code_deps). In exchange every measured row carries the hash of the
statistics code that measured it, and :func:`read` refuses rows measured by other code, saying
which stage to rerun: an edited statistic is never silently stale.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

from tms.core import io

#: The module that measures a model's statistics (tms.persian_rug.stats.weight_statistics).
STATS = "tms.persian_rug.stats"
#: The file in a weights folder (tms.persian_rug.weights) that holds the measured statistics of its
#: grid's models that were not kept: columns model, instance, ``code`` and the statistics.
FILE = "unkept_statistics.parquet"


def code() -> str:
    """The hash of the statistics code (sha256 of tms/persian_rug/stats.py and the rows module it
    reads, first 16 hex digits)."""
    digest = hashlib.sha256()
    for name in (STATS, "tms.persian_rug.rows"):
        digest.update(Path(importlib.util.find_spec(name).origin).read_bytes())
    return digest.hexdigest()[:16]


def measure(W_in: np.ndarray, W_out: np.ndarray, b: np.ndarray, p: float,
            device: str = "cpu") -> dict:
    """The statistics of one model (tms.persian_rug.stats.weight_statistics: W_in (n_d, n_s),
    W_out (n_s, n_d), b (n_s,), p in (0, 1]) and ``code``, the :func:`code` that measured them."""
    stats = importlib.import_module(STATS)
    return {**stats.weight_statistics(W_in, W_out, b, p, device=device), "code": code()}


def write(rows: dict[tuple[str, int], dict], folder: str | Path) -> None:
    """Write the measured statistics ``rows`` ({(model, instance): :func:`measure`'s dict}) into
    a weights folder being written (nothing when there are none: a grid that keeps every model's
    weights has no such file)."""
    if rows:
        table = pd.DataFrame([{"model": m, "instance": i, **r} for (m, i), r in rows.items()])
        io.write_parquet(table, Path(folder) / FILE)


def read(folder: str | Path) -> dict[tuple[str, int], dict]:
    """The measured statistics of a weights folder: {(model, instance): statistics} ({} without
    the file). Raises ValueError if any row was measured by statistics code other than today's,
    naming the fix (rerun the training stage that wrote the folder)."""
    path = Path(folder) / FILE
    if not path.is_file():
        return {}
    table = pd.read_parquet(path)
    stale = int((table.code != code()).sum())
    if stale:
        raise ValueError(
            f"{folder}: the statistics of {stale} models whose weights were not kept "
            "(persian_rug.grid.keep_weights) were measured in training by other statistics code "
            "than today's (tms/persian_rug/stats.py or rows.py changed since); rerun their "
            "training stage with -f (e.g. dvc repro -f pr_train@N), or keep their weights")
    values = table.drop(columns=["model", "instance", "code"])
    return {(str(m), int(i)): row for m, i, row in
            zip(table.model, table.instance, values.to_dict("records"))}
