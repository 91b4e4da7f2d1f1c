"""End to end: `dvc repro` of the smoke profile in a temporary copy of the repository (shared by
the tests, tests/conftest.py), and every stage run again in one process on the same params."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from dvc.repo import Repo

from tms.core import claim_rows, errata, papers
from tms.pipeline import repro, stage, verify
from tms.reporting import browser, site, tex

ROOT = Path(__file__).resolve().parents[2]
REGISTRIES = {p.key: p.module("claims").CLAIMS for p in papers.PAPERS}

PAPERS = sorted(papers.KEYS)
def test_repro_builds_the_report_and_figures(smoke_repo):
    repo, _ = smoke_repo
    html = (repo / "reports/persian_rug.html").read_text()
    for text in ("Figure 1", "Figure 2", "Figure 3", "Claims", "data:image/png;base64"):
        assert text in html
    for fig in ("fig1", "fig2", "fig3"):
        for ext in ("png", "svg"):
            assert (repo / f"reports/figures/persian_rug/{fig}.{ext}").stat().st_size > 1000


@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_report_is_built_with_its_claims(smoke_repo, paper):
    repo, _ = smoke_repo
    html = (repo / f"reports/{paper}.html").read_text()
    assert "Claims" in html and "data:image/png;base64" in html
    assert "Traceback" not in html
    assert len(list((repo / f"reports/figures/{paper}").glob("*.png"))) >= 3


def test_tables_have_one_row_per_model(smoke_repo):
    repo, _ = smoke_repo
    train = pd.read_parquet(repo / "data/persian_rug/train/n16.parquet")
    assert len(train) == 2 * 2 * 2 * 2              # models × seeds × ratios × p
    assert set(train.model) == {"relu", "linear"}
    assert (train.loss > 0).all() and train.steps.le(60).all()
    rug = pd.read_parquet(repo / "data/persian_rug/rug.parquet")
    assert len(rug) == 2 * 2
    assert len(pd.read_parquet(repo / "data/persian_rug/theory.parquet")) == 2 * 5


def test_same_params_give_byte_identical_data_and_figures(smoke_repo, pipeline_copy,
                                                           load_profile, run_stages, tmp_path,
                                                           file_hashes):
    # every stage again on a fresh copy with the same params, all in this one process (through
    # stages/run.py, as dvc.yaml's commands name it): the bytes of `dvc repro`'s processes
    repo, _ = smoke_repo
    again = tmp_path / "again"
    again.mkdir()
    pipeline_copy(again, load_profile("smoke"))
    run_stages(again)
    first, second = file_hashes(repo), file_hashes(again)
    assert len(first) > 20 and first.keys() == second.keys()
    for paper in PAPERS:                      # the data and the figures of every paper
        for d in (f"data/{paper}/", f"reports/figures/{paper}/"):
            assert any(k.startswith(d) for k in first), d
    assert [k for k in first if first[k] != second[k]] == []


def test_the_reports_name_no_path_of_the_checkout(smoke_repo):
    # a warning a report's cell prints names the file it came from: the bytes of the report
    # would then depend on where the repository lies
    repo, _ = smoke_repo
    reports = sorted((repo / "reports").glob("*.html")) + sorted((repo / "reports").glob("*.ipynb"))
    assert len(reports) >= 7
    assert [r.name for r in reports if str(repo) in r.read_text()] == []


def test_no_stage_writes_outside_its_declared_outs(smoke_repo, smoke_hashes):
    repo, _ = smoke_repo
    with Repo(str(repo)) as dvc:                        # every stage, matrix entries expanded
        stages = list(dvc.index.stages)
        outs = [Path(o.fs_path).relative_to(repo) for st in stages for o in st.outs]
    assert len(stages) >= 18
    assert [o for o in outs if not (repo / o).exists()] == []   # each stage wrote its outs
    before, after = smoke_hashes                        # around the fixture's `dvc repro`
    written = [f for f in after if before.get(f) != after[f]
               and not f.startswith(".dvc/")
               and f not in ("dvc.lock", str(stage.LOG_FILE), str(stage.RECORDS_FILE))]
    assert len(written) > 30
    outside = [f for f in written if not any(Path(f) == o or o in Path(f).parents for o in outs)]
    assert outside == []
    assert [f for f in before if f not in after] == []          # nothing of the copy deleted
    log = (repo / stage.LOG_FILE).read_text()
    assert all(f"{st.name}: done in " in log for st in stages)     # each stage's time
    timed = {name for name, _, _ in repro.stage_times(repro.read_records(
        repo / stage.RECORDS_FILE))}
    assert timed == {st.name for st in stages}                  # and its record


def _dvc(repo: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    run = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run


def test_site_shows_every_claim_with_links_and_metrics(smoke_repo):
    repo, env = smoke_repo
    html = (repo / "reports/index.html").read_text()
    stages = set(_dvc(repo, env, "dag", "--mermaid").stdout.split('"')[1::2])
    metrics = json.loads((repo / "reports/claims.json").read_text())
    assert sorted(metrics) == PAPERS
    for paper in PAPERS:
        assert f'href="{paper}.html"' in html
        data = json.loads((repo / f"reports/claims/{paper}.json").read_text())
        assert len(data["claims"]) >= 5 and metrics[paper]["claims_total"] == len(data["claims"])
        for row in data["claims"]:
            assert tex.html_with_math(row["claim"]) in html                # maths as MathML
            assert site.brief(row["ours"]) in html          # long: a sentence, then "more"
            assert row["verdict"] in claim_rows.VERDICTS
            assert row["scale"] and row["paper_scale"]                 # every row its scale
            assert row["figure"] is None or (repo / row["figure"]).is_file()
            assert set(row["stages"]) <= stages | {s.split("@")[0] for s in stages}
    # the fig. 3 diagonal: the metric against the trained model's table
    f3 = pd.read_parquet(repo / "data/persian_rug/fig3.parquet")
    values = json.loads((repo / "reports/claim_values.json").read_text())
    diag = values["persian_rug"]["fig3.diagonal"]
    assert diag["value"] == pytest.approx(f3.diag_mean.mean(), abs=5e-4)
    assert diag["uncertainty"] == pytest.approx(f3.diag_std.mean(), abs=5e-4)
    for erratum in errata.every():
        assert tex.html_with_math(erratum.printed) in html
    assert "flowchart TD" in html and "<svg" in html and "pr_train@16" in html
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", html)   # nothing remote


def test_claim_ids_are_the_same_under_every_profile(smoke_repo):
    """The value keys are the registries' ids: the smoke run's equal the committed default run's
    (reports/claim_values.json), and any profile's, since the export refuses rows that differ."""
    repo, _ = smoke_repo
    smoke = json.loads((repo / "reports/claim_values.json").read_text())
    default = json.loads((ROOT / "reports/claim_values.json").read_text())
    for paper, registry in REGISTRIES.items():
        assert set(smoke[paper]) == set(default[paper]) == set(registry)


