from math import comb

import numpy as np
import pandas as pd

from tms.incidental import race


def tail(k, n):                                       # P(X >= k), X ~ Binomial(n, 1/2)
    return sum(comb(n, j) for j in range(k, n + 1)) / 2 ** n


def test_a_race_reads_in_words_who_leads():
    def said(verdict):
        return race.lead_words({"verdict": verdict, "rank": 6, "p_lead": 0.69,
                                "p_behind": 0.004})
    assert said("holds") == "rank 1 ahead (p 0.69)"
    assert said("fails") == "rank 6 ahead (p 0.004)"
    assert said(None) == "undecided (p 0.69 and 0.004)"


def test_a_race_is_decided_by_the_least_power_of_2_of_the_models_that_decides_its_shares():
    assert race.times_to_decide(np.array([30, 5, 9, 2]), 0.05) == 1      # decided as measured
    assert tail(12, 18) > 0.05 > tail(24, 36)                             # 12 of 18, 24 of 36
    assert race.times_to_decide(np.array([12, 6, 4]), 0.05) == 2
    # rank 2 ahead: 6 of 6 is p 1/64, 12 of 12 1/4096, both times 2 ranks x 2 m
    assert 4 / 64 > 0.05 > 4 / 4096
    assert race.times_to_decide(np.array([0, 3, 1]), 0.05, m_count=2) == 4
    assert race.times_to_decide(np.array([6, 6, 1]), 0.05) is None       # a tie: never
    assert race.times_to_decide(np.array([12, 6, 4]), 0.05, most=1) is None
    assert race.times_to_decide(np.array([12, 6, 4]), 0.05, most=2) == 2   # most included


def test_each_undecided_m_says_its_own_models_per_m_with_the_rows_bonferroni():
    """Two models a m. m 32: a tie, never decided. m 64: rank 2 wins 8 of 8, p 1/256: 7 ranks
    × 2 m leave 0.055 (undecided), twice the models decide it (4 models; with one m's
    correction, 0.027, it would be decided as measured, 2)."""
    assert 14 / 256 > 0.05 > 7 / 256
    per_model = [[3, 3, 0, 0, 0, 0, 0, 0], [3, 3, 0, 0, 0, 0, 0, 0],
                 [0, 4, 0, 0, 0, 0, 0, 0], [0, 4, 0, 0, 0, 0, 0, 0]]
    ranks = [f"won_rank{r}" for r in range(1, 9)]
    col = pd.DataFrame({"m": [32, 32, 64, 64],
                        **{rank: [w[r] for w in per_model] for r, rank in enumerate(ranks)}})
    wins, models = race.wins_by_m(col), col.groupby("m").size()
    assert wins.loc[32].tolist() == [6, 6, 0, 0, 0, 0, 0, 0] and wins.loc[64, "won_rank2"] == 8
    assert race.wins_by_m(col[["m"]]).shape == (2, 0)      # a table from before the ranks
    assert race.models_to_decide(wins, models, [32, 64]) == (
        "; with each rank's share of the wins as measured, over 128, 4 models per m would "
        "decide them (2 here)")
