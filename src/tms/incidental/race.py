"""Footnote 6's race (incidental polysemanticity, sec. 2.1): is the largest weight at
initialisation "still the most likely to win the race"? Read from the winners' ranks at init
that ip_collisions records (tms.incidental.stats.winner_ranks, plurality), in the words of the
claim ``fig3.largest_wins`` (tms.incidental.claims): who leads at one m, and, where no one does,
how many models per m would decide it.

Apart from tms.incidental.stats, which the training stages run: an edit here reruns only the
claims and the site.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tms.incidental import stats

#: Footnote 6's "most likely to win", a plurality at each m: rank 1 at init wins more features than
#: each next rank recorded, by a one-sided binomial test at this level (stats.plurality).
RACE_LEVEL = 0.05
#: The most times the models an undecided race's projection tries (:func:`times_to_decide`).
RACE_MOST_TIMES = 64


def wins_by_m(collisions: pd.DataFrame) -> pd.DataFrame:
    """(m, R): the features won by ranks 1..R at init at each m, summed over the models of
    ``collisions`` (ip_collisions' table, its columns ``won_rank1`` … ``won_rankR``:
    tms.incidental.stats.winner_ranks); no columns where the table predates them."""
    ranks = [c for c in collisions if c.startswith("won_rank")]
    return collisions.groupby("m")[ranks].sum()


def lead_words(race: dict) -> str:
    """Who leads footnote 6's race at one m (tms.incidental.stats.plurality), in words."""
    return {"holds": f"rank 1 ahead (p {race['p_lead']:.2g})",
            "fails": f"rank {race['rank']} ahead (p {race['p_behind']:.2g})"}.get(
        race["verdict"], f"undecided (p {race['p_lead']:.2g} and {race['p_behind']:.2g})")


def times_to_decide(wins: np.ndarray, level: float, m_count: int = 1,
                    most: int = RACE_MOST_TIMES) -> int | None:
    """How many times the models footnote 6's race at one m needs to be decided, if every rank
    kept the share of the wins it has: the least power of 2, at most ``most``, whose multiple of
    ``wins`` ((R,) features won by ranks 1..R, R ≥ 2, as tms.incidental.stats.plurality) gets a
    verdict from that test with its Bonferroni over ``m_count`` m (1: decided as measured);
    None where even ``most`` times does not (e.g. a tie). A projection of the measured shares,
    not a power calculation. Raises what stats.plurality raises (R < 2)."""
    wins, k = np.asarray(wins, dtype=int), 1
    while k <= most:
        if stats.plurality(wins * k, level, m_count)["verdict"] is not None:
            return k
        k *= 2
    return None


def models_to_decide(wins: pd.DataFrame, models: pd.Series, open_m: list[int]) -> str:
    """'; with each rank's share … (16 here)': the models per m that would decide footnote 6's
    race at each m of ``open_m`` (:func:`times_to_decide`, Bonferroni over every m of ``wins``).
    ``wins``: (m, R) the features won by ranks 1..R at each m, as the claim's race reads them;
    ``models``: the models trained at each m."""
    needs = []
    for m in open_m:
        k = times_to_decide(wins.loc[m].to_numpy(), RACE_LEVEL, len(wins))
        needs.append(f"{k * models[m]}" if k else f"over {RACE_MOST_TIMES * models[m]}")
    here = "/".join(str(v) for v in sorted(set(models[open_m])))
    return (f"; with each rank's share of the wins as measured, {', '.join(needs)} models per m "
            f"would decide {'it' if len(open_m) == 1 else 'them'} ({here} here)")
