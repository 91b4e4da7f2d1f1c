"""A paper report's HTML page: nbconvert's JupyterLab template made readable and offline.

The page loads nothing (no require.js, MathJax or mermaid script): TeX in markdown becomes
MathML at build time (tms.reporting.tex), which browsers render natively. Code cells are hidden
until the reader ticks "Show code" (CSS only, no script); a bar links back to ``index.html``
and a table of contents, built from the rendered headings (tms.reporting.toc), sits above the
notebook. Everything depends on the notebook alone, so the same notebook gives the same bytes.
"""

from __future__ import annotations

import copy

import jinja2
import nbformat
from nbconvert import HTMLExporter

from tms.reporting import tex, toc

#: Where the table of contents goes (replaced once the headings' ids are known).
_CONTENTS = "<!-- contents -->"

_TEMPLATE = jinja2.DictLoader({"report.html.j2": """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block extra_css -%}
<style type="text/css">
html { scroll-padding-top: 3.5em; }
#show-code { position: absolute; opacity: 0; }
.report-bar { position: sticky; top: 0; z-index: 10; display: flex; gap: 2em; align-items: center;
  padding: 0.5em 1em; background: #fff; border-bottom: 1px solid #ccc;
  font-family: var(--jp-ui-font-family); font-size: 0.9em; }
.report-bar label { cursor: pointer; border: 1px solid #888; border-radius: 3px; padding: 0.1em 0.6em; }
.report-bar label::before { content: "\\2610  "; }
#show-code:checked ~ .report-bar label::before { content: "\\2611  "; }
#show-code:focus-visible ~ .report-bar label { outline: 2px solid #1a73e8; }
#toc { margin: 1em 1em 0 1em; padding: 0.5em 1em; border: 1px solid #ddd; background: #fafafa;
  font-family: var(--jp-ui-font-family); font-size: 0.9em; }
#toc ul { margin: 0.2em 0; }
#show-code:not(:checked) ~ main .jp-CodeCell > .jp-Cell-inputWrapper,
#show-code:not(:checked) ~ main .jp-InputPrompt,
#show-code:not(:checked) ~ main .jp-OutputPrompt { display: none; }
</style>
{%- endblock extra_css -%}
{%- block body_header -%}
<body class="jp-Notebook" data-jp-theme-light="true" data-jp-theme-name="JupyterLab Light">
<input type="checkbox" id="show-code">
<div class="report-bar"><a id="back-to-index" href="index.html">&larr; All reports and the claims table</a>
<label for="show-code" title="Show or hide the code cells">Show code</label></div>
""" + _CONTENTS + """
<main>
{%- endblock body_header -%}
"""})


def with_mathml(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose markdown cells and markdown outputs have their TeX as MathML
    (:func:`tms.reporting.tex.to_mathml`); ``nb`` itself is left as it is."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = tex.to_mathml(cell.source)
        for out in cell.get("outputs", []):
            if "text/markdown" in out.get("data", {}):
                out.data["text/markdown"] = tex.to_mathml(out.data["text/markdown"])
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    """The report page of the executed notebook ``nb`` as HTML text (the outputs' images are
    embedded as data URLs).

    Raises latex2mathml's exceptions if a markdown text holds TeX it cannot convert.
    """
    # embed_images would re-parse each inline HTML tag of the markdown on its own, emptying the
    # MathML elements; it only concerns images linked from markdown, which the reports have not.
    html, _ = HTMLExporter(embed_images=False, extra_loaders=[_TEMPLATE],
                           template_file="report.html.j2").from_notebook_node(with_mathml(nb))
    return html.replace(_CONTENTS, toc.render(toc.headings(html)), 1)
