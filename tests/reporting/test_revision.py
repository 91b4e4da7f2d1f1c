"""The revision the site names (tms.reporting.revision.git_revision), in throwaway git
repositories."""

import subprocess

from tms.reporting import revision


def test_git_revision_names_the_commit_and_uncommitted_inputs(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    assert revision.git_revision(tmp_path) == "not a git checkout"
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for name in ("dvc.lock", "params.yaml", "code.py"):
        (tmp_path / name).write_text("a\n")
    subprocess.run(git + ["add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(git + ["commit", "-qm", "c"], cwd=tmp_path, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stdout.strip()
    (tmp_path / "dvc.lock").write_text("b\n")              # written by the pipeline itself
    assert revision.git_revision(tmp_path) == head
    (tmp_path / "params.yaml").write_text("b\n")          # a profile: the page shows it whole
    assert revision.git_revision(tmp_path) == head
    (tmp_path / "code.py").write_text("b\n")
    assert revision.git_revision(tmp_path) == f"{head} + uncommitted changes to code.py"


def test_git_revision_is_the_last_commit_of_what_the_site_stage_depends_on(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    commit = lambda: subprocess.run(  # noqa: E731
        git + ["commit", "-qam", "c"], cwd=tmp_path, check=True)
    head = lambda: subprocess.run(  # noqa: E731
        ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "dvc.yaml").write_text(     # the site declares every stage's code (make deps)
        "stages:\n  a:\n    cmd: python code.py\n    deps: [code.py]\n"
        "  site:\n    cmd: python site.py\n    deps: [site.py, code.py, pyproject.toml]\n")
    for name in ("code.py", "site.py", "pyproject.toml", "notes.md", "dvc.lock"):
        (tmp_path / name).write_text("a\n")
    subprocess.run(git + ["add", "-A"], cwd=tmp_path, check=True)
    commit()
    code = head()
    for name in ("notes.md", "dvc.lock"):                 # docs, then the run's lock
        (tmp_path / name).write_text("b\n")
        commit()
    assert revision.git_revision(tmp_path) == code
    (tmp_path / "notes.md").write_text("c\n")            # uncommitted, not run by a stage
    assert revision.git_revision(tmp_path) == code
    (tmp_path / "code.py").write_text("b\n")
    assert revision.git_revision(tmp_path) == f"{code} + uncommitted changes to code.py"
    commit()
    assert revision.git_revision(tmp_path) == head() != code
    (tmp_path / "pyproject.toml").write_text("b\n")      # the pins of what runs
    commit()
    pinned = head()
    (tmp_path / "notes.md").write_text("d\n")
    commit()
    assert revision.git_revision(tmp_path) == pinned
    with (tmp_path / "dvc.yaml").open("a") as f:        # what runs, though not a DVC dependency
        f.write("# a stage's command changed\n")
    commit()
    pinned = head()
    # a shallow clone may lack the commit: it names HEAD, and says so
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{tmp_path}", str(shallow)],
                   check=True)
    assert revision.git_revision(shallow) == (
        f"{head()} (a shallow clone: the code's last commit may be older)")
