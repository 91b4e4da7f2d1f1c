"""What a run of ``make repro`` decided, said at its end: the verdict counts (empirical claims
apart from the checks of the papers' mathematics), and against the committed snapshot of the same
profile (``results/<profile>/``, tms.pipeline.snapshot): the same verdicts, or the claims whose
verdict changed; and, last, when ``dvc.lock`` or the metrics and plot data git keeps differ from
the commit, one line saying why (this run's params or code, or another CPU family than the one
that made the snapshot) and what to do.
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


#: What a run writes that git tracks: the lock, and the metrics and plot data DVC keeps in git.
TRACKED = ("dvc.lock", "reports/claims.json", "reports/claim_values.json", "reports/plots")


def _changed_in_git(repo: Path) -> list[str]:
    """The files of :data:`TRACKED` that differ from git HEAD in ``repo``."""
    run = subprocess.run(["git", "diff", "--name-only", "HEAD", "--", *TRACKED], cwd=repo,
                         capture_output=True, text=True)
    return run.stdout.split() if run.returncode == 0 else []


def git_status_line(changed_files: list[str], family: str, where: str | None,
                    verdicts_differ: int) -> str:
    """The line that explains ``git status`` after a run: ``changed_files`` (tracked outputs that
    differ from the commit) written on the CPU family ``family`` (tms.pipeline.host.cpu_family);
    ``where``: the machine the committed snapshot of the profile was made on (None: there is
    none); ``verdicts_differ``: how many verdicts differ from that snapshot's (listed above)."""
    files, back = ", ".join(changed_files), f"`git checkout {' '.join(changed_files)}`"
    verdicts_said = ("every verdict is the same" if not verdicts_differ else
                     f"{verdicts_differ} verdicts differ (above)")
    if where is None:
        return (f"git status: {files} changed with this run (its params, its code or this CPU "
                f"family; no committed snapshot of the profile names the machine): commit them, "
                f"or {back} to keep the committed ones")
    if family in where:
        return (f"git status: {files} changed with this run's params or code ({family} made the "
                f"snapshot too; {verdicts_said}): commit them with the change")
    return (f"git status: the changes to {files} come from this CPU, {family}, not the family "
            f"that made the commit's ({where}): it rounds the last digits differently; "
            f"{verdicts_said}. Commit them to keep this machine's results, or {back} to keep the "
            "committed ones (`make verify` then names every output that differs)")


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
    where = None
    if (snap / "claims").is_dir():
        changed = [f"  {c}" for c in changes(snap / "claims", repo / claims_dir)]
        rev, where = verdicts.about(snap)
        out += ([f"{len(changed)} verdicts differ from the snapshot {results}/{profile} "
                 f"(revision {rev}):", *changed] if changed else
                [f"same verdicts as the snapshot {results}/{profile} (revision {rev})"])
    else:
        changed = []
        out.append(f"no committed snapshot of the {profile} profile to compare with")
    if files := _changed_in_git(repo):
        out.append(git_status_line(files, host.cpu_family(), where, len(changed)))
    return out
