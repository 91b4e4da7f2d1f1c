"""Every results snapshot's verdicts side by side: ``results/README.md``, and the answer table of
the README (the papers' central claims per snapshot, between the markers of :data:`MARKERS`).

    python -m tms.pipeline.verdicts [results]     # `make snapshot` runs it after each snapshot

One Markdown page (GitHub draws it when the folder is opened) with, per snapshot of
``results/`` (tms.pipeline.snapshot: its ``claims/<paper>.json`` and ``README.md``), the
profile, the revision (and the one that judged its verdicts again, tms.pipeline.rejudge) and the
machine, the verdict counts (empirical claims apart from the
checks of the papers' mathematics, tms.core.claim_rows.BASES), and then per paper one row per
claim: its id, what it states, its basis, and in each snapshot's column the verdict
(an inconclusive one with its direction, tms.core.claim_rows.label), our value and the scale it
ran at. Claims a snapshot lacks (an older registry) read "—".
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from tms.core.claim_rows import BASES, label, read_folder, tally
from tms.core.io import atomic_path
from tms.reporting.metrics import PAPERS

#: The snapshots' order on the page: these first (the default profile, then the larger scales),
#: the others after them by name.
ORDER = ("default", "cpu-paper", "gpu", "paper")
#: The heading of each basis's counts.
HEADINGS = {"empirical": "empirical claims", "mathematics": "checks of the papers' mathematics"}


def snapshots(results: str | Path) -> list[Path]:
    """The snapshot folders of ``results`` that hold claims files, in :data:`ORDER`."""
    found = [p for p in Path(results).iterdir() if (p / "claims").is_dir()]
    rank = {name: k for k, name in enumerate(ORDER)}
    return sorted(found, key=lambda p: (rank.get(p.name, len(ORDER)), p.name))


def _claims(folder: Path) -> dict[str, dict]:
    """paper → its claims file (tms.core.claim_rows.export) of the snapshot ``folder``."""
    return {paper["paper"]: paper for paper in read_folder(folder / "claims")}


def _readme(folder: Path) -> str:
    """The text of the snapshot ``folder``'s README ('' without one)."""
    path = folder / "README.md"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def about(folder: Path) -> tuple[str, str]:
    """(revision, machine) as the snapshot's README states them ('?' where it does not); the
    machine followed by the stages its stage table says ran on a GPU, and which."""
    text = _readme(folder)
    rev = re.search(r"git revision `([0-9a-f]{7,40})`", text)
    where = re.search(r"`dvc\.lock` of this folder, on (.+?)\.\n", text)
    elsewhere: dict[str, list[str]] = {}
    for stage, device in re.findall(r"^\| (\S+) \| [^\n]* \| (cuda[^|\n]*) \|$", text, re.M):
        elsewhere.setdefault(device, []).append(stage)
    return (rev.group(1)[:12] if rev else "?"), (where.group(1) if where else "?") + "".join(
        f"; {', '.join(stages)} on {device}" for device, stages in elsewhere.items())


#: How a snapshot's README begins the paragraph of a judging of its verdicts again from its data
#: (tms.pipeline.rejudge.note), followed by the judging revision in backquotes.
JUDGED_AGAIN = "Verdicts judged again by git revision"


def judged_again(folder: Path) -> str | None:
    """The revision that last judged the snapshot ``folder``'s verdicts again from its data
    (tms.pipeline.rejudge), as its README names it (12 digits), or None."""
    found = re.search(re.escape(JUDGED_AGAIN) + r" `([0-9a-f]{7,40})`", _readme(folder))
    return found.group(1)[:12] if found else None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _value(row: dict) -> str:
    if row.get("value") is None:
        return ""
    v = f"{row['value']:.4g}"
    return f" {v} ± {row['uncertainty']:.2g}" if row.get("uncertainty") is not None else f" {v}"


