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
from matplotlib.transforms import Bbox  # noqa: E402
from PIL import Image  # noqa: E402

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
#: Resolution of the PNGs (dots per inch).
DPI = 150


def tight_box(fig: plt.Figure, pad: float | None = None, lay_out: bool = True) -> Bbox:
    """The box, in inches, that ``savefig(bbox_inches="tight")`` crops ``fig`` to: every artist
    after the figure's layout, padded by ``pad`` inches (None: ``savefig.pad_inches``). Laid out
    once for every file :func:`save` writes (a tight ``savefig`` lays the figure out again each
    time: about as long as the drawing of a PNG); ``lay_out`` False: laid out by an earlier call,
    what was added since measured where it stands."""
    if lay_out:
        fig.draw_without_rendering()
    pad = plt.rcParams["savefig.pad_inches"] if pad is None else pad
    return fig.get_tightbbox().padded(pad)


def save(fig: plt.Figure, stem: str | os.PathLike, box: Bbox | None = None) -> list[Path]:
    """Write ``stem``.png (:data:`DPI`) and ``stem``.svg cropped to ``box`` (inches; None:
    :func:`tight_box`), atomically and byte-stable; returns the paths."""
    box = tight_box(fig) if box is None else box
    out = []
    for ext in _META:
        path = Path(f"{stem}.{ext}")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=DPI, metadata=_META[ext], bbox_inches=box)
        out.append(path)
    return out


def png_top(path: str | os.PathLike, inches: float) -> bytes:
    """The top ``inches`` of the PNG at ``path`` (one written by :func:`save`), as PNG bytes: the
    same pixels, cut without drawing the figure again."""
    with Image.open(path) as image:
        rows = min(image.height, round(inches * DPI))
        buffer = io.BytesIO()
        image.crop((0, 0, image.width, rows)).save(buffer, format="png")
    return buffer.getvalue()