def test_the_summary_counts_empirical_claims_apart_from_the_mathematics(smoke_repo):
    repo, _ = smoke_repo
    html = (repo / "reports/index.html").read_text()
    for paper, registry in REGISTRIES.items():
        rows = json.loads((repo / f"reports/claims/{paper}.json").read_text())["claims"]
        sanity = [r for r in rows if registry[r["id"]].kind == "sanity check"]
        assert all(r["verdict"] in ("sanity check", "not reproduced", "not computed")
                   and r["basis"] == "mathematics" for r in sanity)
        empirical = sum(r["basis"] == "empirical" for r in rows)
        item = html[html.index(f'href="{paper}.html"'):].split("</li>")[0]
        assert f"{empirical} empirical claims: " in item
        assert f"{len(rows) - empirical} checks of its mathematics: " in item


def test_second_repro_reruns_nothing_and_keeps_the_lock(smoke_repo):
    repo, env = smoke_repo
    lock = (repo / "dvc.lock").read_bytes()
    run = _dvc(repo, env, "repro")
    assert "Running stage" not in run.stdout
    assert (repo / "dvc.lock").read_bytes() == lock
    assert "up to date" in _dvc(repo, env, "status").stdout


@pytest.mark.parametrize("key, value, expected", [
    # validate tracks every key (its output the same bytes: it reruns nothing after it)
    ("relu.max_steps", 31, {"validate", "notes_relu", "site"}),
    ("scale_min", 0.3, {"validate", "notes_linear", "notes_saddle", "notes_flows", "notes_report",
                        "site"}),
])
def test_editing_one_experiment_touches_only_its_stages_and_the_site(smoke_repo, tmp_path, key,
                                                                      value, expected):
    repo, env = smoke_repo
    work = tmp_path / "edit"
    shutil.copytree(repo, work, symlinks=True)
    params = yaml.safe_load((work / "params.yaml").read_text())
    *parents, last = key.split(".")
    node = params["autoencoding_notes"]
    for part in parents:
        node = node[part]
    node[last] = value
    (work / "params.yaml").write_text(yaml.safe_dump(params))
    status = json.loads(_dvc(work, env, "status", "--json").stdout)
    assert set(status) == expected


