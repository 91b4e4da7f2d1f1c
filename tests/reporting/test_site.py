"""The report site's parts: claims as data, metrics, errata, the DAG drawing, the page."""

from pathlib import Path

import pytest

from tms.core import claim_rows, errata
from tms.core import papers as registry
from tms.core.errata import evidence
from tms.reporting import browser, dag, metrics, site, tex

MERMAID = """flowchart TD
\tnode1["a"]
\tnode2["b@1"]
\tnode3["b@2"]
\tnode4["c"]
\tnode1-->node2
\tnode1-->node3
\tnode2-->node4
\tnode3-->node4"""


CLAIM = claim_rows.Claim("fig2.loss", "loss matches", "fig. 2", "≈", "n_s 8192", "fig2",
                         ("train",))


def test_a_claim_row_carries_its_verdict_scale_and_numbers():
    row = CLAIM.row(True, "x = 0.5", "≤ 5%: why", "n_s 128", value=0.5, uncertainty=float("nan"))
    assert (row["id"], row["verdict"], row["scale"], row["paper_scale"]) == (
        "fig2.loss", "reproduced", "n_s 128", "n_s 8192")
    assert row["value"] == 0.5 and row["uncertainty"] is None and row["inconclusive"] is None
    assert CLAIM.row(False, "x", "t", "s")["verdict"] == "not reproduced"
    small = CLAIM.row(True, "x", "t", "s", inconclusive="n_s 128 < 8192")
    assert small["verdict"] == "inconclusive at this scale"
    assert small["inconclusive"] == "n_s 128 < 8192"
    gone = CLAIM.not_computed("every model diverged")
    assert gone["verdict"] == "not computed" and gone["ours"].endswith("every model diverged")


def test_an_inconclusive_row_says_which_way_its_evidence_points():
    holds = CLAIM.row(True, "x", "t", "n_s 128", inconclusive="n_s 128 < 8192")
    fails = CLAIM.row(False, "x", "t", "n_s 128", inconclusive="n_s 128 < 8192")
    assert (holds["direction"], fails["direction"]) == ("holds", "fails")
    assert claim_rows.label(fails) == "inconclusive (fails at this scale)"
    decided = CLAIM.row(False, "x", "t", "s")
    assert decided["direction"] is None and claim_rows.label(decided) == "not reproduced"
    assert claim_rows.tally([holds, fails, fails, decided], "empirical") == [
        ("inconclusive (fails at this scale)", 2), ("not reproduced", 1),
        ("inconclusive (holds at this scale)", 1)]
    found = claim_rows.Claim("a.found", "c", "s", "v", "—", None, (), "finding")
    lost = found.row(False, "x", "t", "s")                      # ties in the order of VERDICTS
    assert claim_rows.tally([lost, holds], "empirical") == [
        ("inconclusive (holds at this scale)", 1), ("not found", 1)]
    assert claim_rows.tally([holds], "mathematics") == []
    with pytest.raises(ValueError, match="unknown basis"):
        claim_rows.tally([holds], "theory")


def test_a_claim_is_empirical_only_when_a_training_stage_feeds_it():
    claims = claim_rows.Claims(empirical=("train",))
    for cid, stages, kind in (("a.trained", ("train", "theory"), "reproduction"),
                              ("a.theory", ("theory",), "reproduction"),
                              ("a.bound", ("train",), "sanity check"),
                              ("a.found", ("train",), "finding")):
        claims.claim(cid, "c", "s", "v", "—", None, stages, kind)(lambda c, o: None)
    # a caveat of a theorem that trained models show: mathematics, said so
    claims.claim("a.corollary", "c", "s", "v", "—", None, ("train",), "caveat",
                 claim_rows.MATHEMATICS)(lambda c, o: None)
    assert {cid: claims[cid].basis for cid in claims} == {
        "a.trained": "empirical", "a.theory": "mathematics", "a.bound": "mathematics",
        "a.found": "empirical", "a.corollary": "mathematics"}
    assert CLAIM.row(True, "x", "t", "s")["basis"] == "empirical"
    with pytest.raises(ValueError, match="basis"):
        claim_rows.Claim("a.b", "c", "s", "v", "—", None, (), "sanity check", "empirical")


