"""Footnote 6's race (incidental polysemanticity, sec. 2.1): is the largest weight at
initialisation "still the most likely to win the race all things considered"? Read from the
winners' ranks at init that ip_collisions records (tms.incidental.stats.winner_ranks), in the
words of the claim ``fig3.largest_wins`` (tms.incidental.claims): do the features won by ranks
1..R fall with rank, pooled over m and at each m?

Apart from tms.incidental.stats, which the training stages run: an edit here reruns only the
claims and the site.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

#: Footnote 6's "most likely to win", read as a fall of the wins with rank at init: one-sided at
#: half this level pooled over m (:func:`trend`), a rise at any m two-sided at this level with
#: Bonferroni over the m.
RACE_LEVEL = 0.05


def wins_by_m(collisions: pd.DataFrame) -> pd.DataFrame:
    """(m, R): the features won by ranks 1..R at init at each m, summed over the models of
    ``collisions`` (ip_collisions' table, its columns ``won_rank1`` … ``won_rankR``:
    tms.incidental.stats.winner_ranks); no columns where the table predates them."""
    ranks = [c for c in collisions if c.startswith("won_rank")]
    return collisions.groupby("m")[ranks].sum()


@functools.lru_cache(maxsize=64)
def rank_sum_pmf(total: int, ranks: int) -> np.ndarray:
    """(total·(ranks − 1) + 1,) P(S = total + j), j = 0, 1, …: the exact distribution of the
    sum S of the ranks of ``total`` wins when each win's rank is uniform on 1..``ranks`` and
    independent of the others: the race with no advantage from size, given the number of wins
    (a multinomial's conditional null). By repeated convolution, in float64, so its tails keep
    their relative precision (every term is a sum of positive numbers) down to float64's
    smallest, about 1e-308, below which they are 0. Cached, so read-only. Raises ValueError for
    ``ranks`` < 1 or ``total`` < 0."""
    if ranks < 1 or total < 0:
        raise ValueError(f"rank_sum_pmf needs ranks ≥ 1 and total ≥ 0, not {ranks}, {total}")
    pmf, step = np.ones(1), np.full(ranks, 1.0 / ranks)
    for _ in range(total):
        pmf = np.convolve(pmf, step)
    pmf.flags.writeable = False
    return pmf


def trend(wins: np.ndarray, level: float, m_count: int = 1) -> dict:
    """Do the wins fall with rank at init? ``wins``: (R,) the features won by ranks 1..R,
    R ≥ 2 (one m's, or several m's summed). The exact conditional test of the sum of the wins'
    ranks given their number (:func:`rank_sum_pmf`; the score test of a log-linear trend in
    rank, Cochran–Armitage's for a multinomial): ``p_fall`` = P(S ≤ s), ``p_rise`` = P(S ≥ s),
    1.0 each with no wins. ``verdict``: 'falls' or 'rises' where that side's p-value is below
    ``level``/(2·``m_count``) (both sides, Bonferroni over ``m_count`` m), else None.
    ``mean_rank``: the wins' mean rank (NaN with none; (R + 1)/2 is no trend); ``breaks``: the
    lowest mean rank that would not read as a fall (None with no wins). Raises ValueError for
    R < 2."""
    wins = np.asarray(wins, dtype=int)
    if len(wins) < 2:
        raise ValueError(f"a trend in rank needs at least 2 ranks, not {len(wins)}")
    total, ranks = int(wins.sum()), len(wins)
    if not total:
        return {"total": 0, "mean_rank": float("nan"), "p_fall": 1.0, "p_rise": 1.0,
                "verdict": None, "breaks": None}
    s = int(wins @ np.arange(1, ranks + 1)) - total           # S − total, the pmf's index
    pmf, alpha = rank_sum_pmf(total, ranks), level / (2 * m_count)
    below = np.cumsum(pmf)
    p_fall, p_rise = min(1.0, float(below[s])), min(1.0, float(pmf[s:].sum()))
    verdict = "falls" if p_fall < alpha else "rises" if p_rise < alpha else None
    first = int(np.searchsorted(below, alpha))                # the first sum not read as a fall
    return {"total": total, "mean_rank": (s + total) / total, "p_fall": p_fall,
            "p_rise": p_rise, "verdict": verdict, "breaks": (first + total) / total}


def trend_words(race: dict) -> str:
    """One m's or the pooled :func:`trend`, in words."""
    if not race["total"]:
        return "no wins"
    said = {"falls": f"falls (p {race['p_fall']:.2g})", "rises": f"rises (p {race['p_rise']:.2g})"}
    return (f"mean rank {race['mean_rank']:.2f} of {race['total']} wins, " + said.get(
        race["verdict"], f"no trend decided (p {race['p_fall']:.2g} falling, "
                         f"{race['p_rise']:.2g} rising)"))
