"""The statistics of an n_s ladder (tms.persian_rug.ladder), against values computed by hand."""

import numpy as np
import pandas as pd
import pytest

from tms.persian_rug import cells, ladder, symmetry_claims


def _cells(values_by_n_s):
    """Values indexed (n_s, ratio_target, p): per n_s, one value per cell (ratio, p) in the order
    (0.1, 0.05), (0.2, 0.05), (0.3, 0.05)."""
    idx = pd.MultiIndex.from_product([sorted(values_by_n_s), (0.1, 0.2, 0.3), (0.05,)],
                                     names=cells.CELL_KEYS)
    return pd.Series(np.concatenate([values_by_n_s[n] for n in sorted(values_by_n_s)]), index=idx)


def test_falling_gives_the_medians_the_share_lower_and_the_slope_of_the_medians():
    cells = _cells({128: [4.0, 2.0, 1.0], 512: [1.0, 3.0, 0.5]})
    medians, share, both, slope = ladder.falling(cells)
    assert medians.to_dict() == {128: 2.0, 512: 1.0}
    assert (share, both) == (pytest.approx(2 / 3), 3)            # 4 → 1 and 1 → 0.5 fall
    assert slope == pytest.approx(np.log(1.0 / 2.0) / np.log(4.0))     # −0.5
    one = ladder.falling(_cells({128: [1.0, 2.0, 3.0]}))
    assert np.isnan(one[1]) and one[2] == 0 and np.isnan(one[3])      # one n_s: nothing falls


def test_ladder_slope_reads_a_power_law_per_cell():
    # cell k: c_k · n_s^(−k/2), k = 1, 2, 3: slopes −0.5, −1, −1.5, median −1
    n = np.array([128.0, 256.0, 1024.0])
    cells = _cells({int(v): [3.0 * v ** -0.5, 2.0 * v ** -1.0, 1.0 * v ** -1.5] for v in n})
    slope, lo, hi, k = ladder.ladder_slope(cells)
    assert k == 3 and slope == pytest.approx(-1.0)
    # a resampled median is −1.5 (or −0.5) with probability 7/27, far above 2.5%
    assert (lo, hi) == pytest.approx((-1.5, -0.5))
    # a non-positive value leaves its cell out of the log fit (two n_s left), not the fit
    hole = cells.copy()
    hole[(1024, 0.3, 0.05)] = 0.0
    assert ladder.ladder_slope(hole)[3] == 3


def test_median_interval_of_equal_values_is_that_value():
    assert ladder.median_interval([0.7] * 5) == pytest.approx((0.7, 0.7, 0.7))
    # a resampled median of five is the smallest (or the largest) value with probability
    # P(at least 3 of 5 draws of 1/5) = 0.058 > 2.5%: the interval is the two extremes
    assert ladder.median_interval([1.0, 2.0, 3.0, 4.0, 100.0]) == (3.0, 1.0, 100.0)
    # nine values: P(resampled median ≤ 2) = P(at least 5 of 9 draws of 2/9) = 3.0% > 2.5%,
    # P(≤ 1) = 0.14% < 2.5%, so the interval is [2, 8]; an outlier for the largest changes nothing
    nine = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    assert ladder.median_interval(nine) == (5.0, 2.0, 8.0)
    assert ladder.median_interval(nine[:-1] + [1000.0]) == (5.0, 2.0, 8.0)


def test_ladder_reach_carries_each_cells_line_to_the_paper_n_s():
    # per cell a + b·ln(n_s/128): at 8192 its line reaches a + b·ln 64
    idx = pd.MultiIndex.from_product([(128, 256, 512, 1024), (0.1, 0.2), (0.05,)],
                                     names=cells.CELL_KEYS)
    x = np.log(idx.get_level_values("n_s").to_numpy(float) / 128)
    first = idx.get_level_values("ratio_target") == 0.1
    lines = pd.Series(np.where(first, 0.2 - 0.01 * x, 0.1 + 0.02 * x), index=idx)
    at = [0.2 - 0.01 * np.log(64), 0.1 + 0.02 * np.log(64)]
    reach, lo, hi, k = ladder.ladder_reach(lines, 8192)
    assert k == 2 and reach == pytest.approx(np.mean(at))         # the median of two cells
    assert (lo, hi) == pytest.approx((min(at), max(at)))
    assert ladder.ladder_slope(lines.where(first).dropna(), log=False)[0] == pytest.approx(-0.01)
    # floored per cell, before the median: a line below the floor counts at it
    falls = pd.Series(np.where(first, 0.2 - 0.1 * x, 0.1 + 0.02 * x), index=idx)
    assert ladder.ladder_reach(falls, 8192, floor=0.0)[0] == pytest.approx(at[1] / 2)
    assert np.isnan(ladder.ladder_reach(lines.xs(128, level="n_s", drop_level=False), 8192)[0])


