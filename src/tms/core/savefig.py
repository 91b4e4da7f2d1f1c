"""Figures written byte-stable: PNG and SVG, atomically, without timestamps or software metadata.

Importing this module selects matplotlib's Agg backend (no display needed) and fixes the SVG
hash salt, so equal figures give equal bytes. The figure modules of the papers import ``plt``
from here.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from tms.core.io import atomic_path  # noqa: E402

plt.rcParams["svg.hashsalt"] = "tms-repro"


def save(fig: plt.Figure, stem: str | os.PathLike) -> list[Path]:
    """Write ``stem``.png (150 dpi) and ``stem``.svg, atomically and byte-stable; returns paths."""
    out = []
    for ext, meta in (("png", {"Software": None}),
                      ("svg", {"Date": None, "Creator": None})):
        path = Path(f"{stem}.{ext}")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=150, metadata=meta, bbox_inches="tight")
        out.append(path)
    return out
