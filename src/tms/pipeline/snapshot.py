"""A results snapshot kept in git: the published site of a profile that was run, with what made it.

    python -m tms.pipeline.snapshot results/default     # after `make repro`; `make snapshot`

A reader without the machine (a GPU, or the hours) sees the results of a run without rerunning
it. The folder holds:

- ``site/``: the site as :func:`tms.reporting.publish.copy_site` copies it (reports, figures and
  the CSV behind each figure; no weights), opened at ``site/index.html``;
- ``params.yaml`` and ``dvc.lock``: the profile and the hashes of every input and output of the
  run, to rerun it (``git checkout <revision>``, copy both back, ``make repro``) and compare;
- ``claims.json`` and ``claim_values.json``: the verdict counts and each claim's value, the
  files ``dvc metrics show`` reads; ``claims/``: every claims row of the run, as each paper's
  claims stage wrote it (reports/claims/), from which ``results/README.md`` shows every
  snapshot's verdicts side by side (tms.pipeline.verdicts, rewritten by ``make snapshot``);
- ``data/``: the tables and arrays the claims are judged on, so that the tests can perturb a real
  run's evidence, and the trained grids' weights, so that a statistic or an analysis added later
  runs on this snapshot without retraining (git stores them compressed); all of them unless the
  weights exceed :data:`MAX_WEIGHTS` (the authors' scale), when only the fig. 3 models' weights
  (the off-diagonal claim reads them) are kept, and the README says which
  (:func:`evidence_files`);
- ``README.md``: the profile, the git revision, the machine it was taken on, and each stage's
  last logged time.

The snapshot is refused, with the reason, unless every stage is up to date (``dvc status``) and
the files git does not ignore, but ``params.yaml`` and ``dvc.lock``, are as committed, so that
the revision it names is the code that made it. That revision is the one the site names (the
last commit of the code the pipeline ran, tms.reporting.revision.git_revision), whose stages' code
must be HEAD's (a later commit of ``dvc.lock``, docs or tests is the usual case): the README and
the site name one revision.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tms.core import progress
from tms.core.dvc_yaml import read_stages
from tms.core.io import atomic_path
from tms.pipeline import host, params, verdicts
from tms.pipeline.forecast import FORECAST_FILE, params_digest
from tms.pipeline.profiles import profile_name
from tms.pipeline.prune import pipeline_stages
from tms.pipeline.repro import read_records, stage_devices, stage_times
from tms.pipeline.stage import PARAMS_FILE, RECORDS_FILE
from tms.reporting.publish import copy_site
from tms.reporting.revision import WRITTEN

#: The files of the run copied beside the site, from the repository root.
RUN_FILES = (str(PARAMS_FILE), "dvc.lock", "reports/claims.json", "reports/claim_values.json")
#: The claims rows of the run (tms.core.claim_rows.export), copied as ``claims/``.
CLAIMS_DIR = "reports/claims"


class SnapshotError(RuntimeError):
    """The checkout cannot be snapshotted as it stands (the message says why)."""


def _run(args: list[str], repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=repo, capture_output=True, text=True)


def check_clean(repo: str | Path = ".") -> str:
    """The git revision (HEAD) of ``repo`` when its run can be snapshotted. Raises SnapshotError
    naming what stands in the way: a stage that is not up to date (``dvc status``), a tracked
    file other than params.yaml, the files a run writes (tms.reporting.revision.WRITTEN: dvc.lock,
    the metrics, the plots, the snapshots) and the README (whose answer table a snapshot
    rewrites) that differs from HEAD, or a file that git does not ignore and HEAD lacks."""
    repo = Path(repo)
    dvc = _run([sys.executable, "-m", "dvc", "status"], repo)
    if dvc.returncode != 0 or "up to date" not in dvc.stdout:
        raise SnapshotError("the pipeline is not up to date (run `make repro` first):\n"
                            + (dvc.stdout + dvc.stderr).strip())
    git = _run(["git", "status", "--porcelain", "--", ".", f":!{PARAMS_FILE}", ":!README.md",
                *(f":!{p}" for p in WRITTEN)], repo)
    if git.returncode != 0 or git.stdout.strip():
        raise SnapshotError("files differ from the commit, or are not in it, so no revision names "
                            "the code of this run; commit them first:\n"
                            + (git.stdout + git.stderr).strip())
    return _run(["git", "rev-parse", "HEAD"], repo).stdout.strip()


#: The weights folder a claim reads (fig. 3 of the Persian Rug paper): kept in every snapshot.
KEPT_WEIGHTS = ("data/persian_rug/fig3_weights",)
#: The most bytes of weights (every ``*_weights`` folder of ``data/``) a snapshot keeps in git: the
#: CPU profiles' grids (about 5 MB for the default, 50 for the ladders) fit; the authors' scale
#: (GiB) keeps only :data:`KEPT_WEIGHTS`.
MAX_WEIGHTS = 128 * 2**20


def _weights_folder(rel: Path) -> str | None:
    """The ``*_weights`` folder ``rel`` (repository-relative) lies in, or None."""
    return next((p.as_posix() for p in rel.parents if p.name.endswith("_weights")), None)


def evidence_files(repo: str | Path = ".") -> tuple[list[Path], str]:
    """The files of ``repo``'s ``data/`` a snapshot keeps (repository-relative), and what it keeps
    of the weights, in words for its README: every file when the weights (``*_weights``
    folders) take at most :data:`MAX_WEIGHTS`, else every file but those of a weights folder other
    than :data:`KEPT_WEIGHTS`. Never the training states of the ``*_ends`` folders
    (tms.persian_rug.ends): the convergence checks read them, and no analysis after them."""
    repo = Path(repo)
    files = [p.relative_to(repo) for p in sorted((repo / "data").rglob("*")) if p.is_file()
             and not any(d.name.endswith("_ends") for d in p.relative_to(repo).parents)]
    weights = [f for f in files if _weights_folder(f)]
    total = sum((repo / f).stat().st_size for f in weights)
    folders = sorted({_weights_folder(f) for f in weights})
    if total <= MAX_WEIGHTS:
        return files, (f"Weights: all kept, {total / 2**20:.1f} MiB in {len(folders)} folders "
                       f"({', '.join(f'`{f}`' for f in folders) or 'none'}): a statistic or an "
                       "analysis added later runs on them without retraining.")
    kept = [f for f in files if _weights_folder(f) in (None, *KEPT_WEIGHTS)]
    return kept, (f"Weights: {total / 2**20:.0f} MiB, over the {MAX_WEIGHTS / 2**20:.0f} MiB a "
                  f"snapshot keeps in git: only {', '.join(f'`{k}`' for k in KEPT_WEIGHTS)} kept; "
                  "an analysis of the trained grids needs the run's DVC cache.")


def stage_deps(repo: str | Path = ".") -> set[str]:
    """Every dependency path that a stage of ``repo``'s dvc.yaml declares, templated ones left
    out (the outputs of other stages among them: untracked, so no commit changes them). Raises
    FileNotFoundError without a dvc.yaml."""
    stages = read_stages(Path(repo) / "dvc.yaml")
    return {d for st in stages.values() for d in (st.get("do", st).get("deps") or [])
            if isinstance(d, str) and "${" not in d}


def site_revision(repo: str | Path = ".", index: str = "reports/index.html",
                  head: str | None = None) -> str:
    """The revision the site ``index`` of ``repo`` names (tms.reporting.revision.git_revision, when
    the site stage ran), when neither dvc.yaml nor a file a stage depends on (:func:`stage_deps`)
    differs between it and HEAD (``head``, default: ``git rev-parse HEAD``): a later commit of
    docs, tests or dvc.lock keeps it. Raises
    SnapshotError when the site names no clean revision (uncommitted changes at its run) or one
    whose stages' code differs from HEAD's."""
    repo = Path(repo)
    head = head or _run(["git", "rev-parse", "HEAD"], repo).stdout.strip()
    text = (repo / index).read_text(encoding="utf-8")
    named = re.search(r'<code id="revision">([^<]*)</code>', text)
    rev = named.group(1).strip() if named else ""
    if not re.fullmatch(r"[0-9a-f]{40}", rev):
        raise SnapshotError(f"the site names {rev or 'no revision'!r}, not a commit: commit the "
                            "code, then `.venv/bin/dvc repro -f -s site` (the site alone) and "
                            "commit dvc.lock")
    diff = _run(["git", "diff", "--name-only", rev, head, "--", "."], repo)
    deps = stage_deps(repo) | {"dvc.yaml"}
    changed = [f for f in diff.stdout.split() if any(f == d or f.startswith(d.rstrip("/") + "/")
                                                     for d in deps)]
    if diff.returncode != 0 or changed:
        raise SnapshotError(f"the site was built at {rev[:12]}, whose stages' code differs from "
                            f"HEAD ({head[:12]}): `make repro` (after a change of dvc.yaml alone, "
                            "`.venv/bin/dvc repro -f -s site`), commit dvc.lock, then snapshot:\n"
                            + ("\n".join(changed) or diff.stderr).strip())
    return rev


def _seconds(low: float, high: float) -> str:
    """A forecast in whole seconds: one number, or 'low–high' where they differ."""
    return f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}–{high:.0f}"


def readme(profile: str, revision: str, where: str, times: list[tuple[str, float, int]],
           forecast: dict[str, tuple[float, float]] | None = None,
           devices: dict[str, str] | None = None) -> str:
    """The snapshot's README.md: what it is, what made it, how to open and rerun it, and the
    stage times ``times`` ((stage, seconds, runs), the last logged run of each stage with the
    interrupted runs it resumed, tms.pipeline.repro.stage_times), with the
    ``forecast`` (stage → predicted seconds at the median stopping step and with every model
    at its cap, tms.pipeline.forecast) beside those it predicts, and the device each stage ran
    on where ``devices`` (stage → device, tms.pipeline.repro.stage_devices) names one."""
    lines = [f"# Results snapshot: the `{profile}` profile", "",
             f"Made by git revision `{revision}` with `params.yaml` and `dvc.lock` of this folder, "
             f"on {where}.", "",
             "Open `site/index.html` in a browser (nothing loads from the network). "
             "`claims.json` and `claim_values.json` are the verdict counts and each claim's "
             "value, as `dvc metrics show` reads them.", "",
             f"To rerun: `git checkout {revision[:12]}`, copy this folder's `params.yaml` and "
             "`dvc.lock` to the repository root, `make repro`; `git diff --no-index` of the "
             "new `dvc.lock` against this one names every output that differs.", ""]
    if not times:
        return "\n".join(lines)
    cells = {name: [name, f"{seconds:.1f}"] for name, seconds, _ in times}
    devices = {name: d for name, d in (devices or {}).items() if name in cells}
    head, rule = ["stage", "seconds"], ["---", "---:"]
    total = ["total", f"{sum(t[1] for t in times):.1f}"]
    intro = ("Stage times (the last logged run of each stage in `logs/stages.jsonl`: for a stage "
             "restored from DVC's cache, an earlier run's time)")
    resumed = [f"{name} ({runs} runs)" for name, _, runs in times if runs > 1]
    if forecast:
        intro += (", and the time `make forecast` predicted for each training stage from the "
                  "params and rates it measured on the same machine (a stage whose models a "
                  "stopping rule ends: from the median stopping step to every model at its step "
                  "cap; a batched grid runs until its last model stops)")
        head, rule = head + ["forecast (s)"], rule + ["---:"]
        for name, row in cells.items():
            row.append(_seconds(*forecast[name]) if name in forecast else "—")
        total.append(_seconds(*(sum(forecast[t[0]][i] for t in times if t[0] in forecast)
                                for i in (0, 1))) + " (training)")
    if devices:
        intro += (", and the device of each stage whose params say `auto`, as the stage "
                  "logged it (where it differs from the machine above, that stage ran elsewhere "
                  "and its outputs were committed with `dvc commit`)")
        head, rule = head + ["device"], rule + ["---"]
        for name, row in cells.items():
            row.append(devices.get(name, "—"))
        total.append("")
    rows = ["| " + " | ".join(r) + " |" for r in [head, *cells.values(), total]]
    table = [intro + ":", "", rows[0], "|" + "|".join(rule) + "|", *rows[1:], ""]
    if resumed:
        table += ["Resumed from their checkpoints after an interruption, their seconds summed over "
                  "the runs, the steps redone since the last checkpoint included (a run cut off "
                  "without a word counted to its last record, within the "
                  f"{progress.EVERY:.0f} s between progress lines): " + ", ".join(resumed) + ".",
                  ""]
    return "\n".join(lines + table)


def _forecast(repo: Path) -> dict[str, tuple[float, float]] | None:
    """stage → predicted seconds of ``make forecast`` (tms.pipeline.forecast) at the median
    stopping step and at the cap (the same where a forecast made before the cap was written
    has none), when it was made for the params of ``repo``'s run; else None."""
    path = repo / FORECAST_FILE
    if not path.is_file():
        return None
    table = pd.read_csv(path)
    digest = params_digest(params.SECTION.load(repo / PARAMS_FILE))
    if "params" not in table or not (table.params == digest).all():
        return None
    cap = table.seconds_cap if "seconds_cap" in table else table.seconds
    return dict(zip(table.stage, zip(table.seconds, cap)))


