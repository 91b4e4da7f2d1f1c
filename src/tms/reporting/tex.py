"""TeX in report markdown as MathML, converted when the HTML is built (no script at view time).

Browsers render MathML natively, so a report shows its maths offline. Only ``$…$`` (inline)
and ``$$…$$`` (display) outside code spans are converted; the conversion (latex2mathml, pinned)
depends on the TeX alone, so the HTML stays byte-stable.
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

_CODE = re.compile(r"(`+)(?:.+?)\1", re.DOTALL)             # code spans and fences, kept as written
_MATH = re.compile(r"(?<![\\$])(\$\$?)(?!\$)(.+?)(?<!\\)\1(?!\$)", re.DOTALL)


def _mathml(match: re.Match) -> str:
    display = "block" if match.group(1) == "$$" else "inline"
    return convert(match.group(2).strip(), display=display)


def to_mathml(markdown: str) -> str:
    """``markdown`` with every ``$tex$`` / ``$$tex$$`` outside code spans replaced by a
    ``<math>`` element (display inline / block). Text without a pair of dollars is returned
    unchanged; ``\\$`` is a literal dollar.

    Raises latex2mathml's exceptions (e.g. on an unbalanced brace) for TeX it cannot convert.
    """
    out, last = [], 0
    for code in _CODE.finditer(markdown):
        out += [_MATH.sub(_mathml, markdown[last:code.start()]), code.group(0)]
        last = code.end()
    out.append(_MATH.sub(_mathml, markdown[last:]))
    return "".join(out)


def html_with_math(text: str) -> str:
    """Plain ``text`` (a claim, a value, an erratum) as HTML: escaped, but every ``$tex$`` span
    a ``<math>`` element (:func:`to_mathml`) in a ``<span class="tex">`` (which a page can let
    scroll where a formula is wider than its table cell: MathML does not wrap), so that claims
    and errata show their maths rendered on the site and in the reports' claims tables. Raises
    as :func:`to_mathml`."""
    out, last = [], 0
    for match in _MATH.finditer(text):
        out += [html.escape(text[last:match.start()]),
                f'<span class="tex">{_mathml(match)}</span>']
        last = match.end()
    out.append(html.escape(text[last:]))
    return "".join(out)
