"""The anatomy's findings (tms.persian_rug.anatomy_claims): each on cells made to satisfy it, and
broken by the smallest change its test names."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tms.persian_rug import anatomy_claims, claims, theory

P = (0.02, 0.05, 0.08, 0.11, 0.14, 0.2, 0.4, 0.6)


def _cells(**change):
    """Cells of one n_s that beat the theory by 13%, the gain in their off part, Gaussianised at
    the theory, at p ≥ 0.17 on the construction, at small p more negative energy where they
    beat it more."""
    rows = []
    for p in P:
        for r in (0.25, 0.5):
            th = theory.optimal_symmetric(p, r)
            gain = 0.13 + 0.2 * p * (r - 0.25)
            off, on = (float(x) for x in theory.symmetric_loss_parts(
                th["a"], th["b"], p, np.sqrt(th["sigma2"])))
            loss = (1 - gain) * th["loss"]
            rows.append({"n_s": 1024, "ratio_target": r, "p": p, "loss": loss,
                         "loss_off": off - 0.7 * gain * th["loss"],
                         "loss_on": on - 0.3 * gain * th["loss"],
                         "gauss_loss": th["loss"] * 1.001, "theory_loss": th["loss"],
                         "theory_off": off, "theory_on": on, "paired_loss": loss * 1.03,
                         "negative_energy": 0.3 + gain, "skew": -2.0, "variance_ratio": 1.0,
                         "paired": 0.9, "dead_fraction": 0.3})
    cells = pd.DataFrame(rows)
    for column, value in change.items():
        cells[column] = value(cells) if callable(value) else value
    return cells


@pytest.fixture
def judge(monkeypatch):
    """judge(cells) → {id: Result} of the anatomy's findings on ``cells``."""
    def run(cells):
        monkeypatch.setattr(anatomy_claims, "regime_cells", lambda o: cells)
        o = SimpleNamespace(anatomy=pd.DataFrame({"n_s": [1024], "seed_index": [0]}), cells=cells)
        return {cid: claims.CLAIMS.result(cid, o) for cid in anatomy_claims.PART}
    return run


def test_each_finding_holds_on_cells_that_show_it(judge):
    got = judge(_cells())
    assert all(r.ok and r.not_computed is None for r in got.values())
    assert got["finding.gaussian_gap"].value == pytest.approx(1.001)
    assert got["finding.gain_off"].value == pytest.approx(0.7)
    assert got["finding.paired_large_p"].value == pytest.approx(1 - 1 / 1.03)
    assert got["finding.negative_skew"].value > 0.9                    # ties at ratio 0.25
    assert got["finding.negative_skew"].numbers["cells"] == 10        # p < 0.17


#: The smallest change each finding's test names, by finding.
BREAKS = {
    # a Gaussianised loss that keeps 3% of the gain
    "finding.gaussian_gap": {"gauss_loss": lambda c: 0.97 * c.theory_loss},
    # 60% of the gain while the feature is on
    "finding.gain_off": {"loss_off": lambda c: c.theory_off - 0.4 * (c.theory_loss - c.loss),
                         "loss_on": lambda c: c.theory_on - 0.6 * (c.theory_loss - c.loss)},
    # 15% off the construction
    "finding.paired_large_p": {"paired_loss": lambda c: c.loss * 1.15},
    # the negative energy falling where the gain grows
    "finding.negative_skew": {"negative_energy": lambda c: 1 - c.negative_energy},
}


@pytest.mark.parametrize("cid", BREAKS)
def test_each_finding_fails_by_the_smallest_change_its_test_names(judge, cid):
    assert not judge(_cells(**BREAKS[cid]))[cid].ok


#: A trained model's loss from seed to seed, relative: the 75th percentile over the default
#: snapshot's converged cells (the median is 0.37%).
SEED_SPREAD = 0.0074


def _found(judge, cid, change, draws=200, seed=0):
    """The share of ``draws`` draws of :func:`_cells` (with ``change``) that ``cid`` reads
    found, every loss of a cell (trained, its parts, Gaussianised) ± SEED_SPREAD apart."""
    rng, base = np.random.default_rng(seed), _cells(**change)
    losses = ["loss", "loss_off", "loss_on", "gauss_loss"]
    return np.mean([judge(base.assign(**{c: base[c] * (1 + rng.normal(0, SEED_SPREAD, len(base)))
                                         for c in losses}))[cid].ok for _ in range(draws)])


@pytest.mark.calibration
@pytest.mark.parametrize("cid", ["finding.gaussian_gap", "finding.gain_off",
                                 "finding.paired_large_p"])
def test_a_findings_test_finds_cells_that_show_it_and_not_cells_that_break_it(judge, cid):
    """Calibration (docs/claims.md): the fixture's 16 cells at n_s 1024, which show each finding
    (Gaussianised at 1.001× the theory, 70% of the gain while off, 3% from the construction),
    with each loss ± the measured seed spread, read found at least 95% of the time; broken by
    the smallest change the test names (0.97, 40%, 15%), at most 5%. (``finding.negative_skew``
    has its own, below: a rank correlation needs the cells' spread, not a single flip.)"""
    held, broken = _found(judge, cid, {}), _found(judge, cid, BREAKS[cid], seed=1)
    print(f"{cid}: found in {held:.1%} of the cells that show it, {broken:.1%} that break it")
    assert held >= 0.95 and broken <= 0.05


