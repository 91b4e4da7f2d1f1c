"""The report site's parts: claims as data, metrics, errata, the DAG drawing, the page."""

import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tms.pipeline import claim_rows
from tms.pipeline.claim_rows import COLUMNS
from tms.reporting import browser, dag, errata, site

MERMAID = """flowchart TD
\tnode1["a"]
\tnode2["b@1"]
\tnode3["b@2"]
\tnode4["c"]
\tnode1-->node2
\tnode1-->node3
\tnode2-->node4
\tnode3-->node4"""


@pytest.mark.parametrize("text, expected", [
    ("1.302 ± 0.050 (mean over 2 seed(s))", (1.302, 0.05)),
    ("−0.180 ± 0.010", (-0.18, 0.01)),
    ("0.0512 ± 1.2e-03 (Monte Carlo; 0.4 s.e. off)", (0.0512, 0.0012)),
    ("max |rug/theory − 1| = 3.2% over 4 points", (0.032, None)),
    ("c = 0.262, 95% interval [0.21, 0.31]", (0.262, None)),
    ("λt = 2.26", (2.26, None)),
    ("0.275 at λ = 0.001; baseline 0.280", (0.275, None)),
    ("100.0% of the recorded times", (1.0, None)),
    ("largest |Monte Carlo − exact| = 0.0026", (0.0026, None)),
    ("decay (max): 8.007e-08 (closed form 0)", (8.007e-08, None)),
    ("max |rug/theory − 1| = nan% over 0 points", (None, None)),
    ("final mean ‖W_i‖₄⁴ 0.512 vs 0.300", (None, None)),
    ("I = [1, 3], j = 3, k = 2", (None, None)),
    ("4 models (d ∈ [1, 2]) after 30 steps: max L/L_min − 1 = 76.59%", (None, None)),
    ("the tied loss has −∇L = 2[W(Σ − WᵀWΣ)]", (None, None)),
])
def test_numbers_reads_value_and_uncertainty(text, expected):
    assert claim_rows.numbers(text) == pytest.approx(expected)


def _table(*rows):
    return pd.DataFrame([list(r) for r in rows], columns=COLUMNS)


def test_rows_link_figures_and_stages(tmp_path):
    figs = tmp_path / "figures/paper"
    figs.mkdir(parents=True)
    for name in ("fig2", "fig3", "other"):
        (figs / f"{name}.png").write_bytes(b"png")
    table = _table(["loss matches", "fig. 2, sec. 4", "≈", "x = 0.5", "≤ 5%", "reproduced"],
                   ["weights", "fig. 3", "1.29 ± 0.01", "1.3 ± 0.1", "≤ 0.06", "reproduced"],
                   ["no figure", "fig. 9", "-", "-", "—", "erratum"],
                   ["special", "sec. 1", "-", "-", "—", "caveat"])
    rows = claim_rows.rows(table, figs, "rep", links=[(r"special", "other", ["s1", "s2"]),
                                                          (r"fig\. 2", "fig2", ["train"])])
    assert [r["figure"] for r in rows] == [f"{figs.as_posix()}/fig2.png",
                                           f"{figs.as_posix()}/fig3.png", None,
                                           f"{figs.as_posix()}/other.png"]
    assert [r["stages"] for r in rows] == [["train"], ["rep"], ["rep"], ["s1", "s2"]]
    assert [r["value"] for r in rows] == [0.5, 1.3, None, None]
    assert rows[1]["uncertainty"] == 0.1 and rows[1]["paper"] == "1.29 ± 0.01"
    with pytest.raises(ValueError, match="no figure fig7.png"):
        claim_rows.rows(table, figs, "rep", links=[(r"fig\. 2", "fig7", ["train"])])
    undrawn = claim_rows.rows(table, figs, "rep", links=[(r"fig\. 2", "fig7", ["train"])],
                              undrawn={"fig7"})          # the report said it could not draw it
    assert undrawn[0]["figure"] is None and undrawn[0]["stages"] == ["train"]
    with pytest.raises(ValueError, match="lacks columns"):
        claim_rows.rows(table.drop(columns="verdict"), figs, "rep")


def test_export_writes_the_paper_file_beside_the_figures(tmp_path):
    figs = tmp_path / "reports/figures/p"
    figs.mkdir(parents=True)
    path = claim_rows.export(_table(["c", "s", "1", "c = 2", "t", "reproduced"]).style, "p",
                             "p_report", figs, title="Paper")
    assert path == tmp_path / "reports/claims/p.json"
    papers = site.load_claims(tmp_path / "reports/claims")
    assert papers[0]["title"] == "Paper" and papers[0]["claims"][0]["value"] == 2.0
    assert papers[0]["report"] == (tmp_path / "reports/p.html").as_posix()


def _paper(name, *verdicts):
    return {"paper": name, "title": name, "stage": "rep", "report": f"reports/{name}.html",
            "claims": [{"claim": f"claim {i}", "source": f"fig. {i}", "paper": "1",
                        "ours": "2", "tolerance": "t", "verdict": v, "figure": None,
                        "stages": ["b"], "value": 2.0 if v == "reproduced" else None,
                        "uncertainty": None} for i, v in enumerate(verdicts)]}


