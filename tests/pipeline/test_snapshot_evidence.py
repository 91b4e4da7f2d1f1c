"""Every committed snapshot's verdicts follow from the evidence it keeps (results/<profile>/data/,
judged by the claims code as it stands), and its decided empirical claims sit where a plausible
change of that real evidence (a seed's spread, a 10–20% change) turns them: the tolerances can
fail on real tables, not only on synthetic ones."""

import json
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tms.core import papers

ROOT = Path(__file__).resolve().parents[2]
#: paper → its (params, evidence, claims) modules.
PAPERS = {p.key: tuple(map(p.module, ("params", "evidence", "claims"))) for p in papers.PAPERS}
SNAPSHOTS = sorted(p.name for p in (ROOT / "results").iterdir() if (p / "data").is_dir())


@contextmanager
def _inside(folder, monkeypatch):
    with monkeypatch.context() as m:
        m.chdir(folder)
        yield


def outputs(profile, paper, monkeypatch):
    """The Outputs of ``paper`` loaded from the snapshot ``profile`` (its params and data)."""
    folder = ROOT / "results" / profile
    params, evidence, _ = PAPERS[paper]
    with _inside(folder, monkeypatch):
        section = params.SECTION.load(folder / "params.yaml")
        return evidence.Outputs.load(section)


def stored(profile, paper):
    rows = json.loads((ROOT / "results" / profile / "claims" / f"{paper}.json").read_text())
    return {r["id"]: r for r in rows["claims"]}


@pytest.mark.parametrize("profile", SNAPSHOTS)
@pytest.mark.parametrize("paper", list(PAPERS))
def test_a_snapshots_verdicts_follow_from_its_evidence(profile, paper, monkeypatch):
    rows = {r["id"]: r for r in PAPERS[paper][2].CLAIMS.rows(outputs(profile, paper,
                                                                       monkeypatch))}
    kept = stored(profile, paper)
    assert {i: r["verdict"] for i, r in rows.items()} == {i: r["verdict"] for i, r in kept.items()}
    for cid, row in rows.items():
        if row["value"] is not None:
            assert row["value"] == pytest.approx(kept[cid]["value"], rel=1e-9, abs=1e-12), cid


def _scaled(o, table, column, factor, where=None):
    t = getattr(o, table).copy()
    at = slice(None) if where is None else where(t)
    t.loc[at, column] = t.loc[at, column] * factor
    return replace(o, **{table: t})


def _fourth(o, noise, sigma, factor):
    """o with the fig. 4 fourth-norm traces of the (noise, σ) models scaled by ``factor``."""
    rows = o.noise.index[(o.noise.noise == noise) & (o.noise.sigma == sigma)].to_numpy()
    fourth = o.noise_fourth.copy()
    fourth[rows] *= factor
    return replace(o, noise_fourth=fourth)


def _sweep(o, kind, column, factor, at=None):
    """o with ``column`` of the fig. 5 ``kind`` models (at the swept value ``at``) scaled."""
    swept = {"l1": "lam", "noise": "sigma"}[kind]
    return _scaled(o, "sweep", column, factor, lambda t: (t.kind == kind) & (
        True if at is None else t[swept] == at))


def _spread_rise(o):
    """o with fig. 5's σ curve rising evenly in log σ from the baseline to its peak."""
    t = o.sweep.copy()
    noise = t.kind == "noise"
    x = np.log10(t.loc[noise, "sigma"])
    base, peak = o.sweep[o.sweep.kind == "baseline"].fourth.mean(), t.loc[noise, "fourth"].max()
    t.loc[noise, "fourth"] = base + (peak - base) * (x - x.min()) / (x.max() - x.min())
    return replace(o, sweep=t)


def _polysemantic(o, factor):
    """o with every fig. 3 model's polysemantic count scaled, its constant c fitted anew."""
    from tms.incidental import stats

    col, c = o.collisions.copy(), o.ip.collisions
    col["polysemantic"] = (col.polysemantic * factor).round().astype(int)
    return replace(o, collisions=col,
                   fit=stats.collision_constant(col.polysemantic, c.n, col.m, c.level))


def _large_m(o, factor, from_m):
    """o with the fig. 3 models' polysemantic counts at m ≥ ``from_m`` scaled."""
    col = o.collisions.copy()
    top = col.m >= from_m
    col.loc[top, "polysemantic"] = (col.polysemantic[top] * factor).round().astype(int)
    return replace(o, collisions=col)


def _stuck(o, run, factor):
    """o with the fourth norms of fig. 6's low, spread encodings of ``run`` scaled."""
    stuck, candidates = o.single[run]
    return replace(o, single={**o.single, run: (stuck.assign(fourth=stuck.fourth * factor),
                                                candidates)})


