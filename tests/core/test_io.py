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


def _folder(path: Path, text: str, n: int = 10) -> None:
    path.mkdir()
    for k in range(n):
        (path / f"f{k}.txt").write_text(text)


def _contents(path: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(path.iterdir())}


def test_a_folder_replaced_when_a_kill_cuts_the_removal_of_the_old_one_is_whole(tmp_path,
                                                                               monkeypatch):
    target = tmp_path / "snapshot"
    _folder(target, "old")
    rmtree = io.shutil.rmtree

    def cut_halfway(path, *args, **kwargs):     # SIGTERM in the middle of removing the old one
        for f in sorted(Path(path).iterdir())[:5]:
            f.unlink()
        raise KeyboardInterrupt

    monkeypatch.setattr(io.shutil, "rmtree", cut_halfway)
    with pytest.raises(KeyboardInterrupt):
        with io.atomic_path(target, directory=True) as tmp:
            for k in range(10):
                (tmp / f"f{k}.txt").write_text("new")
    monkeypatch.setattr(io.shutil, "rmtree", rmtree)
    assert _contents(target) == {f"f{k}.txt": "new" for k in range(10)}   # the new one, whole
    with io.atomic_path(target, directory=True) as tmp:       # the next write tidies up
        (tmp / "a.txt").write_text("a")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snapshot"]


def test_a_kill_between_the_two_renames_leaves_the_old_folder_for_the_next_write(tmp_path,
                                                                                monkeypatch):
    target = tmp_path / "snapshot"
    _folder(target, "old")
    replace = io.os.replace

    def cut_after_the_first(src, dst):
        if Path(src).name.endswith(".tmp") and Path(dst) == target:
            raise KeyboardInterrupt              # the old one aside, the new one not yet moved
        replace(src, dst)

    monkeypatch.setattr(io.os, "replace", cut_after_the_first)
    with pytest.raises(KeyboardInterrupt):
        with io.atomic_path(target, directory=True) as tmp:
            (tmp / "a.txt").write_text("new")
    monkeypatch.setattr(io.os, "replace", replace)
    assert not target.exists()
    with pytest.raises(RuntimeError):            # the next write puts the old one back first
        with io.atomic_path(target, directory=True):
            raise RuntimeError("this one fails too")
    assert _contents(target) == {f"f{k}.txt": "old" for k in range(10)}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snapshot"]


def test_arrays_round_trip(tmp_path):
    arrays = {"W_in": np.arange(6, dtype=np.float32), "b": np.ones((2, 3), np.float32)}
    io.write_arrays(arrays, tmp_path / "w")
    back = io.read_arrays(tmp_path / "w")
    assert set(back) == {"W_in", "b"} and np.array_equal(back["b"], arrays["b"])