@pytest.mark.parametrize("kind, ok, expected", [
    ("reproduction", True, "reproduced"), ("reproduction", False, "not reproduced"),
    ("sanity check", True, "sanity check"), ("sanity check", False, "not reproduced"),
    ("erratum", True, "erratum"), ("erratum", False, "reproduced"),
    ("caveat", True, "caveat"), ("caveat", False, "reproduced"),
    ("finding", True, "finding"), ("finding", False, "not found")])
def test_every_kind_of_claim_has_a_verdict_that_can_fail(kind, ok, expected):
    assert claim_rows.verdict(kind, ok) == expected
    # only a reproduction is made inconclusive by its scale; another kind refuses the reason
    if kind == "reproduction":
        assert claim_rows.verdict(kind, ok, "too small") == "inconclusive at this scale"
    else:
        with pytest.raises(ValueError, match="cannot be inconclusive"):
            claim_rows.verdict(kind, ok, "too small")


def test_claims_reject_malformed_ids_kinds_and_repeats():
    with pytest.raises(ValueError, match="is not"):
        claim_rows.Claim("Fig 2", "c", "s", "v", "—", None, ())
    with pytest.raises(ValueError, match="unknown kind"):
        claim_rows.Claim("a.b", "c", "s", "v", "—", None, (), "theorem")
    claims = claim_rows.Claims()
    claims.claim("fig2.loss", "loss matches", "fig. 2", "≈", "n_s 8192", "fig2", ("train",))(
        lambda claim, outputs: claim.row(True, "x", "t", "s"))
    with pytest.raises(ValueError, match="declared twice"):
        claims.claim("fig2.loss", "again", "fig. 2", "≈", "—", None, ())


def _two_claims() -> claim_rows.Claims:
    """A registry of two claims whose checks read a number from the outputs."""
    claims = claim_rows.Claims()

    @claims.claim("sec1.other", "o", "sec. 1", "-", "—", None, ("b",), "caveat")
    def _other(claim, outputs):
        return claim.row(outputs["other"] > 0, f"{outputs['other']}", "t", "s")

    @claims.claim("fig2.loss", "loss matches", "fig. 2", "≈", "n_s 8192", "fig2", ("train",))
    def _loss(claim, outputs):
        if outputs["loss"] is None:
            return claim.not_computed("every model diverged")
        return claim.row(outputs["loss"] <= 1, "x", "t", "s", value=outputs["loss"])

    return claims


def test_claims_are_checked_in_order_each_by_the_check_beside_its_declaration():
    claims = _two_claims()
    assert list(claims) == ["sec1.other", "fig2.loss"] and claims["fig2.loss"].figure == "fig2"
    rows = claims.rows({"other": 1, "loss": 2.0})
    assert [(r["id"], r["verdict"], r["value"]) for r in rows] == [
        ("sec1.other", "caveat", None), ("fig2.loss", "not reproduced", 2.0)]
    assert claims.row("fig2.loss", {"other": -1, "loss": None})["verdict"] == "not computed"
    assert claims.row("sec1.other", {"other": -1, "loss": 0.5})["verdict"] == "reproduced"
    confused = claim_rows.Claims()
    confused.claim("a.b", "c", "s", "v", "—", None, ())(lambda claim, o: CLAIM.row(True, "", "", ""))
    with pytest.raises(ValueError, match="the check of a.b returned the row of fig2.loss"):
        confused.rows({})


def test_a_part_kept_in_its_own_module_is_taken_in_at_its_place():
    def declare(claims, id):
        claims.claim(id, "c", "s", "v", "—", None, ("train",))(
            lambda claim, o: claim.row(True, "", "", ""))

    whole, part = claim_rows.Claims(empirical=("train",)), claim_rows.Claims(empirical=("train",))
    declare(whole, "a.first")
    declare(part, "b.middle")
    whole.include(part)
    declare(whole, "c.last")
    assert list(whole) == ["a.first", "b.middle", "c.last"]
    assert [r["basis"] for r in whole.rows({})] == ["empirical"] * 3
    with pytest.raises(ValueError, match="declared twice"):
        whole.include(part)
    with pytest.raises(ValueError, match="training stages"):
        whole.include(claim_rows.Claims())


