"""A table of contents for a rendered report: its headings, with their anchors, as a nested list.

The anchors are the ids nbconvert gives the markdown headings, read back from the HTML, so a
contents link always points at an id that exists on the page.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from html.parser import HTMLParser


@dataclass(frozen=True)
class Heading:
    """A heading of the page: ``level`` (1–6), ``id`` (its anchor) and its plain ``text``."""

    level: int
    id: str
    text: str


class _Headings(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[Heading] = []
        self._open: tuple[int, str, list[str]] | None = None
        self._skip = 0                                # inside the heading's ¶ anchor link

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456" and attrs.get("id"):
            self._open = (int(tag[1]), attrs["id"], [])
        elif self._open and tag == "a" and "anchor-link" in (attrs.get("class") or ""):
            self._skip += 1

    def handle_endtag(self, tag):
        if self._skip and tag == "a":
            self._skip -= 1
        elif self._open and tag == f"h{self._open[0]}":
            level, hid, parts = self._open
            self.found.append(Heading(level, hid, " ".join("".join(parts).split())))
            self._open = None

    def handle_data(self, data):
        if self._open and not self._skip:
            self._open[2].append(data)


def headings(page: str) -> list[Heading]:
    """The headings of the HTML text ``page`` that have an id, in document order (the text of
    a heading without its ``a.anchor-link``; maths contributes its characters)."""
    parser = _Headings()
    parser.feed(page)
    parser.close()
    return parser.found


def render(found: list[Heading], levels: tuple[int, int] = (2, 3)) -> str:
    """``<nav id="toc">`` with a nested ``<ul>`` of links to the headings of ``found`` whose
    level is within ``levels`` (inclusive); a deeper heading nests in the list of the heading
    before it. Empty string when no heading is in range."""
    lo, hi = levels
    kept = [h for h in found if lo <= h.level <= hi]
    if not kept:
        return ""
    out, depth = ['<nav id="toc" aria-label="Contents"><strong>Contents</strong>'], 0
    for h in kept:
        level = h.level - lo + 1
        if level > depth:                         # a skipped level gets an empty item
            out.append("<ul>" + "<li><ul>" * (level - depth - 1))
        else:
            out.append("</li>" + "</ul></li>" * (depth - level))
        depth = level
        out.append(f'<li><a href="#{html.escape(h.id)}">{html.escape(h.text)}</a>')
    out.append("</li>" + "</ul></li>" * (depth - 1) + "</ul></nav>")
    return "".join(out)