def _ladder_top(o, column, factor):
    """o with ``column`` of the trained grids' statistics at the ladder's largest n_s scaled."""
    return _scaled(o, "stats", column, factor, lambda t: t.n_s == t.n_s.max())


def _anatomy_top(o, column, factor, where=lambda t: True):
    """o with ``column`` of the grids' anatomy at its largest n_s (and ``where``) scaled."""
    return _scaled(o, "anatomy", column, factor,
                   lambda t: (t.n_s == t.n_s.max()) & where(t))


def _gain_on(o, share):
    """o with the anatomy's feature-off loss at its largest n_s moved toward the theory's, so
    that ``share`` of each model's feature-off gain is left (the rest of its gain is on)."""
    t = o.anatomy.copy()
    top = t.n_s == t.n_s.max()
    t.loc[top, "loss_off"] = t.theory_off[top] - share * (t.theory_off - t.loss_off)[top]
    t.loc[top, "loss_on"] = t.loss[top] - t.loss_off[top]        # the split still adds up
    return replace(o, anatomy=t)


def _fig3(o, column, factor):
    """o with ``column`` of the fig. 3 models scaled, and the same statistic of the retrained
    fig. 3 model of the convergence check (long_<column>)."""
    o = _scaled(o, "fig3", column, factor)
    return _scaled(o, "converge", f"long_{column}", factor, lambda t: t.source == "fig3")