def page(results: str | Path) -> str:
    """The Markdown text of ``results/README.md`` (:mod:`tms.pipeline.verdicts`). Raises
    FileNotFoundError if ``results`` holds no snapshot with claims."""
    folders = snapshots(results)
    if not folders:
        raise FileNotFoundError(f"no snapshot with claims in {results}")
    runs = {f.name: _claims(f) for f in folders}
    names = list(runs)
    lines = ["# Results: every snapshot's verdicts side by side", "",
             "Written by `make snapshot` (`python -m tms.pipeline.verdicts`) from the snapshots "
             "of this folder; each one's site is `<snapshot>/site/index.html`. Empirical claims "
             "(about trained models) are counted apart from the checks of the papers' "
             "mathematics; an inconclusive verdict says which way its evidence points at the "
             "scale run.", "", "| snapshot | revision | machine | " + " | ".join(
                 HEADINGS[b] for b in BASES) + " |", "|---|---|---|" + "---|" * len(BASES)]
    for f in folders:
        rows = [r for paper in runs[f.name].values() for r in paper["claims"]]
        rev, where = about(f)
        counts = [", ".join(f"{n} {v}" for v, n in tally(rows, b)) for b in BASES]
        again = judged_again(f)
        rev = f"`{rev}`" + (f", verdicts judged again at `{again}`" if again else "")
        lines.append(f"| [{f.name}]({f.name}/site/index.html) | {rev} | {_cell(where)} | "
                     + " | ".join(counts) + " |")
    papers = [p for p in PAPERS if any(p in r for r in runs.values())] + sorted(
        {p for r in runs.values() for p in r} - set(PAPERS))
    for paper in papers:
        first = next(r[paper] for r in runs.values() if paper in r)
        ids = list(dict.fromkeys(c["id"] for r in runs.values() if paper in r
                                 for c in r[paper]["claims"]))
        text = {c["id"]: c for r in runs.values() if paper in r for c in r[paper]["claims"]}
        lines += ["", f"## {first['title']}", "",
                  "| claim | basis | " + " | ".join(names) + " |",
                  "|---|---|" + "---|" * len(names)]
        for cid in ids:
            cells = []
            for name in names:
                row = next((c for c in runs[name].get(paper, {}).get("claims", [])
                            if c["id"] == cid), None)
                cells.append("—" if row is None else _cell(
                    f"**{label(row)}**{_value(row)} ({row['scale']})"))
            lines.append(f"| `{cid}`: {_cell(text[cid]['claim'])} | {text[cid]['basis']} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


#: The lines of the README between which :func:`answer` is kept.
MARKERS = ("<!-- answer: written by make snapshot -->", "<!-- /answer -->")


def answer(results: str | Path) -> str:
    """The README's answer table: per paper (in :data:`PAPERS` order) its central claims (the
    rows marked ``central``, tms.core.claim_rows.Claims), one column per snapshot (linked to
    its site) with the verdict and our value, and a last row of each snapshot's counts of
    empirical claims. Raises FileNotFoundError as :func:`page`."""
    folders = snapshots(results)
    if not folders:
        raise FileNotFoundError(f"no snapshot with claims in {results}")
    runs = {f.name: _claims(f) for f in folders}
    lines = ["| paper | claim | basis | " + " | ".join(
        f"[{f.name}]({Path(results).name}/{f.name}/site/index.html)" for f in folders) + " |",
        "|---|---|---|" + "---|" * len(folders)]
    for paper in PAPERS:
        ids = list(dict.fromkeys(c["id"] for r in runs.values() for c in
                                 r.get(paper, {}).get("claims", []) if c.get("central")))
        for cid in ids:
            rows = [next((c for c in runs[f.name].get(paper, {}).get("claims", [])
                          if c["id"] == cid), None) for f in folders]
            known = next((r for r in rows if r is not None), None)
            if known is None:
                continue
            lines.append(f"| {paper.replace('_', ' ')} | `{cid}`: {_cell(known['claim'])} | "
                         f"{known['basis']} | " + " | ".join(
                             "—" if r is None else _cell(f"**{label(r)}**{_value(r)}")
                             for r in rows) + " |")
    counts = [", ".join(f"{n} {v}" for v, n in tally(
        [c for p in runs[f.name].values() for c in p["claims"]], "empirical")) for f in folders]
    lines.append("| all | every empirical claim | empirical | " + " | ".join(counts) + " |")
    return "\n".join(lines) + "\n"


def with_answer(readme: str, table: str) -> str:
    """``readme`` with the text between :data:`MARKERS` replaced by ``table``. Raises
    ValueError if the markers are missing."""
    head, sep, rest = readme.partition(MARKERS[0] + "\n")
    _, sep2, tail = rest.partition(MARKERS[1])
    if not sep or not sep2:
        raise ValueError(f"the README lacks the markers {MARKERS}")
    return head + sep + table + sep2 + tail


def write(results: str | Path = "results", readme: str | Path | None = "README.md") -> Path:
    """Write ``results/README.md`` (:func:`page`) atomically, and the answer table into
    ``readme`` (:func:`with_answer`; None: not); returns the page's path."""
    out = Path(results) / "README.md"
    with atomic_path(out) as tmp:
        tmp.write_text(page(results), encoding="utf-8")
    if readme is not None:
        text = with_answer(Path(readme).read_text(encoding="utf-8"), answer(results))
        with atomic_path(readme) as tmp:
            tmp.write_text(text, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default="results", help="the snapshots' folder")
    args = ap.parse_args(argv)
    try:
        out = write(args.results)
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