def test_a_finding_without_enough_cells_is_not_computed_and_says_why(judge):
    few = _cells()[lambda c: c.p >= 0.3]                    # 4 cells, all at p ≥ 0.17
    got = judge(few)
    assert got["finding.negative_skew"].not_computed.startswith("0 converged cells")
    assert got["finding.paired_large_p"].ok
    none = judge(_cells()[lambda c: c.p > 0.5])             # 2 cells
    assert "fewer than 3" in none["finding.gaussian_gap"].not_computed


def test_the_rows_say_the_numbers_their_results_hold(judge, monkeypatch):
    cells = _cells()
    judge(cells)
    o = SimpleNamespace(anatomy=pd.DataFrame({"n_s": [1024], "seed_index": [0]}), cells=cells)
    row = claims.CLAIMS.row("finding.gaussian_gap", o)
    assert row["verdict"] == "finding" and row["value"] == pytest.approx(1.001)
    assert "median 1.001" in row["ours"] and "a median of 0.97 breaks it" in row["tolerance"]
    some = _cells(gauss_loss=lambda c: c.theory_loss * np.where(c.p < 0.1, 0.95, 1.001))
    judge(some)                                         # 6 of 16 cells keep 5% of the gain
    row = claims.CLAIMS.row("finding.gaussian_gap", SimpleNamespace(anatomy=o.anatomy, cells=some))
    assert "at or above 0.98 in 10 of them" in row["ours"]            # each cell counted


#: finding.negative_skew's cells as the ladder-settled profile's n_s 512 rung measured them
#: (its 8 cells at p < 0.17 in the theory's regime): each cell's gain 1 − trained/theory, and the
#: line of the strongly negative share of row energy on the gain (0.40 + 0.35·gain, ± 0.029).
SKEW_GAINS = np.array([0.126, 0.097, 0.153, 0.1, 0.202, 0.145, 0.258, 0.209])
SKEW_LINE, SKEW_SPREAD = (0.40, 0.35), 0.029


def _skew_found(monkeypatch, slope, draws=1000, seed=0):
    """The share of ``draws`` runs of SKEW_GAINS's cells (each trained loss ± SEED_SPREAD, each
    energy 0.40 + ``slope``·gain ± SKEW_SPREAD; ``slope`` None: the energies shuffled over the
    cells, unrelated to the gain) that finding.negative_skew reads found."""
    rng, p = np.random.default_rng(seed), np.resize([0.044, 0.086], len(SKEW_GAINS))
    found = []
    for _ in range(draws):
        energy = SKEW_LINE[0] + (SKEW_LINE[1] if slope is None else slope) * SKEW_GAINS
        energy = energy + rng.normal(0, SKEW_SPREAD, len(energy))
        cells = pd.DataFrame({"n_s": 512, "ratio_target": 0.25, "p": p, "theory_loss": 1.0, "skew": -2.0, "negative_energy": (
            rng.permutation(energy) if slope is None else energy), "loss": (1 - SKEW_GAINS) * (
            1 + rng.normal(0, SEED_SPREAD, len(p)))})
        monkeypatch.setattr(anatomy_claims, "regime_cells", lambda o, c=cells: c)
        found.append(claims.CLAIMS.result("finding.negative_skew", SimpleNamespace(
            anatomy=pd.DataFrame({"n_s": [512], "seed_index": [0]}), cells=cells)).ok)
    return float(np.mean(found))


@pytest.mark.calibration
def test_the_negative_skew_finding_is_not_found_where_the_energy_is_unrelated_to_the_gain(
        monkeypatch):
    """Calibration (docs/claims.md) of finding.negative_skew on the 8 small-p cells a rung of
    the ladder has: energies unrelated to the gain (shuffled over the cells) read found at most
    5% of the time; energies rising one for one with the gain at the measured spread, at least
    95%. At the slope measured at n_s 512 (0.35) the test finds it less than half the time: 8
    cells are few, printed."""
    rate = {s: _skew_found(monkeypatch, s) for s in (1.0, SKEW_LINE[1], None)}
    print(f"finding.negative_skew: found at slope {rate}")
    assert rate[None] <= 0.05 and rate[1.0] >= 0.95


def test_a_finding_is_judged_at_the_largest_n_s_and_says_its_median_at_each(judge):
    small = _cells(n_s=512, gauss_loss=lambda c: 0.9 * c.theory_loss)   # fails, at n_s 512
    got = judge(pd.concat([small, _cells()]))
    gauss = got["finding.gaussian_gap"]
    assert gauss.ok and gauss.value == pytest.approx(1.001)             # n_s 1024 decides
    assert gauss.numbers["per_n_s"] == "n_s 512: 0.900 (16 cells); 1024: 1.001 (16)"


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")   # no gain: no ρ
def test_not_computed_counts_the_cells_its_finding_needs(judge):
    level = _cells(loss=lambda c: c.theory_loss)          # in the regime, none beats the theory
    got = judge(level)
    assert got["finding.gaussian_gap"].not_computed == (
        "0 converged cells in the theory's regime beat the theory by more than 2%, fewer than 3")
    assert got["finding.paired_large_p"].not_computed is None          # 6 cells at p ≥ 0.17
