"""The trained experiments of *Incidental polysemanticity* built from their params sections
(tms.incidental.training)."""

import logging

from tms.core import progress
from tms.engine import checkpoint
from tms.incidental import stats, training
from tms.pipeline import params


def test_fig6_without_a_stuck_encoding_gives_an_empty_table(load_profile):
    cfg = params.SECTION.parse(load_profile("smoke")).incidental_polysemanticity.single
    stuck, arrays = training.single(cfg.model_copy(update={"stuck_below": 1e-6}))
    assert len(stuck) == 0 and list(stuck.columns) == list(stats.STUCK_COLUMNS)
    assert arrays["diverged"].tolist() == [False] * cfg.candidates


def test_fig3_resumes_each_m_from_its_checkpoint_with_the_same_table(load_profile, tmp_path,
                                                                     caplog):
    cfg = params.SECTION.parse(load_profile("smoke")).incidental_polysemanticity.collisions
    whole = training.collisions(cfg)
    ckpt = checkpoint.Checkpoints(tmp_path, 1)
    assert training.collisions(cfg, ckpt=ckpt).equals(whole)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"m{m}.pt" for m in cfg.m)
    kept = ckpt.load(f"m{cfg.m[1]}")                  # a run killed after m[1] resumes there:
    kept["rows"][0][4] = -1                           # what it kept is read, not retrained
    ckpt.save(f"m{cfg.m[1]}", kept)
    (tmp_path / f"m{cfg.m[2]}.pt").unlink()
    with caplog.at_level(logging.INFO, logger=progress.LOG.name):
        resumed = training.collisions(cfg, ckpt=ckpt)
    said = [r for r in caplog.records if getattr(r, "event", None) == progress.RESUMED]
    assert [r.step for r in said] == [len(cfg.m) - 1]     # one record: the stacks read back
    assert resumed.polysemantic.tolist() == [
        -1 if i == cfg.instances else v for i, v in enumerate(whole.polysemantic)]
    assert resumed.drop(columns="polysemantic").equals(whole.drop(columns="polysemantic"))
