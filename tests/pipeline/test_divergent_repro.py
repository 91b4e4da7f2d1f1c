"""End to end: the smoke profile with learning rates that make models diverge in every paper.
Every report still builds, says which models diverged and what it could not draw, and its
claims without models read 'not computed'."""

import json

import numpy as np
import pandas as pd
import pytest

PAPERS = ["autoencoding_notes", "incidental_polysemanticity", "persian_rug"]


@pytest.fixture(scope="module")
def diverged_repo(tmp_path_factory, pipeline_copy, load_profile, dvc_repro):
    raw = load_profile("smoke")
    raw["persian_rug"]["train"]["lr"] = 3.0             # every grid model and the fig. 3 model
    ip = raw["incidental_polysemanticity"]
    for section in ("collisions", "noise", "sweep", "single"):    # figs. 3–6
        ip[section]["optimizer"]["lr"] = 1e30
    for section in ("linear", "relu"):
        raw["autoencoding_notes"][section]["train"]["lr"] = 1e30
    repo = tmp_path_factory.mktemp("diverged")
    dvc_repro(repo, pipeline_copy(repo, raw))
    return repo


@pytest.mark.parametrize("paper", PAPERS)
def test_a_report_builds_with_its_models_diverged_and_says_so(diverged_repo, paper):
    html = (diverged_repo / f"reports/{paper}.html").read_text()
    assert "Traceback" not in html and "Claims" in html
    assert "diverged</strong>" in html and "Not drawn:" in html
    claims = json.loads((diverged_repo / f"reports/claims/{paper}.json").read_text())["claims"]
    gone = [c for c in claims if c["verdict"] == "not computed"]
    assert gone and all(c["ours"].startswith("not computed: ") and c["value"] is None
                        for c in gone)
    assert any(c["verdict"] != "not computed" for c in claims)   # what needs no model stands


def test_the_site_counts_the_claims_that_could_not_be_computed(diverged_repo):
    metrics = json.loads((diverged_repo / "reports/claims.json").read_text())
    assert all(metrics[p]["empirical"]["not_computed"] > 0 for p in PAPERS)
    assert "not computed" in (diverged_repo / "reports/index.html").read_text()


def test_diverged_models_are_flagged_in_every_papers_tables(diverged_repo):
    data = diverged_repo / "data"
    for table in ["persian_rug/train/n16.parquet", "persian_rug/fig3.parquet",
                  "incidental_polysemanticity/collisions.parquet",
                  "incidental_polysemanticity/noise.parquet",
                  "incidental_polysemanticity/sweep.parquet",
                  "autoencoding_notes/linear.parquet", "autoencoding_notes/relu.parquet"]:
        assert pd.read_parquet(data / table).diverged.all(), table
    assert np.load(data / "incidental_polysemanticity/single/diverged.npy").all()
    assert len(pd.read_parquet(data / "incidental_polysemanticity/single_stuck.parquet")) == 0
