"""The revision of the code a pipeline run ran (:func:`git_revision`), as the site names it: the
last commit of what the site stage depends on, and the uncommitted changes to it. A commit of
docs, tests or dvc.lock keeps it, so a fresh clone's run writes the page its dvc.lock holds.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tms.core.dvc_yaml import REVISION_STAGE, read_stages

#: Tracked files a run writes (the lock, the metrics, the plots, the snapshots): not uncommitted
#: work of the checkout.
WRITTEN = ("dvc.lock", "reports/claims.json", "reports/claim_values.json", "reports/plots",
           "results")


def _revision_paths(repo: Path) -> list[str]:
    """The tracked inputs whose last commit :func:`git_revision` names: dvc.yaml and the deps of
    the stage that names it (tms.core.dvc_yaml.REVISION_STAGE: every stage's code,
    pyproject.toml, params.yaml), those inside ``repo``; ``["."]`` without a dvc.yaml or that
    stage. DVC refuses dvc.yaml as a dependency: after a commit of it alone the site is rerun
    by hand (tms.pipeline.snapshot.site_revision asks for it)."""
    path = repo / "dvc.yaml"
    stage = read_stages(path).get(REVISION_STAGE) if path.is_file() else None
    if not stage:
        return ["."]
    return ["dvc.yaml"] + [d for d in stage.get("deps", []) if isinstance(d, str)
                           and "${" not in d and not Path(d).is_absolute()
                           and ".." not in Path(d).parts]


def git_revision(repo: str | Path = ".") -> str:
    """The last commit of ``repo`` that changed dvc.yaml or what the site stage depends on (every
    stage's code, pyproject.toml, params.yaml: :func:`_revision_paths`), followed by those of
    these files that differ from HEAD (other than :data:`WRITTEN` and params.yaml, a profile that
    the page shows whole); a note instead when ``repo`` is not a git checkout with a commit (or
    git is missing), and after it in a shallow clone, whose history may lack that commit (HEAD
    is named then). A later commit of docs, tests or dvc.lock keeps it: a fresh clone's run
    writes the page its dvc.lock holds. Raises RuntimeError when git cannot read the history."""
    repo = Path(repo)

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    try:
        head = git("rev-parse", "HEAD")
    except OSError:
        return "not a git checkout (git is not installed)"
    if head.returncode != 0:
        return "not a git checkout"
    paths = [f":(literal){p}" for p in _revision_paths(repo)]
    last = git("log", "-1", "--format=%H", "--", *paths)
    status = git("status", "--porcelain", "--untracked-files=no", "--", *paths,
                 *(f":(exclude){p}" for p in (*WRITTEN, "params.yaml")))
    if last.returncode or status.returncode:
        raise RuntimeError(f"git cannot read {repo.resolve()}'s history: "
                           + (last.stderr + status.stderr).strip())
    shallow = git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"
    changed = sorted(line[3:] for line in status.stdout.splitlines())
    return ((last.stdout.strip() or head.stdout.strip())
            + (f" + uncommitted changes to {', '.join(changed)}" if changed else "")
            + (" (a shallow clone: the code's last commit may be older)" if shallow else ""))