def snapshot(out: str | Path, repo: str | Path = ".", index: str = "reports/index.html",
             revision: str | None = None, where: str | None = None,
             stages: list[str] | None = None) -> Path:
    """Write the snapshot folder ``out`` (replacing it) from the run in ``repo``; returns it.

    revision: the git revision to name (None: :func:`site_revision` once :func:`check_clean`
    passes; each raises SnapshotError when the run cannot be named by one); where: the machine
    (None: tms.pipeline.host.machine); stages: the pipeline's stages, whose times are given in
    this order (None: tms.pipeline.prune.pipeline_stages).
    Raises FileNotFoundError for a missing run file or a file the site links but lacks.
    """
    repo, out = Path(repo), Path(out)
    revision = (site_revision(repo, index, check_clean(repo)) if revision is None
                else revision)
    for name in RUN_FILES:
        if not (repo / name).is_file():
            raise FileNotFoundError(f"{repo / name} is missing: run `make repro` first")
    records = read_records(repo / RECORDS_FILE)
    last = {t[0]: t for t in stage_times(records)}
    stages = pipeline_stages(repo) if stages is None else stages
    times = [last[name] for name in stages if name in last]
    forecast = _forecast(repo)
    files, kept = evidence_files(repo)
    text = readme(profile_name(repo / PARAMS_FILE), revision, where or host.machine(), times,
                  forecast, stage_devices(records)) + "\n" + kept + "\n"
    with atomic_path(out, directory=True) as tmp:
        copy_site(repo / index, tmp / "site")
        for name in RUN_FILES:
            shutil.copyfile(repo / name, tmp / Path(name).name)
        shutil.copytree(repo / CLAIMS_DIR, tmp / "claims")
        for rel in files:
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(repo / rel, tmp / rel)
        (tmp / "README.md").write_text(text, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the folder to write, e.g. results/default")
    args = ap.parse_args(argv)
    # SIGTERM ends the command like Ctrl-C: the new folder's temporary copy is removed on the
    # way out, and the snapshot committed before is left whole (tms.core.io.atomic_path)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        folder = snapshot(args.out)
        page = verdicts.write(folder.parent)
    except (RuntimeError, FileNotFoundError, ValueError) as err:     # SnapshotError among them
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {folder}/: open {folder}/site/index.html; and {page}, every snapshot's "
          "verdicts side by side; commit both to keep them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