def test_export_checks_the_registry_and_the_site_links_the_figures_drawn(tmp_path):
    figs = tmp_path / "reports/figures/p"
    figs.mkdir(parents=True)
    (figs / "fig2.png").write_bytes(b"png")
    claims = _two_claims()
    rows = claims.rows({"other": 1, "loss": 0.5})[::-1]           # in any order
    path = claim_rows.export(rows, claims, PAPER, figs)
    assert path == tmp_path / "reports/claims/p.json"
    assert [r["id"] for r in claim_rows.read("p", figs)] == ["sec1.other", "fig2.loss"]
    paper = metrics.load_claims(tmp_path / "reports/claims")[0]
    assert paper["title"] == "Paper" and paper["report"] == (tmp_path / "reports/p.html").as_posix()
    assert paper["stage"] == "p_claims"
    assert [r["id"] for r in paper["claims"]] == ["sec1.other", "fig2.loss"]   # registry order
    assert paper["claims"][1]["figure"] == f"{figs.as_posix()}/fig2.png"
    assert paper["claims"][1]["stages"] == ["train", "p_claims"]
    assert paper["claims"][0]["figure"] is None
    (figs / "fig2.png").unlink()                     # a figure its report did not draw
    assert claim_rows.read("p", figs)[1]["figure"] == f"{figs.as_posix()}/fig2.png"
    assert metrics.load_claims(path.parent)[0]["claims"][1]["figure"] is None
    with pytest.raises(ValueError, match=r"missing \['sec1.other'\]"):
        claim_rows.export(rows[:1], claims, PAPER, figs)
    with pytest.raises(ValueError, match=r"repeated \['fig2.loss'\]"):
        claim_rows.export(rows + rows[:1], claims, PAPER, figs)


def _paper(name, *verdicts):
    kinds = {"sanity check": "sanity check", "erratum": "erratum", "caveat": "caveat",
             "finding": "finding", "not found": "finding"}
    return {"paper": name, "title": name, "stage": "rep", "report": f"reports/{name}.html",
            "claims": [{"id": f"fig{i}.claim", "claim": f"claim {i}", "source": f"fig. {i}",
                        "paper": "1", "paper_scale": "n_s 8192", "ours": "2", "scale": "n_s 64",
                        "tolerance": "t", "verdict": v, "kind": kinds.get(v, "reproduction"),
                        "basis": ("mathematics" if v in ("sanity check", "erratum")
                                  else "empirical"),
                        "inconclusive": "too small" if v.startswith("inconclusive") else None,
                        "direction": "fails" if v.startswith("inconclusive") else None,
                        "figure": None, "stages": ["b"],
                        "value": 2.0 if v == "reproduced" else None, "uncertainty": None}
                       for i, v in enumerate(verdicts)]}


def test_metrics_count_verdicts_by_basis_and_values_keep_numbers_under_the_claim_ids():
    papers = [_paper("x", "reproduced", "not reproduced", "erratum", "sanity check",
                     "inconclusive at this scale", "not found")]
    x = metrics.metrics(papers)["x"]
    emp, maths = x["empirical"], x["mathematics"]
    assert x["claims_total"] == 6
    assert (emp["reproduced"], emp["not_reproduced"], emp["inconclusive_fails"],
            emp["inconclusive_holds"], emp["erratum"], emp["not_found"]) == (1, 1, 1, 0, 0, 1)
    assert (maths["erratum"], maths["sanity_check"], maths["reproduced"]) == (1, 1, 0)
    assert "sanity_check" not in emp                             # never an empirical verdict
    assert all(isinstance(v, int) for d in (emp, maths) for v in d.values())  # counts only
    values = metrics.claim_values(papers)["x"]
    assert list(values) == ["fig0.claim", "fig1.claim", "fig2.claim", "fig3.claim",
                            "fig4.claim", "fig5.claim"]
    assert values["fig0.claim"] == {"verdict": "reproduced", "value": 2.0}
    assert values["fig1.claim"] == {"verdict": "not reproduced"}
    assert values["fig4.claim"]["verdict"] == claim_rows.label(papers[0]["claims"][4])
    assert values["fig4.claim"]["verdict"].startswith("inconclusive (")   # with its direction


