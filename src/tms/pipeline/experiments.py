"""``make exps``: the DVC experiments as a table a person can read.

``dvc exp show`` has a column for every param, dependency and metric (270 here). This prints one
row per experiment (the workspace, the commit, each ``dvc exp run``), the params whose values
differ between them, and per paper the headline: the empirical claims reproduced, not
reproduced and inconclusive (tms.reporting.metrics.metrics), at most :data:`MAX_COLUMNS` columns.

    python -m tms.pipeline.experiments [DVC EXP SHOW ARGUMENTS ...]     # e.g. --all-commits
"""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd

from tms.core import papers

#: The widest table printed: params that differ beyond it are counted, not shown.
MAX_COLUMNS = 20
#: Short names of the papers in the headline columns (the registry's).
SHORT = {p.key: p.short for p in papers.PAPERS}


def _flat(tree: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = json.dumps(value) if isinstance(value, list) else value
    return out


def _rows(shown: list[dict]) -> list[tuple[str, dict, dict]]:
    """(name, flat params, claims metrics) of every row of ``dvc exp show --json``."""
    rows = []

    def add(entry: dict, name: str) -> None:
        data = entry.get("data") or {}
        params = (data.get("params") or {}).get("params.yaml", {}).get("data", {})
        claims = (data.get("metrics") or {}).get("reports/claims.json", {}).get("data", {})
        rows.append((name, _flat(params), claims))

    for entry in shown:
        rev = entry["rev"]
        add(entry, entry.get("name") or (rev if rev == "workspace" else rev[:7]))
        for exp in entry.get("experiments") or []:
            for rev in exp.get("revs", []):
                add(rev, exp.get("name") or rev.get("name") or rev["rev"][:7])
    return rows


def _headline(counts: dict) -> str:
    inconclusive = counts.get("inconclusive_holds", 0) + counts.get("inconclusive_fails", 0)
    return f"{counts.get('reproduced', 0)}/{counts.get('not_reproduced', 0)}/{inconclusive}"


def table(shown: list[dict]) -> tuple[pd.DataFrame, int]:
    """The readable table of ``dvc exp show --json`` output ``shown``, and how many differing
    params did not fit in :data:`MAX_COLUMNS`."""
    rows = _rows(shown)
    keys = sorted({k for _, params, _ in rows for k in params})
    differ = [k for k in keys if len({repr(p.get(k)) for _, p, _ in rows}) > 1]
    papers = [p for p in SHORT if any(p in c for _, _, c in rows)]
    room = MAX_COLUMNS - 1 - len(papers)
    shown_keys, left = differ[:room], max(0, len(differ) - room)
    frame = pd.DataFrame([
        {"experiment": name, **{k: params.get(k) for k in shown_keys},
          **{f"{SHORT[p]} R/N/I": _headline(claims.get(p, {}).get("empirical", {}))
            for p in papers}}
        for name, params, claims in rows])
    return frame, left


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    run = subprocess.run([sys.executable, "-m", "dvc", "exp", "show", "--json", *argv],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"error: dvc exp show failed: {run.stderr.strip()}", file=sys.stderr)
        return 2
    frame, left = table(json.loads(run.stdout))
    print(frame.to_string(index=False))
    print("R/N/I: empirical claims reproduced / not reproduced / inconclusive"
          + (f"; {left} more params differ (dvc exp show --only-changed)" if left else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