#: (profile, paper, claim) → a change of the snapshot's real evidence that turns its decided
#: verdict (plausible where it is small: a seed's spread, 10–20%; where it must be large, the
#: claim is far from its boundary), with the verdict it turns to.
REAL = {
    ("default", "persian_rug", "fig3.diagonal_live"): (
        lambda o: _fig3(o, "diag_live_mean", 1.03), "not reproduced"),   # 3%
    ("default", "persian_rug", "fig3.bias"): (
        lambda o: _fig3(o, "bias_mean", 1.2), "not reproduced"),         # 20%
    ("default", "incidental_polysemanticity", "fig4.contrast"): (     # bipolar's end −60%
        lambda o: _fourth(o, "bipolar", 0.15, 0.4), "not reproduced"),
    ("default", "incidental_polysemanticity", "fig4.sigma_speed"): (  # the largest σ −20%
        lambda o: _fourth(o, "bipolar", 0.15, 0.8), "not reproduced"),
    ("default", "incidental_polysemanticity", "fig4.normal_flat"): (  # +30%
        lambda o: _fourth(o, "normal", 0.1, 1.3), "not reproduced"),
    ("default", "incidental_polysemanticity", "fig5.small_l1"): (     # +30% at λ 1e-5
        lambda o: _sweep(o, "l1", "fourth", 1.3, 1e-5), "not reproduced"),
    ("default", "incidental_polysemanticity", "fig5.small_noise"): (  # +60% at σ 0.01
        lambda o: _sweep(o, "noise", "fourth", 1.6, 0.01), "not reproduced"),
    ("default", "incidental_polysemanticity", "fig5.large_l1"): (     # far: its end 2.4× (a drop
        lambda o: _sweep(o, "l1", "fourth", 2.4, 1.0), "not reproduced"),   # of 0.6 to < 0.1)
    ("default", "incidental_polysemanticity", "fig5.large_noise"): (  # far: its end 9.5× (a drop
        lambda o: _sweep(o, "noise", "fourth", 9.5, 0.5), "not reproduced"),  # of 0.7 to < 0.1)
    ("default", "incidental_polysemanticity", "fig5.shrink_l1"): (    # spread at λ 1: shape −70%
        lambda o: _sweep(o, "l1", "shape", 0.3, 1.0), "not reproduced"),
    ("default", "incidental_polysemanticity", "fig5.sigma_stronger"): (
        _spread_rise, "not reproduced"),
    ("cpu-paper", "persian_rug", "scaling.trained_bound"): (   # far from it: the lowest cell in
        lambda o: _scaled(o, "stats", "loss", 0.4,            # the regime (2.44×) at 0.4×
                          lambda t: (t.n_s == 128) & (t.p == 0.338)), "not reproduced"),
    ("ladder-settled", "persian_rug", "sym.bias_var"): (       # 4× at n_s 1024: the slope's
        lambda o: _ladder_top(o, "bias_var", 4), "inconclusive at this scale"),   # interval
    ("ladder-settled", "persian_rug", "sym.dvar_nu"): (        # 8× at n_s 1024   spans 0
        lambda o: _ladder_top(o, "dvar_nu", 8), "inconclusive at this scale"),
    ("ladder-settled", "persian_rug", "finding.antipodal"): (   # every share at n_s 1024
        lambda o: _scaled(o, "stats", "antipodal", 0.9,             # −10%: mean 0.59, p 0.10
                          lambda t: t.n_s == 1024), "not found"),
    ("ladder-settled", "persian_rug", "scaling.trained_bound"): (   # the lowest cell in the
        lambda o: _scaled(o, "stats", "loss", 0.4,                 # regime (2.40×) at 0.4×
                          lambda t: (t.n_s == 512) & (t.p == 0.338)), "not reproduced"),
    ("ladder-settled", "persian_rug", "finding.gaussian_gap"): (   # Gaussianised 3% lower at
        lambda o: _anatomy_top(o, "gauss_loss", 0.97), "not found"),  # the top: median < 0.98
    ("ladder-settled", "persian_rug", "finding.gain_off"): (      # far: half the off gain left
        lambda o: _gain_on(o, 0.5), "not found"),
    ("ladder-settled", "persian_rug", "finding.paired_large_p"): (   # trained 12% above the
        lambda o: _anatomy_top(o, "loss", 1.12, lambda t: t.p >= 0.17), "not found"),  # pairs
    # ladder-settled is cpu-paper with another Persian Rug ladder: the same fig. 3 cell and the
    # same incidental polysemanticity runs
    **{(profile, paper, cid): change for profile in ("cpu-paper", "ladder-settled")
       for (paper, cid), change in {
        ("persian_rug", "fig3.diagonal_live"): (
            lambda o: _fig3(o, "diag_live_mean", 1.03), "not reproduced"),   # 3%
        ("persian_rug", "fig3.bias"): (
            lambda o: _fig3(o, "bias_mean", 0.8), "not reproduced"),         # 20%
        ("incidental_polysemanticity", "fig3.polysemantic"): (   # 10% fewer neurons (c 0.205,
            lambda o: _polysemantic(o, 0.9), "not reproduced"),  # 0.0175 above its bound)
        ("incidental_polysemanticity", "fig4.contrast"): (
            lambda o: _fourth(o, "bipolar", 0.15, 0.4), "not reproduced"),
        ("incidental_polysemanticity", "fig4.sigma_speed"): (
            lambda o: _fourth(o, "bipolar", 0.15, 0.8), "not reproduced"),
        ("incidental_polysemanticity", "fig4.normal_flat"): (
            lambda o: _fourth(o, "normal", 0.1, 1.3), "not reproduced"),
        ("incidental_polysemanticity", "fig5.small_l1"): (    # +60% at λ 1e-5
            lambda o: _sweep(o, "l1", "fourth", 1.6, 1e-5), "not reproduced"),
        ("incidental_polysemanticity", "fig5.small_noise"): (   # −55% at σ 0.01
            lambda o: _sweep(o, "noise", "fourth", 0.45, 0.01), "not reproduced"),
        ("incidental_polysemanticity", "fig5.large_l1"): (
            lambda o: _sweep(o, "l1", "fourth", 2.4, 1.0), "not reproduced"),
        ("incidental_polysemanticity", "fig5.large_noise"): (
            lambda o: _sweep(o, "noise", "fourth", 9.5, 0.5), "not reproduced"),
        ("incidental_polysemanticity", "fig5.shrink_l1"): (
            lambda o: _sweep(o, "l1", "shape", 0.3, 1.0), "not reproduced"),
        ("incidental_polysemanticity", "fig3.m_exponent"): (   # 10% fewer at m ≥ 2048: β
            lambda o: _large_m(o, 0.9, 2048), "not reproduced"),   # −1.15 → −1.19
        ("incidental_polysemanticity", "fig6.larger_sigma"): (   # far: the stuck encodings
            lambda o: _stuck(o, "single", 1.9), "not reproduced"),   # 1.9×, the lowest > 0.2
        ("incidental_polysemanticity", "fig5.sigma_stronger"): (
            _spread_rise, "not reproduced"),
       }.items()},
}


@pytest.mark.parametrize("key", [k for k in REAL if k[0] in SNAPSHOTS], ids="/".join)
def test_a_plausible_change_of_real_evidence_turns_a_decided_verdict(key, monkeypatch):
    profile, paper, cid = key
    perturb, turned = REAL[key]
    o = outputs(profile, paper, monkeypatch)
    registry = PAPERS[paper][2].CLAIMS
    assert registry.row(cid, o)["verdict"] == stored(profile, paper)[cid]["verdict"] != turned
    assert registry.row(cid, perturb(o))["verdict"] == turned


def test_every_decided_empirical_reproduction_of_a_snapshot_has_a_real_perturbation():
    for profile in SNAPSHOTS:
        for paper in PAPERS:
            for cid, row in stored(profile, paper).items():
                if row["basis"] == "empirical" and row["verdict"] == "reproduced":
                    assert (profile, paper, cid) in REAL, (profile, paper, cid)
