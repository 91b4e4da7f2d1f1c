"""The report site: ``reports/index.html``. The claims it shows are read by tms.reporting.metrics
(which counts them as DVC metrics too); the revision it names is tms.reporting.revision's.

Generic over papers, claims rows and stages: the papers are the files ``reports/claims/*.json``
that the report notebooks write (tms.core.claim_rows), the stages those of ``dvc dag``. The page
is self-contained (nothing loaded from the network): the DAG is drawn to inline SVG
(tms.reporting.dag), and a small inline script sorts and filters the claims table. Each claim
links to the place in its report that shows it (tms.reporting.anchors): its figure's caption,
else its row of the report's claims table; each figure links to the CSV of its data written
beside its PNG. Maths in claims, values and errata (``$tex$``) is MathML (tms.reporting.tex).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import jinja2
import markupsafe

from tms.core.claim_rows import BASES, EMPIRICAL, MATHEMATICS, label, tally
from tms.core.errata import Erratum, evidence
from tms.reporting import anchors, dag, tex


def stage_table(repo: str | Path = ".") -> list[dict]:
    """Every stage of the pipeline: ``name``, ``cmd``, ``deps``, ``params``, ``outs`` (from
    dvc.yaml, matrix stages expanded), sorted by name."""
    from dvc.repo import Repo

    with Repo(str(repo)) as r:
        out = []
        for s in r.index.stages:
            params = [f"{d.def_path}: {', '.join(sorted(d.params))}" if d.params else d.def_path
                      for d in s.deps if hasattr(d, "params")]
            out.append({"name": s.addressing, "cmd": s.cmd,
                        "deps": [d.def_path for d in s.deps if not hasattr(d, "params")],
                        "params": params, "outs": [o.def_path for o in s.outs]})
    return sorted(out, key=lambda s: s["name"])


def _check_stages(papers: list[dict], names: set[str]) -> None:
    known = names | {n.split("@")[0] for n in names}
    for paper in papers:
        for r in paper["claims"]:
            bad = [s for s in r["stages"] if s not in known]
            if bad:
                raise ValueError(f"{paper['paper']}: claim {r['claim']!r} names stages {bad} "
                                 f"that are not in the pipeline")


def _anchor(name: str) -> str:
    return "stage-" + re.sub(r"[^A-Za-z0-9_-]", "-", name.split("@")[0])


#: A formula (tms.reporting.tex.html_with_math) wider than its table cell scrolls inside it
#: (MathML does not wrap), instead of running over the next column.
TEX_STYLE = ("span.tex { display: inline-block; max-width: 100%; overflow-x: auto; "
             "vertical-align: middle; }")

#: An "ours", tolerance or inconclusive text of more words than this shows its first sentence,
#: the rest a click away.
BRIEF_WORDS = 40
#: Where a text may be cut for :func:`brief`: the end of a sentence (a capital follows) or of a
#: clause.
_BREAK = re.compile(r"(?<=\.) (?=[A-Z])|(?<=;) ")


def brief(text: str) -> markupsafe.Markup:
    """``text`` (an "ours" or tolerance cell, an inconclusive reason) as HTML with its maths
    (tms.reporting.tex.html_with_math): whole when it has at most :data:`BRIEF_WORDS` words,
    else its first sentence or clause (cut at the first break of :data:`_BREAK` outside a
    ``$tex$`` span, after at least 8 words), then the rest in a ``<details>`` that opens on
    "more"."""
    text = str(text)
    full = markupsafe.Markup(tex.html_with_math(text))
    if len(text.split()) <= BRIEF_WORDS:
        return full
    for match in _BREAK.finditer(text):
        head = text[:match.start()]
        if head.count("$") % 2 == 0 and len(head.split()) >= 8:
            return markupsafe.Markup(
                f'{tex.html_with_math(head)} <details class="more"><summary>more</summary>'
                f'{tex.html_with_math(text[match.end():])}</details>')
    return full


_ENV = jinja2.Environment(autoescape=True, trim_blocks=False)
#: Claims, values and errata with their ``$tex$`` spans as MathML (tms.reporting.tex).
_ENV.filters["math"] = lambda text: markupsafe.Markup(tex.html_with_math(str(text)))
_ENV.filters["brief"] = brief
#: A name such as incidental_polysemanticity, free to wrap after its underscores (not mid-word).
_ENV.filters["breakable"] = lambda name: markupsafe.Markup(
    str(markupsafe.escape(name)).replace("_", "_<wbr>"))
_TEMPLATE = _ENV.from_string("""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>tms-repro: reproduction of three papers on toy models of superposition</title>
<style>
body { font-family: sans-serif; margin: 1em auto; max-width: 110em; padding: 0 1em; }
table { border-collapse: collapse; font-size: 0.85em; margin-bottom: 1.5em; width: 100%;
        table-layout: fixed; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.5em; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
table.answer col.claim { width: 28%; } table.answer col.verdict { width: 18%; }
table.answer col.ours { width: 26%; } table.answer col.scale { width: 10%; } table.answer col.figure { width: 210px; }
col.paper, col.stages { width: 7%; } col.claim-text { width: 12%; } col.source { width: 5%; }
col.paper-value { width: 10%; } col.ours-text { width: 14%; } col.our-scale { width: 7%; }
col.tolerance { width: 12%; } col.verdict-text { width: 9%; }
#claims-table col.figure, #mathematics-table col.figure { width: 210px; }
th { background: #f0f0f0; }
td.v-reproduced { background: #dff3df; } td.v-not-reproduced { background: #f8d7d7; }
td.v-erratum { background: #fff1c9; } td.v-caveat, td.v-finding { background: #e5eefa; }
td.v-not-computed, td.v-sanity-check, td.v-not-found { background: #ececec; }
td.v-inconclusive-at-this-scale { background: #f3ecdf; }
img.thumb { width: 100%; max-width: 200px; border: 1px solid #ddd; display: block; }
details.more { display: inline; } details.more summary { display: inline; color: #06c;
  cursor: pointer; } details.more[open] summary { display: none; }
{{ tex_style }}
#errata-table col.paper { width: 9%; } #errata-table col.where { width: 11%; }
#errata-table col.formula { width: 25%; }
#claims-table th { cursor: pointer; user-select: none; }
#claims-table th[data-sort="asc"]::after { content: " \25B2"; }
#claims-table th[data-sort="desc"]::after { content: " \25BC"; }
.filters { margin: 0.5em 0; } .filters label { margin-right: 1.5em; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.8em; }
.dag svg { max-width: 100%; height: auto; }
</style></head><body>
<h1>Toy models of superposition: what we reproduce</h1>
<p><strong>Empirical claims</strong> (about trained models), {{ claims|length }}:
{% for v, n in totals %}{{ n }} {{ v }}{% if not loop.last %}, {% endif %}{% endfor %}.
<strong>Checks of the papers' mathematics</strong>, {{ maths|length }}:
{% for v, n in maths_totals %}{{ n }} {{ v }}{% if not loop.last %}, {% endif %}{% endfor %}.</p>

<h2 id="answer">The central claims</h2>
{% for p in papers if p.central %}<h3>{{ p.title }}</h3>
<table class="answer"><colgroup><col class="claim"><col class="verdict"><col class="ours"><col class="scale"><col class="figure"></colgroup>
<thead><tr><th>claim (the paper's scale)</th><th>verdict</th><th>ours</th><th>our scale</th><th>figure</th></tr></thead><tbody>
{% for r in p.central %}<tr id="answer-{{ r.paper_key }}-{{ r.id }}"><td><a href="{{ r.claim_href }}">{{ r.claim|math }}</a> ({{ r.paper_scale }})</td>
<td class="v-{{ r.verdict|replace(' ', '-') }}">{{ r.label }}{% if r.inconclusive %}: {{ r.inconclusive|brief }}{% endif %}</td>
<td>{{ r.ours|brief }}</td><td>{{ r.scale }}</td>
<td>{% if r.figure_href %}<a href="{{ r.claim_href }}"><img class="thumb" src="{{ r.figure_href }}" alt="{{ r.source }}"></a>{% else %}—{% endif %}</td></tr>
{% endfor %}</tbody></table>
{% endfor %}

<h2 id="about">How to read it</h2>
<p>Built from git revision <code id="revision">{{ revision }}</code> (the last commit of the code
the pipeline ran, when this stage last ran; <code>dvc.lock</code> records the hash of every
input) with the params profile below. Claims are counted in two kinds, each row with the scale it ran at beside the paper's:
empirical claims (about trained models) and checks of the papers' mathematics (theory,
constructions, closed forms, ODE integrations). A claim our scale cannot decide reads <em>inconclusive at this scale</em>, with the way its
evidence points at that scale (holds or fails its test); a finding of ours whose evidence
fails at the scale run reads <em>not found</em>.</p>

<h2 id="reports">Paper reports</h2>
<ul>{% for p in papers %}
<li><a href="{{ p.report_href }}">{{ p.title }}</a> (stage <a href="#{{ anchor(p.stage) }}">{{ p.stage }}</a>):
{{ p.counted }} empirical claims: {% for v, n in p.totals %}{{ n }} {{ v }}{% if not loop.last %}, {% endif %}{% endfor %};
{{ p.maths }} checks of its mathematics: {% for v, n in p.maths_totals %}{{ n }} {{ v }}{% if not loop.last %}, {% endif %}{% endfor %}</li>{% endfor %}
</ul>

<h2 id="claims">Empirical claims</h2>
<p>Each claim links to the place in its paper's report that shows it; each figure to its
section of the report and to the data it draws (CSV). Click a column's heading to sort by it.</p>
<div class="filters"><label>paper <select id="filter-paper"><option value="">all</option>
{% for p in papers %}<option value="{{ p.paper }}">{{ p.paper }}</option>{% endfor %}</select></label>
<label>verdict <select id="filter-verdict"><option value="">all</option>
{% for v in verdicts %}<option value="{{ v }}">{{ v }}</option>{% endfor %}</select></label>
<span id="claims-shown"></span></div>
{% macro claim_rows(rows) %}<colgroup><col class="paper"><col class="claim-text"><col class="source">
<col class="paper-value"><col class="ours-text"><col class="our-scale"><col class="tolerance">
<col class="verdict-text"><col class="figure"><col class="stages"></colgroup>
<thead><tr><th>paper</th><th>claim</th><th>source</th>
<th>paper's value (scale)</th><th>ours (± uncertainty)</th><th>our scale</th>
<th>tolerance</th><th>verdict</th><th>figure</th><th>stages</th></tr></thead><tbody>
{% for r in rows %}<tr id="row-{{ r.paper_key }}-{{ r.id }}" data-paper="{{ r.paper_key }}" data-verdict="{{ r.label }}">
<td><a href="{{ r.report_href }}">{{ r.paper_key|breakable }}</a></td><td><a class="claim-link" href="{{ r.claim_href }}">{{ r.claim|math }}</a></td><td>{{ r.source }}</td>
<td>{{ r.paper|math }} ({{ r.paper_scale }})</td><td>{{ r.ours|brief }}</td><td>{{ r.scale }}</td><td>{{ r.tolerance|brief }}</td>
<td class="v-{{ r.verdict|replace(' ', '-') }}">{{ r.label }}{% if r.inconclusive %}: {{ r.inconclusive|brief }}{% endif %}</td>
<td>{% if r.figure_href and r.first_of_figure %}<a href="{{ r.claim_href }}"><img class="thumb" src="{{ r.figure_href }}" alt="{{ r.source }}"></a>
<a class="data-link" href="{{ r.data_href }}">data (CSV)</a>{% elif r.figure_href %}<a href="{{ r.claim_href }}">figure</a>{% else %}—{% endif %}</td>
<td>{% for s in r.stages %}<a href="#{{ anchor(s) }}">{{ s }}</a>{% if not loop.last %}, {% endif %}{% endfor %}</td>
</tr>
{% endfor %}</tbody>{% endmacro %}
<table id="claims-table">{{ claim_rows(claims) }}</table>

<h2 id="mathematics">Checks of the papers' mathematics</h2>
<p>The papers' theory, constructions, closed forms and ODE integrations, checked numerically: they
test the papers' algebra and our code, and are counted apart from the empirical claims. A sanity
check (a theorem or a construction) that fails reads not reproduced.</p>
<table id="mathematics-table">{{ claim_rows(maths) }}</table>

<h2 id="errata">Errata</h2>
<p>Every erratum and paper-versus-code difference named in docs/paper-gaps.md (what the papers
leave out), with the claims rows that bear on it; then the errata our checks found beyond it.</p>
<table id="errata-table"><colgroup><col class="paper"><col class="where"><col class="formula">
<col class="formula"><col></colgroup><thead><tr><th>paper</th><th>where</th><th>printed or coded</th>
<th>what holds</th><th>our evidence</th></tr></thead><tbody>
{% for e in errata %}<tr><td>{{ e.paper }}</td><td>{{ e.where }}</td><td>{{ e.printed|math }}</td>
<td>{{ e.correct|math }}</td><td>{% for r in e.rows %}<p>{{ r.source }}, {{ r.verdict }}: {{ r.ours|brief }}
(<a href="{{ r.claim_href }}">{% if r.figure_href %}figure{% else %}report{% endif %}</a>)</p>{% else %}
<p>no claims row{% if e.note %}; {{ e.note }}{% else %}: not checked by the pipeline yet{% endif %}</p>{% endfor %}</td></tr>
{% endfor %}{% for r in other_errata %}<tr><td>{{ r.paper_key }}</td><td>{{ r.source }}</td>
<td>{{ r.claim|math }}</td><td>{{ r.ours|brief }}</td><td>found by our check
(<a href="{{ r.claim_href }}">{% if r.figure_href %}figure{% else %}report{% endif %}</a>)</td></tr>
{% endfor %}</tbody></table>

<h2 id="params">Params profile</h2>
<details><summary><code>params.yaml</code> ({{ params_text.splitlines()|length }} lines)</summary>
<pre id="params-text">{{ params_text }}</pre></details>

<h2 id="dag">Pipeline</h2>
<div class="dag">{{ dag_svg|safe }}</div>
<details><summary><code>dvc dag --mermaid</code></summary><pre id="mermaid">{{ mermaid }}</pre></details>
<table id="stages-table"><thead><tr><th>stage</th><th>command</th><th>deps</th><th>params</th>
<th>outs</th></tr></thead><tbody>
{% for s in stages %}<tr{% if s.id %} id="{{ s.id }}"{% endif %}><td>{{ s.name }}</td><td><code>{{ s.cmd }}</code></td>
<td>{{ s.deps|join(', ') }}</td><td>{{ s.params|join('; ') }}</td><td>{{ s.outs|join(', ') }}</td></tr>
{% endfor %}</tbody></table>
<script>
(function () {
  const table = document.getElementById("claims-table"), body = table.tBodies[0];
  const paper = document.getElementById("filter-paper");
  const verdict = document.getElementById("filter-verdict");
  function filter() {
    let shown = 0;
    for (const row of body.rows) {
      row.hidden = (paper.value && row.dataset.paper !== paper.value) ||
                   (verdict.value && row.dataset.verdict !== verdict.value);
      shown += row.hidden ? 0 : 1;
    }
    document.getElementById("claims-shown").textContent =
      shown + " of " + body.rows.length + " claims shown";
  }
  paper.addEventListener("change", filter);
  verdict.addEventListener("change", filter);
  const heads = Array.from(table.tHead.rows[0].cells);
  heads.forEach(function (th, col) {
    th.addEventListener("click", function () {
      const dir = th.dataset.sort === "asc" ? -1 : 1;
      heads.forEach(function (h) { h.removeAttribute("data-sort"); });
      th.dataset.sort = dir === 1 ? "asc" : "desc";
      const text = function (row) { return row.cells[col].textContent.trim(); };
      Array.from(body.rows)
        .sort(function (a, b) {
          return dir * text(a).localeCompare(text(b), "en", {numeric: true});
        })
        .forEach(function (row) { body.appendChild(row); });
    });
  });
  filter();
})();
</script>
</body></html>
""")


def _href(path: str | None, base: Path) -> str | None:
    if path is None:
        return None
    return Path(path).relative_to(base).as_posix() if Path(path).is_relative_to(base) else path


def claim_links(claim: dict, report_href: str, base: Path) -> dict:
    """The links of the claim ``claim`` (a row of tms.core.claim_rows) relative to ``base``:
    ``claim_href``, the place in the report that shows it (its figure's caption, or its row of
    the report's claims table when it has no figure); ``figure_href``, the PNG, and
    ``data_href``, the CSV of its data beside it (None without a figure)."""
    figure = claim["figure"]
    anchor = anchors.figure(Path(figure).stem) if figure else anchors.claim(claim["id"])
    return {"claim_href": f"{report_href}#{anchor}", "figure_href": _href(figure, base),
            "data_href": _href(figure and Path(figure).with_suffix(".csv").as_posix(), base)}


def render(papers: list[dict], errata: Sequence[Erratum], params_text: str, revision: str,
           mermaid: str, stages: list[dict], base: str | Path = "reports") -> str:
    """The index page as HTML text. papers: tms.reporting.metrics.load_claims; errata: every
    paper's (its package's ``errata.ERRATA``, tms.core.errata); stages: :func:`stage_table`;
    links are made relative to ``base`` (the directory of the page).

    Raises ValueError if a claim names a stage that is not in ``stages``.
    """
    base = Path(base)
    _check_stages(papers, {s["name"] for s in stages})
    view = []
    for p in papers:
        report_href = _href(p["report"], base)
        rows = [{**r, **claim_links(r, report_href, base), "paper_key": p["paper"],
                 "report_href": report_href, "label": label(r)} for r in p["claims"]]
        for basis in BASES:                     # a figure's thumbnail once per table
            seen: set[str] = set()
            for r in rows:
                if r["basis"] == basis:
                    r["first_of_figure"] = r["figure_href"] not in seen
                    seen.add(r["figure_href"])
        view.append({**p, "claims": rows, "report_href": report_href,
                     "totals": tally(rows, EMPIRICAL), "maths_totals": tally(rows, MATHEMATICS),
                     "central": [r for r in rows if r.get("central")],
                     "counted": sum(r["basis"] == EMPIRICAL for r in rows),
                     "maths": sum(r["basis"] == MATHEMATICS for r in rows)})
    by_paper = {p["paper"]: p["claims"] for p in view}
    listed, errata_view = set(), []
    for e in errata:
        rows = evidence(e, by_paper)
        listed.update((e.paper, r["id"]) for r in rows)
        errata_view.append({**e.__dict__, "rows": rows})
    other = [r for p in view for r in p["claims"]
             if r["verdict"] == "erratum" and (p["paper"], r["id"]) not in listed]
    seen, stage_rows = set(), []
    for s in stages:                        # one anchor per stage (matrix stages: the first)
        sid = _anchor(s["name"])
        stage_rows.append({**s, "id": sid if sid not in seen else None})
        seen.add(sid)
    every = [r for p in view for r in p["claims"]]
    empirical = [r for r in every if r["basis"] == EMPIRICAL]
    return _TEMPLATE.render(papers=view, errata=errata_view, other_errata=other,
                            params_text=params_text, revision=revision, mermaid=mermaid,
                            dag_svg=dag.svg(dag.parse(mermaid)), stages=stage_rows,
                            anchor=_anchor, verdicts=sorted({r["label"] for r in empirical}),
                            claims=empirical, totals=tally(every, EMPIRICAL),
                            maths=[r for r in every if r["basis"] == MATHEMATICS],
                            maths_totals=tally(every, MATHEMATICS), tex_style=TEX_STYLE)