def test_dvc_reads_the_claims_as_metrics_and_the_curves_as_plots(smoke_repo, tmp_path):
    repo, env = smoke_repo
    shown = json.loads(_dvc(repo, env, "metrics", "show", "--json").stdout)
    values = shown[""]["data"]["reports/claims.json"]["data"]
    assert values["persian_rug"]["claims_total"] > 0
    assert "reports/claim_values.json" not in shown[""]["data"]       # not a column of exp show
    one = json.loads(_dvc(repo, env, "metrics", "show", "--json",
                          "reports/claim_values.json").stdout)
    row = next(r for r in json.loads((repo / "reports/claims/persian_rug.json").read_text())[
        "claims"] if r["id"] == "fig3.diagonal")
    assert one[""]["data"]["reports/claim_values.json"]["data"]["persian_rug"][
        "fig3.diagonal"]["verdict"] == claim_rows.label(row)          # with its direction
    out = tmp_path / "plots"
    _dvc(repo, env, "plots", "show", "-o", str(out))
    page = (out / "index.html").read_text()
    for title in ("Persian Rug fig. 2", "polysemantic neurons against m",
                  "mean fourth norm against step"):
        assert title in page
    assert "theory p=0.1" in page and "bipolar" in page and "random unit vector" in page
    fig2 = pd.read_csv(repo / "reports/plots/pr_fig2_loss.csv")
    theory = pd.read_parquet(repo / "data/persian_rug/theory.parquet")
    th = fig2[fig2.series == "theory p=0.5"].sort_values("ratio")
    ref = theory[np.isclose(theory.p, 0.5)].sort_values("ratio")
    assert np.allclose(th.relative_loss, ref.loss / (0.5 / 3))
    col = pd.read_csv(repo / "reports/plots/ip_collisions.csv")
    raw = pd.read_parquet(repo / "data/incidental_polysemanticity/collisions.parquet")
    assert np.allclose(col.polysemantic, raw.groupby("m").polysemantic.mean().to_numpy())


GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


def _git_checkout(repo: Path, work: Path, env: dict) -> None:
    """``work``: a copy of the pipeline run in ``repo``, committed to a new git repository, with
    DVC's git support on (as in a clone of the project)."""
    shutil.copytree(repo, work, symlinks=True)
    (work / ".gitignore").write_text("/data/\n/reports/*.html\n/reports/*.ipynb\n"
                                     "/reports/figures/\n/reports/claims/\n/logs/\n")
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    _dvc(work, env, "config", "core.no_scm", "false")
    subprocess.run(GIT + ["add", "-A"], cwd=work, check=True)
    subprocess.run(GIT + ["commit", "-q", "-m", "smoke"], cwd=work, check=True)