def _reads_falls(mu, tau, draws=400, cells=30, seed=0, below=0.0):
    """The share of ``draws`` synthetic ladders that the figs. 4–7 rows' test (the bootstrap 95%
    interval of the median per-cell slope wholly below ``below``: 0 in symmetry_claims._falls,
    the untrained weights' slope in finding.faster_than_untrained) reads as falling: ``cells``
    cells (the ladder-settled snapshot's 30 converged cells) at n_s 128 to 1024, each a power
    law of slope ~ N(mu, tau) with 10% scatter per point."""
    rng, n_s = np.random.default_rng(seed), np.array([128, 256, 512, 1024])
    index = pd.MultiIndex.from_tuples([(n, c, 0.1) for c in range(cells) for n in n_s],
                                      names=["n_s", "ratio_target", "p"])
    falls = 0
    for _ in range(draws):
        slope, level = rng.normal(mu, tau, cells), rng.normal(-3.0, 1.0, cells)
        logs = level[:, None] + slope[:, None] * np.log(n_s) + rng.normal(0, 0.1, (cells, 4))
        _, lo, hi, _ = ladder.ladder_slope(pd.Series(np.exp(logs).ravel(), index=index))
        falls += ladder.side(lo, hi, below) is True
    return falls / draws


@pytest.mark.calibration
@pytest.mark.parametrize("claim, mu, tau", [("sym.bias_var", -0.50, 0.3),
                                            ("sym.dvar_nu", -1.15, 1.2)])
def test_the_falls_test_passes_ladders_that_fall_and_fails_ladders_that_do_not(claim, mu, tau):
    """Calibration (docs/claims.md): ladders falling as the snapshot measured (median slope
    ``mu``; ``tau``, the spread of the cells' slopes its interval implies) read as falling at
    least 95% of the time; ladders that do not fall (median slope 0, the smallest break of
    "falls") at most 5% plus two binomial standard errors (the percentile bootstrap of a median
    of 30 cells covers less than its nominal 97.5% on one side)."""
    held, broken = _reads_falls(mu, tau), _reads_falls(0.0, tau, seed=1)
    print(f"{claim}: rejects {1 - held:.1%} of falling ladders, passes {broken:.1%} of flat ones")
    assert held >= 0.95
    assert broken <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 400)


@pytest.mark.calibration
@pytest.mark.parametrize("statistic, untrained, tau, faster", [
    ("Var b", -1.04, 0.3, 0.5), ("ΔVar(ν)", -1.00, 1.2, 1.2)])
def test_the_control_finds_training_faster_than_chance_and_not_where_it_is_not(
        statistic, untrained, tau, faster):
    """Calibration (docs/claims.md) of finding.faster_than_untrained, one of its statistics at a
    time (the finding needs all three): trained ladders falling ``faster`` per e-fold of n_s
    faster than untrained weights' slope (as measured), with the statistic's spread over cells
    (``tau``: Var b's 0.3, ΔVar(ν)'s 1.2, as the falls rows use), read as faster at least 95% of
    the time; ladders falling as fast as untrained weights', at most 5% plus two binomial
    standard errors. ``faster`` is the least difference found that often: ΔVar(ν)'s spread
    hides a difference of 0.5 half the time."""
    held = _reads_falls(untrained - faster, tau, below=untrained)
    broken = _reads_falls(untrained, tau, seed=1, below=untrained)
    print(f"finding.faster_than_untrained, {statistic}: misses {1 - held:.1%} of ladders "
          f"{faster} faster, finds {broken:.1%} of ladders as fast as chance")
    assert held >= 0.95
    assert broken <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 400)


def _reaches_uniformity(level, draws=400, cells=20, spread=0.02, seed=0):
    """The share of ``draws`` sets of ``cells`` cells at the largest n_s (the ladder-settled
    snapshot's 20) whose trained/untrained Λ, each ~ N(``level``, ``spread``), fig. 7's test
    reads as at the untrained level: the bootstrap 95% interval of their median
    (ladder.median_interval) below 1 + symmetry_claims.MAX_SPREAD."""
    rng = np.random.default_rng(seed)
    bound = 1 + symmetry_claims.MAX_SPREAD
    return np.mean([ladder.side(*ladder.median_interval(rng.normal(level, spread, cells))[1:],
                                bound) is True for _ in range(draws)])


@pytest.mark.calibration
def test_the_uniformity_test_passes_untrained_levels_and_fails_a_level_half_again_above():
    """Calibration (docs/claims.md) of sym.lyapunov's second half ('all models approach
    uniformity', read as trained Λ within 10% of untrained weights'): cells at the untrained
    level, each ± 2% (untrained Λ·√n_s varies 1–3% from cell to cell in ladder-settled), pass
    at least 95% of the time; cells at 1.15 (1.5× the 10%) at most 5%."""
    held, broken = _reaches_uniformity(1.0), _reaches_uniformity(1.15, seed=1)
    print(f"sym.lyapunov (uniformity): passes {held:.1%} of untrained levels, {broken:.1%} of "
          "levels at 1.15")
    assert held >= 0.95 and broken <= 0.05