#: A paper of the registry's kind (tms.core.papers).
PAPER = registry.Paper("p", "p", "p_", "P", "Paper")
#: Every paper's errata, as the site stage gathers them.
ERRATA = errata.every()


def test_every_erratum_names_its_paper_and_finds_its_rows_by_id():
    for p in registry.PAPERS:
        assert {e.paper for e in p.module("errata").ERRATA} == {p.key}
    xor = next(e for e in ERRATA if e.claims == ("fig1.hadamard_xor",))
    row = {"id": "fig1.hadamard_xor", "claim": "H_ij", "source": "sec. 4.2.2"}
    assert evidence(xor, {xor.paper: [row]}) == [row]
    assert evidence(xor, {"another paper": [row]}) == []
    with pytest.raises(ValueError, match="no claim"):
        evidence(xor, {xor.paper: [{**row, "id": "fig1.renamed"}]})


def test_every_erratum_names_registered_claims():
    for e in ERRATA:
        assert set(e.claims) <= set(registry.paper(e.paper).module("claims").CLAIMS), e
        assert e.claims or e.note, e


def test_dag_parses_mermaid_and_draws_stable_svg():
    g = dag.parse(MERMAID)
    assert set(g.nodes) == {"a", "b@1", "b@2", "c"}
    assert set(g.edges) == {("a", "b@1"), ("a", "b@2"), ("b@1", "c"), ("b@2", "c")}
    first, second = dag.svg(dag.parse(MERMAID)), dag.svg(dag.parse(MERMAID))
    assert first == second and first.startswith("<svg")
    assert "b@1" in first and "dc:date" not in first and "Matplotlib" not in first
    with pytest.raises(ValueError, match="unexpected line"):
        dag.parse(MERMAID + "\n\tnonsense")


def test_page_shows_rows_errata_and_rejects_unknown_stages():
    stages = [{"name": n, "cmd": "python x", "deps": [], "params": [], "outs": []}
              for n in ("a", "b@1", "b@2", "c")]
    papers = [_paper("paper_a", "reproduced", "erratum", "sanity check"),
              _paper("other", "finding")]
    html = site.render(papers, ERRATA, "key: 1 < 2", "abc123", MERMAID, stages)
    assert html.count('<td class="v-') == 4
    assert all(f"td.v-{v.replace(' ', '-')} " in html or f"td.v-{v.replace(' ', '-')}," in html
               for v in claim_rows.VERDICTS)                    # every verdict has its colour
    # the checks of the mathematics apart, and counted apart from the empirical claims
    maths = html[html.index('id="mathematics-table"'):].split("</table>")[0]
    assert maths.count('<td class="v-') == 2 and 'data-verdict="sanity check"' in maths
    assert "(about trained models), 2:\n1 reproduced, 1 finding." in html
    assert "mathematics</strong>, 2:\n1 erratum, 1 sanity check." in html
    assert "1 empirical claims: 1 reproduced;\n2 checks of its mathematics: 1 erratum, " \
        "1 sanity check</li>" in html
    assert "<td>1 (n_s 8192)</td>" in html and "<td>n_s 64</td>" in html      # both scales
    errata_table = html[html.index('id="errata-table"'):].split("</table>")[0]
    assert errata_table.count("<tr>") == 1 + len(ERRATA) + 1   # head, reference, ours
    assert 'href="paper_a.html"' in html and 'href="#stage-b"' in html
    assert 'id="stage-b"' in html and html.count('id="stage-b"') == 1
    assert "key: 1 &lt; 2" in html and "abc123" in html and "<svg" in html
    assert "not checked by the pipeline yet" in html
    papers[0]["claims"][0]["stages"] = ["nowhere"]
    with pytest.raises(ValueError, match="nowhere"):
        site.render(papers, ERRATA, "", "", MERMAID, stages)


