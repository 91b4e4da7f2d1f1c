import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from tms.incidental import race


def test_the_rank_sum_distribution_is_every_assignment_of_ranks_counted():
    """Independent: enumerate the ranks of 4 wins over 3 ranks (81 equally likely)."""
    pmf = race.rank_sum_pmf(4, 3)
    sums = [sum(r) for r in itertools.product(range(1, 4), repeat=4)]
    assert pmf.tolist() == pytest.approx([sums.count(s) / 81 for s in range(4, 13)])
    assert race.rank_sum_pmf(0, 8).tolist() == [1.0]
    with pytest.raises(ValueError, match="ranks ≥ 1"):
        race.rank_sum_pmf(3, 0)


def test_the_trend_test_matches_a_normal_tail_with_many_wins_and_keeps_tiny_tails():
    # 1000 wins over 8 ranks, mean rank 4.3 against 4.5: the sum's sd is √(1000·63/12)
    wins = np.array([150, 140, 130, 125, 120, 115, 110, 110])
    r = race.trend(wins, 0.05)
    s = wins @ np.arange(1, 9)
    z = (s + 0.5 - 4500) / np.sqrt(1000 * 63 / 12)             # continuity-corrected
    assert r["p_fall"] == pytest.approx(norm.cdf(z), rel=0.05)
    assert r["verdict"] == "falls" and r["mean_rank"] == pytest.approx(s / 1000)
    steep = race.trend(np.array([300, 0, 0, 0, 0, 0, 0, 0]), 0.05)   # every win rank 1
    assert np.log(steep["p_fall"]) == pytest.approx(-300 * np.log(8), rel=1e-9)   # 8⁻³⁰⁰
    assert steep["p_rise"] == 1.0
    with pytest.raises(ValueError, match="read-only"):
        race.rank_sum_pmf(3, 2)[0] = 1.0                                  # cached: kept whole


def test_a_trend_rises_only_past_the_bonferroni_over_m_and_both_sides():
    # 3 wins, all at rank 8 of 8: P(S ≥ 24) = 8⁻³ ≈ 0.002, below 0.05/2 and 0.05/(2·5) = 0.005
    assert race.trend(np.array([0] * 7 + [3]), 0.05, m_count=5)["verdict"] == "rises"
    # 2 wins at rank 8: 8⁻² ≈ 0.016, below 0.025, above 0.005
    assert race.trend(np.array([0] * 7 + [2]), 0.05)["verdict"] == "rises"
    assert race.trend(np.array([0] * 7 + [2]), 0.05, m_count=5)["verdict"] is None
    none = race.trend(np.zeros(8, dtype=int), 0.05)
    assert (none["p_fall"], none["p_rise"], none["verdict"], none["breaks"]) == (1, 1, None, None)
    with pytest.raises(ValueError, match="at least 2 ranks"):
        race.trend(np.array([3]), 0.05)


def test_the_breaking_mean_rank_is_the_first_that_does_not_read_as_a_fall():
    # two ranks: 100 wins, k of them at rank 2, have the rank sum 100 + k
    k = round(race.trend(np.array([70, 30]), 0.05)["breaks"] * 100) - 100
    assert race.trend(np.array([100 - k, k]), 0.05)["verdict"] is None
    assert race.trend(np.array([101 - k, k - 1]), 0.05)["verdict"] == "falls"
    assert 30 < k < 50


def test_a_trend_reads_in_words():
    assert race.trend_words(race.trend(np.zeros(3, dtype=int), 0.05)) == "no wins"
    assert race.trend_words(race.trend(np.array([30, 10, 5]), 0.05)).startswith(
        "mean rank 1.44 of 45 wins, falls (p ")
    assert "no trend decided (p " in race.trend_words(race.trend(np.array([3, 3, 3]), 0.05))


def test_wins_are_summed_per_m_over_the_models():
    ranks = [f"won_rank{r}" for r in range(1, 4)]
    col = pd.DataFrame({"m": [32, 32, 64], ranks[0]: [3, 1, 0], ranks[1]: [0, 2, 4],
                        ranks[2]: [1, 1, 1]})
    wins = race.wins_by_m(col)
    assert wins.loc[32].tolist() == [4, 2, 2] and wins.loc[64].tolist() == [0, 4, 1]
    assert race.wins_by_m(col[["m"]]).shape == (2, 0)      # a table from before the ranks
