"""Publish the report site: one self-contained folder and a byte-stable .tar.gz of it.

Starting from the index page, every local file a page links or loads (reports, figures, data
downloads) is collected, following the links of each HTML page found; nothing else is copied.

    python -m tms.reporting.publish reports/index.html public     # writes public/, public.tar.gz
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tarfile
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.refs += [v for k, v in attrs if k in ("href", "src") and v]


def local_refs(page: str) -> list[str]:
    """The paths (fragment and query dropped, percent-decoded) of the local files that the HTML
    text ``page`` links or loads through ``href`` and ``src``, in order of appearance: links
    within the page, ``data:`` URLs and URLs with a scheme or host are left out."""
    parser = _Refs()
    parser.feed(page)
    parser.close()
    out = []
    for ref in parser.refs:
        url = urlsplit(ref)
        if not url.scheme and not url.netloc and url.path:
            out.append(unquote(url.path))
    return out


def collect(index: str | Path) -> list[Path]:
    """The files of the site of ``index``, relative to its folder and sorted: the index and
    every file reached through :func:`local_refs`, following HTML pages.

    Raises FileNotFoundError for a link to a missing file and ValueError for one outside the
    index's folder.
    """
    root = Path(index).resolve().parent
    todo, seen = [Path(index).resolve()], set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        if not path.is_relative_to(root):
            raise ValueError(f"{path} is outside the site's folder {root}")
        if not path.is_file():
            raise FileNotFoundError(f"the site links {path}, which does not exist")
        seen.add(path)
        if path.suffix == ".html":
            todo += [(path.parent / ref).resolve() for ref in local_refs(path.read_text())]
    return sorted(p.relative_to(root) for p in seen)


def _entry(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    info.mode = 0o755 if info.isdir() else 0o644
    return info


def archive(folder: str | Path, path: str | Path) -> Path:
    """Write ``folder`` as the gzip-compressed tar ``path`` whose bytes depend on the files'
    names and contents alone: entries sorted under the folder's name, times 0, owner root,
    modes 644/755, no name or time in the gzip header. Returns ``path``."""
    folder = Path(folder)
    names = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    with open(path, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(folder, arcname=folder.name, recursive=False, filter=_entry)
        for name in names:
            tar.add(folder / name, arcname=f"{folder.name}/{name.as_posix()}",
                    recursive=False, filter=_entry)
    return Path(path)


def copy_site(index: str | Path, out: str | Path) -> Path:
    """Copy the site of ``index`` (:func:`collect`) into the folder ``out``, replacing it.
    Returns ``out``."""
    src, out = Path(index).parent, Path(out)
    files = collect(index)
    shutil.rmtree(out, ignore_errors=True)
    for rel in files:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, out / rel)
    return out


def publish(index: str | Path, out: str | Path) -> tuple[Path, Path]:
    """:func:`copy_site` into ``out`` and ``out``.tar.gz beside it (:func:`archive`).
    Returns (folder, archive)."""
    out = copy_site(index, out)
    return out, archive(out, out.with_name(out.name + ".tar.gz"))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index", help="the site's index page, e.g. reports/index.html")
    ap.add_argument("out", help="the folder to write, e.g. public")
    args = ap.parse_args(argv)
    folder, tar = publish(args.index, args.out)
    print(f"wrote {folder}/ ({len(list(folder.rglob('*.*')))} files) and {tar}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
