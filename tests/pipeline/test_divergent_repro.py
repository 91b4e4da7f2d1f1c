"""End to end: the smoke profile with learning rates that make models diverge in every paper.
Every report still builds, says which models diverged and what it could not draw, and its
claims without models read 'not computed'.

And the other way: a model whose first minibatch has no active feature (loss exactly 0) is not
flagged as diverged by the later minibatches that have one; the divergence bound is
diverge_factor times the larger of the first loss and the zero output's
(tms.engine.train.loss_scale), not times a first loss of 0."""

import json
import runpy

import numpy as np
import pandas as pd
import pytest

from tms.core import papers
from tms.notes import artefacts, params, training

PAPERS = papers.KEYS


@pytest.fixture(scope="module")
def diverged_repo(tmp_path_factory, pipeline_copy, load_profile, run_stages):
    raw = load_profile("smoke")
    raw["persian_rug"]["train"]["lr"] = 3.0             # every grid model and the fig. 3 model
    ip = raw["incidental_polysemanticity"]
    for section in ("collisions", "noise", "sweep", "single"):    # figs. 3–6
        ip[section]["optimizer"]["lr"] = 1e30
    for section in ("linear", "relu"):
        raw["autoencoding_notes"][section]["train"]["lr"] = 1e30
    repo = tmp_path_factory.mktemp("diverged")
    pipeline_copy(repo, raw)
    run_stages(repo)                                # every stage, in this process
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


def test_a_first_minibatch_loss_of_zero_is_not_divergence(tmp_path, root, pipeline_copy,
                                                          load_profile, dvc_repro, monkeypatch):
    # notes_linear, the cheapest trained stage: bias-free linear models, so a minibatch with no
    # active feature has loss exactly 0; at p = 1e-4 (S = 0.9999), 64 × 6 draws, most first
    # minibatches have none, and the later ones some
    raw = load_profile("smoke")
    raw["autoencoding_notes"]["linear"].update(S=[0.9999], steps=[200])
    repo = tmp_path / "repo"
    repo.mkdir()
    dvc_repro(repo, pipeline_copy(repo, raw), "notes_linear")
    table = pd.read_parquet(repo / artefacts.LINEAR)
    assert len(table) == 4                          # d × S × spectra × step caps
    assert not table.diverged.any(), table[table.diverged]

    # the same training in this process (the stage's own main, same params), its minibatch
    # losses recorded: the stage's table again, with models whose first loss is 0 and a later
    # one positive, which a bound of diverge_factor × first loss would flag
    trained = []

    def recording(*args, **kwargs):
        trained.extend(results := train_grid(*args, **kwargs))
        return results

    train_grid = training.train_grid
    monkeypatch.setattr(training, "train_grid", recording)
    monkeypatch.delenv("TMS_DEVICE", raising=False)
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(root / "stages/notes/notes_linear.py"))["main"](
        params.SECTION.parse(raw))
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / artefacts.LINEAR), table)
    assert len(trained) == len(table)
    assert any(r.train_losses[0] == 0 and r.train_losses.max() > 0 for r in trained)