def test_metrics_diff_and_exp_show_in_a_git_checkout(smoke_repo, tmp_path):
    repo, env = smoke_repo
    work = tmp_path / "git"
    _git_checkout(repo, work, env)
    claims = json.loads((work / "reports/claims.json").read_text())
    claims["persian_rug"]["empirical"]["reproduced"] += 1
    (work / "reports/claims.json").write_text(json.dumps(claims))
    values = json.loads((work / "reports/claim_values.json").read_text())
    values["persian_rug"]["fig3.diagonal"]["value"] += 1.0
    (work / "reports/claim_values.json").write_text(json.dumps(values))
    diff = json.loads(_dvc(work, env, "metrics", "diff", "--json").stdout)
    assert diff["reports/claims.json"]["persian_rug.empirical.reproduced"]["diff"] == 1
    one = json.loads(_dvc(work, env, "metrics", "diff", "HEAD", "--json", "--targets",
                          "reports/claim_values.json").stdout)
    assert one["reports/claim_values.json"]["persian_rug.fig3.diagonal.value"][
        "diff"] == pytest.approx(1.0)
    shown = _dvc(work, env, "exp", "show", "--json").stdout
    assert "persian_rug" in shown and "claims_total" in shown
    curve = work / "reports/plots/ip_collisions.csv"
    col = pd.read_csv(curve)
    col["polysemantic"] += 1
    col.to_csv(curve, index=False)
    out = tmp_path / "plots_diff"
    _dvc(work, env, "plots", "diff", "HEAD", "-o", str(out))
    page = (out / "index.html").read_text()
    assert "polysemantic neurons against m" in page and '"rev": "HEAD"' in page


def test_pages_load_in_headless_chromium_without_errors(smoke_repo):
    repo, _ = smoke_repo
    if None in browser.executables():
        pytest.skip(browser.MISSING)
    pages = [repo / "reports/index.html"] + [repo / f"reports/{p}.html" for p in PAPERS]
    with browser.chromium() as driver:
        assert [p for page in pages for p in browser.problems(driver, page)] == []
        at = browser.layout(driver, pages[0], 1280, 800)      # a laptop's window
        shot = browser.screenshot(driver, pages[0], repo / "reports/index.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    assert at["overflow"] == 0                                # no horizontal scroll
    assert at["anchor_top"] is not None and at["anchor_top"] < 800   # the answer above the fold


def test_figures_carry_no_timestamp_or_software_metadata(smoke_repo):
    repo, _ = smoke_repo
    pngs = sorted((repo / "reports/figures").rglob("*.png"))
    assert len(pngs) >= 15
    for png in pngs:
        data, i, chunks = png.read_bytes(), 8, set()
        while i < len(data):
            n = int.from_bytes(data[i:i + 4], "big")
            chunks.add(data[i + 4:i + 8].decode())
            i += 12 + n
        assert chunks <= {"IHDR", "IDAT", "IEND", "pHYs"}, (png, chunks)   # no tEXt/tIME
    for svg in sorted((repo / "reports/figures").rglob("*.svg")):
        meta = svg.read_text().split("</metadata>")[0]
        assert "<dc:date>" not in meta and "<dc:creator>" not in meta, svg


def test_verify_finds_a_byte_changed_in_place_that_dvc_status_misses(smoke_repo, tmp_path,
                                                                    capsys, monkeypatch):
    repo, env = smoke_repo
    work = tmp_path / "verify"
    shutil.copytree(repo, work, symlinks=True)
    assert verify.changed_outputs(str(work)) == {}
    assert "up to date" in _dvc(work, env, "status").stdout     # DVC records sizes and times
    out = work / "data/persian_rug/theory.parquet"
    st = out.stat()
    data = bytearray(out.read_bytes())
    data[len(data) // 2] ^= 0x01
    out.write_bytes(bytes(data))                                # in place: the same inode
    os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))         # size and time as recorded
    assert "pr_theory" not in json.loads(_dvc(work, env, "status", "--json").stdout)
    assert verify.changed_outputs(str(work)) == {"data/persian_rug/theory.parquet": "modified"}
    (work / "data/persian_rug/rug.parquet").unlink()
    monkeypatch.chdir(work)
    assert verify.main([]) == 1
    said = capsys.readouterr().out.splitlines()
    assert said == ["data/persian_rug/rug.parquet: missing: `dvc checkout` restores it from the "
                    "cache, or `make repro` rebuilds it",
                    "data/persian_rug/theory.parquet: modified (its content is not what dvc.lock "
                    "records): `make verify REPAIR=1` drops a damaged cache copy and restores or "
                    "rebuilds it"]


