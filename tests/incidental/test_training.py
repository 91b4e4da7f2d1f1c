"""The trained experiments of *Incidental polysemanticity* built from their params sections
(tms.incidental.training)."""

from tms.incidental import stats, training
from tms.pipeline import params


def test_fig6_without_a_stuck_encoding_gives_an_empty_table(load_profile):
    cfg = params.SECTION.parse(load_profile("smoke")).incidental_polysemanticity.single
    stuck, arrays = training.single(cfg.model_copy(update={"stuck_below": 1e-6}))
    assert len(stuck) == 0 and list(stuck.columns) == list(stats.STUCK_COLUMNS)
    assert arrays["diverged"].tolist() == [False] * cfg.candidates
