"""Publishing the site: the files a page links, the folder and its byte-stable archive."""

import os
import tarfile

import pytest

from tms.reporting import publish


def test_local_refs_keep_files_and_drop_anchors_urls_and_data():
    page = ('<a href="#x">a</a><a href="r.html#figure-fig2">b</a><img src="f/a%20b.png">'
            '<a href="https://example.org/">c</a><img src="data:image/png;base64,AA">'
            '<link href="//host/x.css"><a href="f/d.csv?x=1">d</a>')
    assert publish.local_refs(page) == ["r.html", "f/a b.png", "f/d.csv"]


def _site(root):
    (root / "figures").mkdir(parents=True)
    (root / "index.html").write_text('<a href="r.html#s">r</a><img src="figures/a.png">')
    (root / "r.html").write_text('<a href="index.html">back</a><a href="figures/a.csv">d</a>')
    for name in ("figures/a.png", "figures/a.csv", "unlinked.txt"):
        (root / name).write_text(name)


def test_collect_follows_pages_and_refuses_missing_or_outside_files(tmp_path):
    _site(tmp_path / "site")
    assert [p.as_posix() for p in publish.collect(tmp_path / "site/index.html")] == [
        "figures/a.csv", "figures/a.png", "index.html", "r.html"]
    (tmp_path / "site/r.html").write_text('<a href="gone.csv">x</a>')
    with pytest.raises(FileNotFoundError, match="gone.csv"):
        publish.collect(tmp_path / "site/index.html")
    (tmp_path / "outside.html").write_text("")
    (tmp_path / "site/r.html").write_text('<a href="../outside.html">x</a>')
    with pytest.raises(ValueError, match="outside"):
        publish.collect(tmp_path / "site/index.html")


def test_publish_writes_folder_and_same_archive_bytes_whatever_the_file_times(tmp_path):
    _site(tmp_path / "site")
    archives = []
    for t in (1_000_000, 2_000_000):
        for f in (tmp_path / "site").rglob("*"):
            os.utime(f, (t, t))
        folder, tar = publish.publish(tmp_path / "site/index.html", tmp_path / "public")
        archives.append(tar.read_bytes())
    assert archives[0] == archives[1]
    assert not (folder / "unlinked.txt").exists() and (folder / "figures/a.csv").is_file()
    with tarfile.open(tar) as t:
        members = t.getmembers()
    assert [m.name for m in members] == ["public", "public/figures", "public/figures/a.csv",
                                         "public/figures/a.png", "public/index.html",
                                         "public/r.html"]
    assert {m.mtime for m in members} == {0} and {m.uname for m in members} == {""}