def test_verify_says_when_it_cannot_check(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)                                 # no DVC repository here
    assert verify.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("verify: cannot check the outputs: ") and "Traceback" not in err


def test_what_a_killed_write_leaves_is_never_hashed_and_goes_with_the_next_write(
        smoke_repo, tmp_path):
    repo, env = smoke_repo
    work = tmp_path / "litter"
    shutil.copytree(repo, work, symlinks=True)
    lock = (work / "dvc.lock").read_bytes()
    train = work / "data/persian_rug/train"
    litter = [train / ".n16_weights.k1ll3d.tmp", train / ".n16.parquet.tmp.k1ll3d.parquet"]
    litter[0].mkdir()
    (litter[0] / "W_in.npy").write_bytes(b"half written")
    litter[1].write_bytes(b"half written")
    assert "up to date" in _dvc(work, env, "status").stdout      # pr_scaling, pr_report too
    _dvc(work, env, "repro", "-f", "pr_train@16")
    assert not any(p.exists() for p in litter)
    assert (work / "dvc.lock").read_bytes() == lock


def test_an_experiment_applied_after_the_baseline_leaves_nothing_to_rerun(smoke_repo, tmp_path):
    # up to the notes' claims: the report and the site after them are stages like these
    repo, env = smoke_repo
    work = tmp_path / "exp"
    _git_checkout(repo, work, env)
    claims = work / "reports/claims/autoencoding_notes.json"
    baseline = claims.read_bytes()
    _dvc(work, env, "exp", "run", "-n", "short", "-S", "autoencoding_notes.relu.max_steps=31",
         "notes_claims")
    changed = claims.read_bytes()
    assert changed != baseline
    subprocess.run(["git", "checkout", "--", "."], cwd=work, check=True)
    _dvc(work, env, "checkout")                       # the baseline
    assert claims.read_bytes() == baseline
    assert "up to date" in _dvc(work, env, "status").stdout
    _dvc(work, env, "exp", "apply", "short")
    assert claims.read_bytes() == changed
    assert "up to date" in _dvc(work, env, "status", "notes_claims").stdout
    again = _dvc(work, env, "repro", "notes_claims")
    assert "Running stage" not in again.stdout and "notes_relu" in again.stdout


def _wrapper(work: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    """``python -m tms.pipeline.repro`` (what `make repro` runs) in ``work``."""
    return subprocess.run([sys.executable, "-m", "tms.pipeline.repro", *args], cwd=work, env=env,
                          capture_output=True, text=True)


def test_make_repro_times_the_stages_and_names_the_page_to_open(smoke_repo, tmp_path):
    repo, env = smoke_repo
    work = tmp_path / "wrapped"
    shutil.copytree(repo, work, symlinks=True)
    path = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                           if Path(p) != Path(sys.executable).parent)   # not activated
    run = _wrapper(work, {**env, "PATH": path}, "--force", "pr_theory")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Running stage 'pr_theory'" in run.stdout and "dvc push" not in run.stdout
    assert re.search(r"^  pr_theory +[0-9.]+ s$", run.stdout, re.M)
    assert run.stdout.rstrip().endswith("results: open reports/index.html (links to every "
                                        "report and claim)")


def test_make_repro_refuses_a_bad_value_before_dvc_deletes_anything(smoke_repo, tmp_path,
                                                                   file_hashes):
    repo, env = smoke_repo
    work = tmp_path / "bad"
    shutil.copytree(repo, work, symlinks=True)
    params = yaml.safe_load((work / "params.yaml").read_text())
    params["persian_rug"]["rug"]["n_s"] = 1000
    (work / "params.yaml").write_text(yaml.safe_dump(params))
    before = file_hashes(work, "data", "reports")
    run = _wrapper(work, env)
    assert run.returncode == 2 and "persian_rug.rug.n_s = 1000" in run.stderr
    assert "Running stage" not in run.stdout
    assert file_hashes(work, "data", "reports") == before