def test_claims_link_their_figure_caption_or_their_row_and_the_figure_data():
    with_figure = {"figure": "reports/figures/p/fig2.png"}
    assert site.claim_links(with_figure, "p.html", Path("reports")) == {
        "claim_href": "p.html#figure-fig2", "figure_href": "figures/p/fig2.png",
        "data_href": "figures/p/fig2.csv"}
    assert site.claim_links({"id": "eq19.gradient", "figure": None}, "p.html",
                            Path("reports")) == {
        "claim_href": "p.html#claim-eq19.gradient", "figure_href": None, "data_href": None}


def test_claims_table_can_be_filtered_and_sorted_and_links_into_the_reports():
    stages = [{"name": "b", "cmd": "python x", "deps": [], "params": [], "outs": []}]
    papers = [_paper("paper_a", "reproduced", "erratum", "inconclusive at this scale"),
              _paper("other", "finding")]
    papers[0]["claims"][1].update(figure="reports/figures/paper_a/fig4.png", basis="empirical")
    html = site.render(papers, ERRATA, "", "abc", 'flowchart TD\n\tnode1["b"]', stages)
    table = html[html.index('id="claims-table"'):].split("</table>")[0]
    assert table.count('data-paper="paper_a" data-verdict="') == 3
    assert 'data-paper="other" data-verdict="finding">' in table
    assert 'href="paper_a.html#claim-fig0.claim"' in table           # no figure: its row
    assert "inconclusive (fails at this scale): too small</td>" in table   # which way, and why
    assert 'href="paper_a.html#figure-fig4"' in table                 # its figure's caption
    assert 'src="figures/paper_a/fig4.png"' in table
    assert 'href="figures/paper_a/fig4.csv"' in table
    assert 'href="figures/paper_a/fig4.png"' not in html              # never the bare PNG
    for select, options in (("filter-paper", ["paper_a", "other"]),
                            ("filter-verdict", ["reproduced", "erratum", "finding",
                                                "inconclusive (fails at this scale)"])):
        block = html[html.index(f'id="{select}"'):].split("</select>")[0]
        assert [f'<option value="{o}">' in block for o in options] == [True] * len(options)
    assert "<script>" in html and "<script src" not in html


@pytest.mark.integration
def test_browser_check_reports_broken_images_links_and_script_errors(tmp_path):
    if None in browser.executables():
        pytest.skip(browser.MISSING)
    (tmp_path / "ok.png").write_bytes(
        bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                      "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d6a4b000"
                      "00000049454e44ae426082"))
    good = tmp_path / "good.html"
    good.write_text('<html><body><h1 id="top">x</h1><img src="ok.png"><a href="#top">t</a>'
                    '<a href="good.html">self</a></body></html>')
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><img src="missing.png"><a href="gone.html">g</a>'
                   '<a href="#nowhere">n</a><a href="https://example.org/">e</a>'
                   '<script>undefined_function();</script></body></html>')
    with browser.chromium() as driver:
        assert browser.problems(driver, good) == []
        found = "\n".join(browser.problems(driver, bad))
    for text in ("broken image", "missing.png", "missing file", "gone.html",
                 "missing anchor", "leaves the machine", "undefined_function"):
        assert text in found, found


def test_a_long_ours_shows_its_first_sentence_and_the_rest_a_click_away():
    short = "median 0.87 at n_s 1024; theory $L_\\infty$"
    assert "<details" not in site.brief(short) and "<math" in site.brief(short)
    long = ("trained/theory 0.868 at n_s 1024 over 29 converged cells of the authors' grid, "
            "$a < b$; then " + "more words of detail " * 12 + ". Another sentence.")
    out = str(site.brief(long))
    head, rest = out.split('<details class="more"><summary>more</summary>')
    assert head.startswith("trained/theory 0.868") and head.rstrip().endswith(";")
    assert "<math" in head and rest.startswith("then more words") and "Another" in rest
    # never cut inside a formula, nor before 8 words
    inside = "$x; y$ " + "w " * 50
    assert "<details" not in site.brief(inside)


