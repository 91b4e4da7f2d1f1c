"""The report page: TeX as MathML, the table of contents, hidden code, the back link."""

import nbformat
import pytest
from latex2mathml.exceptions import MissingSuperScriptOrSubscriptError
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tms.reporting import page, tex, toc


def test_tex_becomes_mathml_outside_code_and_escaped_dollars():
    out = tex.to_mathml(r"$\Delta$var($\nu$) and $$\sum_i x_i$$")
    assert out.count("<math") == 3 and "$" not in out
    assert "&#x00394;" in out and "&#x003BD;" in out          # Δ and ν
    assert 'display="inline"' in out and 'display="block"' in out
    kept = r"code `$\nu$` and a price \$5, no pair"
    assert tex.to_mathml(kept) == kept
    assert tex.to_mathml("no maths at all") == "no maths at all"
    with pytest.raises(MissingSuperScriptOrSubscriptError):
        tex.to_mathml("$x^$")


HEADINGS = ('<h1 id="Title">Title<a class="anchor-link" href="#Title">¶</a></h1>'
            '<h2 id="A-b">A <em>b</em><a class="anchor-link" href="#A-b">¶</a></h2>'
            '<h3 id="c">c</h3><h2>no id</h2><h2 id="d&amp;e">d &amp; e</h2>')


def test_headings_read_ids_and_text_without_the_anchor_link():
    assert toc.headings(HEADINGS) == [toc.Heading(1, "Title", "Title"),
                                      toc.Heading(2, "A-b", "A b"), toc.Heading(3, "c", "c"),
                                      toc.Heading(2, "d&e", "d & e")]


def test_contents_nest_levels_two_and_three():
    nav = toc.render(toc.headings(HEADINGS))
    assert nav.startswith('<nav id="toc"') and "Title" not in nav
    assert ('<ul><li><a href="#A-b">A b</a><ul><li><a href="#c">c</a></li></ul></li>'
            '<li><a href="#d&amp;e">d &amp; e</a></li></ul></nav>') in nav
    skipped = toc.render([toc.Heading(3, "x", "x"), toc.Heading(2, "y", "y")])
    assert skipped.count("<ul>") == skipped.count("</ul>") == 2
    assert skipped.count("<li>") == skipped.count("</li>") == 3
    assert toc.render([toc.Heading(1, "t", "t")]) == ""


def _notebook():
    code = new_code_cell("secret_code = 1", outputs=[new_output(
        "display_data", data={"text/markdown": r"caption with $\Lambda$", "text/plain": "x"})])
    cells = [new_markdown_cell("# Report\n\n## Section one\n\n$\\nu_i$ here"), code,
             new_markdown_cell("### Sub `$\\nu$`")]
    for i, cell in enumerate(cells):
        cell.id = f"cell{i}"                       # fixed: nbformat draws random ids
    return new_notebook(cells=cells)


def test_with_mathml_converts_markdown_only_and_leaves_the_notebook():
    nb = _notebook()
    before = nbformat.writes(nb)
    converted = page.with_mathml(nb)
    assert nbformat.writes(nb) == before
    assert "<math" in converted.cells[0].source and "$" not in converted.cells[0].source
    assert "<math" in converted.cells[1].outputs[0].data["text/markdown"]
    assert converted.cells[1].source == "secret_code = 1"
    assert converted.cells[2].source == "### Sub `$\\nu$`"


def test_page_has_contents_maths_code_switch_and_back_link_and_loads_nothing():
    html = page.render(_notebook())
    assert html == page.render(_notebook())
    nav = html[html.index('<nav id="toc"'):html.index("</nav>")]
    assert 'href="#Section-one"' in nav and 'id="Section-one"' in html
    assert html.count("<math") == 2 and "$\\nu_i$" not in html
    assert "<msub><mi>ν</mi><mi>i</mi></msub>" in html           # the MathML kept whole
    assert '<input id="show-code" type="checkbox"/>' in html and 'for="show-code"' in html
    assert html.index('id="show-code"') < html.index("<main>")    # the CSS needs it before main
    assert 'href="index.html"' in html and "secret_code" in html
    assert "<script src=" not in html and "mathjax" not in html.lower()
    assert "cdnjs" not in html and "<!-- contents -->" not in html