def test_metrics_count_verdicts_and_keep_numbers():
    m = site.metrics([_paper("x", "reproduced", "not reproduced", "erratum", "reproduced")])
    x = m["x"]
    assert (x["claims_total"], x["reproduced"], x["not_reproduced"], x["erratum"]) == (4, 2, 1, 1)
    assert len(x["claims"]) == 4
    assert [c["verdict"] for c in x["claims"].values()] == ["reproduced", "not reproduced",
                                                             "erratum", "reproduced"]
    assert [c.get("value") for c in x["claims"].values()] == [2.0, None, None, 2.0]
    assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in x["claims"])
    assert x["claims"]["fig_0_claim_0"]["value"] == 2.0


def test_every_erratum_names_a_paper_and_finds_its_rows():
    assert {e.paper for e in errata.ERRATA} == {"persian_rug", "incidental_polysemanticity"}
    xor = next(e for e in errata.ERRATA if e.pattern == "XOR")
    row = {"claim": "H_ij = parity(bin(i) XOR bin(j))", "source": "sec. 4.2.2"}
    assert errata.evidence(xor, {"persian_rug": [row]}) == [row]
    assert errata.evidence(xor, {"incidental_polysemanticity": [row]}) == []


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
    papers = [_paper("persian_rug", "reproduced", "erratum"), _paper("other", "answered")]
    html = site.render(papers, "key: 1 < 2", "abc123", MERMAID, stages)
    assert html.count('<td class="v-') == 3
    errata_table = html[html.index('id="errata-table"'):].split("</table>")[0]
    assert errata_table.count("<tr>") == 1 + len(errata.ERRATA) + 1   # head, reference, ours
    assert 'href="persian_rug.html"' in html and 'href="#stage-b"' in html
    assert 'id="stage-b"' in html and html.count('id="stage-b"') == 1
    assert "key: 1 &lt; 2" in html and "abc123" in html and "<svg" in html
    assert "not checked by the pipeline yet" in html
    papers[0]["claims"][0]["stages"] = ["nowhere"]
    with pytest.raises(ValueError, match="nowhere"):
        site.render(papers, "", "", MERMAID, stages)


def test_claims_link_their_figure_caption_or_their_row_and_the_figure_data():
    with_figure = {"figure": "reports/figures/p/fig2.png"}
    assert site.claim_links(0, with_figure, "p.html", Path("reports")) == {
        "claim_href": "p.html#figure-fig2", "figure_href": "figures/p/fig2.png",
        "data_href": "figures/p/fig2.csv"}
    assert site.claim_links(3, {"figure": None}, "p.html", Path("reports")) == {
        "claim_href": "p.html#T_claims_row3_col0", "figure_href": None, "data_href": None}


def test_claims_table_can_be_filtered_and_sorted_and_links_into_the_reports():
    stages = [{"name": "b", "cmd": "python x", "deps": [], "params": [], "outs": []}]
    papers = [_paper("persian_rug", "reproduced", "erratum"), _paper("other", "answered")]
    papers[0]["claims"][1]["figure"] = "reports/figures/persian_rug/fig4.png"
    html = site.render(papers, "", "abc", 'flowchart TD\n\tnode1["b"]', stages)
    table = html[html.index('id="claims-table"'):].split("</table>")[0]
    assert table.count('<tr data-paper="persian_rug" data-verdict="') == 2
    assert '<tr data-paper="other" data-verdict="answered">' in table
    assert 'href="persian_rug.html#T_claims_row0_col0"' in table         # no figure: its row
    assert 'href="persian_rug.html#figure-fig4"' in table                 # its figure's caption
    assert 'src="figures/persian_rug/fig4.png"' in table
    assert 'href="figures/persian_rug/fig4.csv"' in table
    assert 'href="figures/persian_rug/fig4.png"' not in html              # never the bare PNG
    for select, options in (("filter-paper", ["persian_rug", "other"]),
                            ("filter-verdict", list(site.VERDICTS))):
        block = html[html.index(f'id="{select}"'):].split("</select>")[0]
        assert [f'<option value="{o}">' in block for o in options] == [True] * len(options)
    assert "<script>" in html and "<script src" not in html


def test_git_revision_names_the_commit_and_uncommitted_inputs(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    assert site.git_revision(tmp_path) == "not a git checkout"
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for name in ("dvc.lock", "params.yaml"):
        (tmp_path / name).write_text("a\n")
    subprocess.run(git + ["add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(git + ["commit", "-qm", "c"], cwd=tmp_path, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stdout.strip()
    (tmp_path / "dvc.lock").write_text("b\n")              # written by the pipeline itself
    assert site.git_revision(tmp_path) == head
    (tmp_path / "params.yaml").write_text("b\n")
    assert site.git_revision(tmp_path) == f"{head} + uncommitted changes to params.yaml"


def test_browser_check_reports_broken_images_links_and_script_errors(tmp_path):
    if None in browser.executables():
        pytest.skip("chromium and chromedriver are not installed (make test installs them)")
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
