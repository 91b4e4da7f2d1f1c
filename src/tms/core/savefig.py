"""Figures written byte-stable: PNG and SVG, atomically, without timestamps or software metadata.

Importing this module selects matplotlib's Agg backend (no display needed), fixes the SVG
hash salt and draws text only with matplotlib's own fonts (:data:`FONTS`), so equal figures give
equal bytes on any machine. The figure modules of the papers import ``plt`` from here.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402

from tms.core.io import atomic_path  # noqa: E402

plt.rcParams["svg.hashsalt"] = "tms-repro"

#: The fonts every figure is drawn with: those matplotlib ships (DejaVu, STIX, Computer Modern).
#: A system font of the same name (another version), or a font cache that another matplotlib
#: built (a Debian one lists no STIX, which the glyph fallback of DejaVu needs for ᵀ), would
#: change a figure's bytes from one machine to the next.
FONTS = Path(matplotlib.get_data_path(), "fonts", "ttf")
font_manager.fontManager.ttflist = []
for _font in sorted(FONTS.glob("*.ttf")):
    font_manager.fontManager.addfont(_font)


_META = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}


def _draw(fig: plt.Figure, target, ext: str) -> None:
    fig.savefig(target, format=ext, dpi=150, metadata=_META[ext], bbox_inches="tight")


def png_bytes(fig: plt.Figure) -> bytes:
    """``fig`` as the PNG :func:`save` writes (150 dpi, byte-stable), in memory."""
    buffer = io.BytesIO()
    _draw(fig, buffer, "png")
    return buffer.getvalue()


def save(fig: plt.Figure, stem: str | os.PathLike) -> list[Path]:
    """Write ``stem``.png (150 dpi) and ``stem``.svg, atomically and byte-stable; returns paths."""
    out = []
    for ext in _META:
        path = Path(f"{stem}.{ext}")
        with atomic_path(path) as tmp:
            _draw(fig, tmp, ext)
        out.append(path)
    return out
