"""What a run of ``make repro`` decided, said at its end: the verdict counts (empirical claims
apart from the checks of the papers' mathematics), and against the committed snapshot of the same
profile (``results/<profile>/``, tms.pipeline.snapshot): the same verdicts, or the claims whose
verdict changed; and when ``dvc.lock`` differs from the committed one while every verdict is the
same and the snapshot was made on another CPU, one line saying that this is why.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tms.core.claim_rows import BASES, label, read_folder, tally
from tms.pipeline import host, verdicts


def _rows(claims_dir: Path) -> dict[tuple[str, str], dict]:
    """(paper, claim id) → row of every claims file of ``claims_dir``."""
    return {(paper["paper"], r["id"]): r for paper in read_folder(claims_dir)
            for r in paper["claims"]}


def changes(then: Path, now: Path) -> list[str]:
    """'paper id: old → new' (tms.core.claim_rows.label, with the direction) for every claim
    whose verdict differs between the claims folders ``then`` and ``now``; a claim that only one
    of them holds reads '—' in the other."""
    before, after = _rows(then), _rows(now)
    says = lambda rows, key: label(rows[key]) if key in rows else "—"  # noqa: E731
    return [f"{paper} {cid}: {says(before, (paper, cid))} → {says(after, (paper, cid))}"
            for paper, cid in dict.fromkeys([*after, *before])
            if says(before, (paper, cid)) != says(after, (paper, cid))]


def _lock_differs(repo: Path) -> bool:
    run = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "dvc.lock"], cwd=repo,
                         capture_output=True)
    return run.returncode == 1


def lines(profile: str, repo: str | Path = ".", claims_dir: str = "reports/claims",
          results: str = "results") -> list[str]:
    """The closing lines of a run of ``profile`` in ``repo`` (none without claims files)."""
    repo = Path(repo)
    now = _rows(repo / claims_dir)
    if not now:
        return []
    out = [f"{verdicts.HEADINGS[b]}: " + (", ".join(f"{n} {v}" for v, n in tally(now.values(), b))
                                 or "none") for b in BASES]
    snap = repo / results / profile
    if not (snap / "claims").is_dir():
        return [*out, f"no committed snapshot of the {profile} profile to compare with"]
    changed = [f"  {c}" for c in changes(snap / "claims", repo / claims_dir)]
    rev, where = verdicts.about(snap)
    if changed:
        out += [f"{len(changed)} verdicts differ from the snapshot {results}/{profile} "
                f"(revision {rev}):", *changed]
    else:
        out.append(f"same verdicts as the snapshot {results}/{profile} (revision {rev})")
    cpu = host.cpu_model()
    if not changed and _lock_differs(repo) and cpu not in where:
        out.append(f"dvc.lock differs from the committed one because this CPU ({cpu}) is not "
                   f"the one that made it ({where}): another CPU family rounds differently; "
                   "every verdict is the same (`make verify` names the outputs that differ)")
    return out