@pytest.mark.integration
def test_browser_check_reports_a_formula_that_runs_out_of_its_cell(tmp_path):
    if None in browser.executables():
        pytest.skip(browser.MISSING)
    formula = "E[(W_i·ξ)^4] = \\sum_j W_{ij}^4 μ_4 + 6 \\sum_{j≠j′} W_{ij}^2 W_{ij′}^2 σ^4"
    cell = tex.html_with_math(f"${formula}$ (the printed energy)")
    table = ('<table id="errata-table" style="table-layout: fixed; width: 300px">'
             f'<tr><td style="width: 60px">{cell}</td><td>next column</td></tr></table>')
    page = tmp_path / "page.html"
    page.write_text(f"<html><body>{table}</body></html>")
    with browser.chromium() as driver:
        found = browser.problems(driver, page)
        assert len(found) == 1 and "wider than its cell in errata-table" in found[0], found
        # the site's style: the formula scrolls inside its cell, over nothing
        page.write_text(f"<html><head><style>{site.TEX_STYLE}</style></head><body>{table}"
                        "</body></html>")
        assert browser.problems(driver, page) == []


def test_the_index_leads_with_each_papers_central_claims_and_shows_a_figure_once():
    stages = [{"name": "b", "cmd": "python x", "deps": [], "params": [], "outs": []}]
    papers = [_paper("paper_b", "reproduced"),
              _paper("paper_a", "reproduced", "inconclusive at this scale", "finding")]
    rows = papers[1]["claims"]
    rows[1]["central"] = True
    for r in rows:
        r["figure"] = "reports/figures/paper_a/fig2.png"
    html = site.render(papers, ERRATA, "", "abc", 'flowchart TD\n\tnode1["b"]', stages)
    answer = html[html.index('id="answer"'):html.index('id="about"')]
    assert answer.count("<h3>") == 1 and 'id="answer-paper_a-fig1.claim"' in answer
    assert "inconclusive (fails at this scale): too small" in answer
    assert html.index('id="answer"') < html.index('id="claims"')
    table = html[html.index('id="claims-table"'):].split("</table>")[0]
    assert table.count('src="figures/paper_a/fig2.png"') == 1       # one thumbnail
    assert table.count('>figure</a>') == 2                           # the others link it


def test_the_papers_come_in_the_readmes_order(tmp_path):
    import json
    claims = tmp_path / "reports/claims"
    claims.mkdir(parents=True)
    for key in ("zeta", *reversed(registry.KEYS)):
        (claims / f"{key}.json").write_text(json.dumps(_paper(key)))
    assert [p["paper"] for p in metrics.load_claims(claims)] == [*registry.KEYS, "zeta"]


def test_central_claims_are_marked_in_their_rows_and_must_be_declared():
    claims = claim_rows.Claims(central=("a.main",))
    claims.claim("a.main", "c", "s", "v", "—", None, ())(lambda c, o: c.row(True, "", "", ""))
    claims.claim("a.side", "c", "s", "v", "—", None, ())(lambda c, o: c.row(True, "", "", ""))
    assert [r["central"] for r in claims.rows(None)] == [True, False]
    part = claim_rows.Claims(central=("a.part", "a.typo"))        # a share in its own module
    part.claim("a.part", "c", "s", "v", "—", None, ())(lambda c, o: c.row(True, "", "", ""))
    claims.include(part)
    with pytest.raises(ValueError, match="a.typo"):                # its central ids checked too
        claims.rows(None)
    part.central = claims.central = ("a.main", "a.part")
    assert [r["central"] for r in claims.rows(None)] == [True, False, True]
    claims.central = ("a.main", "a.gone")
    with pytest.raises(ValueError, match="a.gone"):
        claims.rows(None)


def test_maths_in_claims_values_and_errata_is_mathml():
    stages = [{"name": "b", "cmd": "python x", "deps": [], "params": [], "outs": []}]
    papers = [_paper("paper_a", "reproduced")]
    papers[0]["claims"][0].update(claim=r"a < b, $\sum_{j \neq i} W_{ij}^2$", paper=r"$x^2$")
    html = site.render(papers, ERRATA, "", "abc", 'flowchart TD\n\tnode1["b"]', stages)
    row = html[html.index('id="row-paper_a-fig0.claim"'):].split("</tr>")[0]
    assert row.count("<math") == 2 and "a &lt; b" in row and "$" not in row
    errata_table = html[html.index('id="errata-table"'):].split("</table>")[0]
    assert "<math" in errata_table and r"\sum" not in errata_table     # the errata's TeX too
