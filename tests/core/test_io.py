"""Artefacts written atomically and byte-stable: tables, arrays, JSON and figures."""

from pathlib import Path

import numpy as np
import pytest

from tms.core import io, savefig
from tms.persian_rug import figures, rug


def test_saved_figures_are_byte_stable(tmp_path):
    W = rug.rug_matrix(16, rug.choose_rows(16, 4, 0))
    a = savefig.save(figures.fig1_rug(W, 4), tmp_path / "a")
    b = savefig.save(figures.fig1_rug(W, 4), tmp_path / "b")
    for x, y in zip(a, b):
        assert x.read_bytes() == y.read_bytes()
    assert b"Date" not in a[1].read_bytes().split(b"</metadata>")[0].split(b"<metadata>")[-1]


def test_figures_draw_only_with_matplotlibs_own_fonts():
    from matplotlib import font_manager

    fonts = {Path(f.fname).parent for f in font_manager.fontManager.ttflist}
    assert fonts == {savefig.FONTS}            # no system font, whatever the font cache held
    for family in ("DejaVu Sans", "STIXGeneral", "cmr10"):     # the text, its glyph fallback
        found = font_manager.findfont(font_manager.FontProperties(family=family),
                                      fallback_to_default=False)
        assert Path(found).parent == savefig.FONTS, (family, found)


def test_atomic_write_leaves_old_target_on_failure(tmp_path):
    target = tmp_path / "t.json"
    io.write_json({"a": 1}, target)
    with pytest.raises(RuntimeError):
        with io.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert target.read_text().startswith("{") and sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_arrays_round_trip(tmp_path):
    arrays = {"W_in": np.arange(6, dtype=np.float32), "b": np.ones((2, 3), np.float32)}
    io.write_arrays(arrays, tmp_path / "w")
    back = io.read_arrays(tmp_path / "w")
    assert set(back) == {"W_in", "b"} and np.array_equal(back["b"], arrays["b"])
