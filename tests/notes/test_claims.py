"""The claims of the notes on toy autoencoding (tms.notes.claims.CLAIMS), each checked on the
stage outputs (tms.notes.evidence.Outputs), and the outputs read from the stages' files."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tms.core import io
from tms.notes import artefacts, claims, data, evidence, flows, theory
from tms.notes.params import NotesFlows


@pytest.fixture(scope="module")
def inputs():
    sigma = theory.sparse_sigma(0.5, 5, theory.scale_factors(5, 0.25))
    C = theory.invertible_c(2, 0)
    saddle, summary = theory.saddle_table(sigma, [1, 3], C, np.geomspace(1e-3, 10, 5))
    linear = pd.DataFrame([{"spectrum": sp, "S": 0.5, "D": 5, "d": d, "steps_cap": cap,
                            "gap": 1e-3 * 100 / cap, "angle_top_deg": (80.0 if sp == "sparse"
                                                                        and d > 1 else 200.0 / cap),
                            "angle_u1_deg": 100.0 / cap, "commutator": 1.0 / cap,
                            "projection_residual": 1.0 / cap}
                           for sp in ("sparse", "scaled") for d in (1, 2) for cap in (10, 100)])
    relu = pd.DataFrame({"S": [0.9, 0.99], "D": 20, "d": 5, "share_ge2": [0.9, 0.2],
                         "mass_ge2": [data.mass_ge2(0.9, 20), data.mass_ge2(0.99, 20)]})
    return dict(moments=data.moments_table([0.5, 0.9], [3, 6], 20000, 1),
                skeletons=data.skeletons_table([0.8, 0.99], [5, 20], 5000, 2),
                linear=linear, critical=theory.critical_points_table(sigma, 2, C), saddle=saddle,
                saddle_summary=summary,
                gradients=flows.gradient_checks(0.5, 5, 2, 200, 0, 0.25),
                flows=flows.flows_table(NotesFlows(D=5, d=2, S=0.5, T=200, init_std=0.1,
                                                   t_max=400.0, lr=0.05, n_t=8, seed=0), 0.25),
                energy=flows.energy_along_flow(5, 2, 0.1, 0, 30.0, 20), relu=relu,
                spectrum=theory.spectrum(theory.sparse_sigma(0.5, 5))[0])


def _rows(inputs):
    return {r["id"]: r for r in claims.CLAIMS.rows(evidence.Outputs(**inputs))}


def _with(i, key, where=None, **columns):
    """i with columns of table ``key`` replaced on the rows ``where`` selects (all: None)."""
    t = i[key].copy()
    rows = slice(None) if where is None else where(t)
    for col, v in columns.items():
        t.loc[rows, col] = v(t.loc[rows]) if callable(v) else v
    return {**i, key: t}


PERTURB = {
    "sec21.second_moment": lambda i: _with(i, "moments",
                                           diag_mc=lambda t: t.diag + 10 * t.diag_se),
    "sec21.cross_moment": lambda i: _with(i, "moments", off_mc=lambda t: t.off + 10 * t.off_se),
    "sec21.zero_probability": lambda i: _with(i, "moments",
                                              zero_diag_mc=lambda t: t.zero_diag + 0.1),
    "sec1.distinct_eigenvalues": lambda i: {**i, "spectrum": np.arange(5.0, 0.0, -1.0)},
    "prop1.trained_minimum": lambda i: _with(i, "linear", gap=0.05),
    "prop1.top_eigenspace": lambda i: _with(i, "linear", angle_top_deg=30.0),
    "prop1.u1_commutes": lambda i: _with(i, "linear", angle_u1_deg=30.0),
    "cor2.unique": lambda i: _with(i, "linear", angle_top_deg=1.0),
    "prop1.critical_points": lambda i: _with(i, "critical", grad_norm=1e-3),
    "prop3.saddles": lambda i: _with(i, "critical", n_negative=lambda t: t.n_negative + 1),
    "prop3.decrease": lambda i: _with(i, "saddle", lambda t: t.index == 0,
                                      decrease=lambda t: t.decrease * 1.01),
    "eq19.gradient": lambda i: _with(i, "gradients", lambda t: t.equation == "19", rel_diff=1e-3),
    "eq20_28.identities": lambda i: _with(i, "gradients", lambda t: t.equation != "19",
                                          rel_diff=1e-3),
    "eq22.identity_gd": lambda i: _with(i, "flows", lambda t: t.spectrum == "identity",
                                        distance=1.0),
    "eq22.tied_dynamics": lambda i: _with(i, "flows", loss_flow=lambda t: t.loss_min),
    "eq28.energy_decreases": lambda i: _with(i, "energy", E=lambda t: t.E.to_numpy()[::-1]),
    "eq28.energy_printed": lambda i: _with(i, "energy", dE_ordered_dt=-1.0),
    "sec31.skeleton_mass": lambda i: _with(
        i, "skeletons", mass_ge2_mc=lambda t: t.mass_ge2 + 10 * t.mass_ge2_se + 0.01),
    "sec31.ignore_ge2": lambda i: _with(i, "relu", share_ge2=lambda t: t.mass_ge2),
}


def test_every_claim_is_present_and_its_verdict_can_flip(inputs):
    base = _rows(inputs)
    assert set(base) == set(PERTURB) == set(claims.CLAIMS)
    counts = pd.Series([r["verdict"] for r in base.values()]).value_counts().to_dict()
    assert counts == {"sanity check": 14, "caveat": 2, "erratum": 2, "finding": 1}
    ratio = 0.2 / data.mass_ge2(0.99, 20)
    assert f"{ratio:.0f}×" in base["sec31.ignore_ge2"]["ours"]
    for cid, perturb in PERTURB.items():
        changed = claims.CLAIMS.row(cid, evidence.Outputs(**perturb(inputs)))["verdict"]
        assert changed != base[cid]["verdict"], (cid, changed)
    # the finding not found says why: the loss's share only as large as the mass
    lost = claims.CLAIMS.row("sec31.ignore_ge2", evidence.Outputs(**PERTURB["sec31.ignore_ge2"](
        inputs)))
    assert lost["verdict"] == "not found" and lost["ours"].endswith(
        "Not found: the share of the loss is at most 1× the mass, under 2×"), lost["ours"]


def test_claims_of_trained_models_that_all_diverged_read_not_computed(inputs):
    rows = _rows({**inputs, "linear": inputs["linear"].iloc[:0], "relu": inputs["relu"].iloc[:0]})
    gone = {k for k, r in rows.items() if r["verdict"] == "not computed"}
    assert gone == {"prop1.trained_minimum", "prop1.top_eigenspace", "prop1.u1_commutes",
                    "cor2.unique", "sec31.ignore_ge2"}


def test_a_toy_run_too_short_to_reach_the_minimum_checks_nothing(inputs):
    """Caps of 10 and 30 steps (the smoke profile's): the Prop. 1 rows are not computed, not
    failed sanity checks; the fixture's 100 steps (claims.MIN_CAP) are checked."""
    short = inputs["linear"].assign(steps_cap=inputs["linear"].steps_cap.map({10: 10, 100: 30}))
    rows = _rows({**inputs, "linear": short})
    for cid in ("prop1.trained_minimum", "prop1.top_eigenspace", "prop1.u1_commutes",
                "cor2.unique"):
        assert rows[cid]["verdict"] == "not computed", cid
        assert "the longest step cap, 30, is below 100" in rows[cid]["ours"]
    assert _rows(inputs)["prop1.trained_minimum"]["verdict"] == "sanity check"


def test_the_outputs_are_read_from_the_stage_files_without_the_diverged_models(
        inputs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blown = inputs["linear"].assign(diverged=False)
    blown = pd.concat([blown, blown.iloc[-1:].assign(gap=1.0, diverged=True)], ignore_index=True)
    relu = pd.concat([inputs["relu"], inputs["relu"].iloc[-1:].assign(share_ge2=0.0)],
                     ignore_index=True).assign(diverged=[False, False, True])
    written = {**inputs, "linear": blown, "relu": relu}
    a = artefacts
    for key, path in (("moments", a.MOMENTS), ("skeletons", a.SKELETONS), ("linear", a.LINEAR),
                      ("critical", a.CRITICAL_POINTS), ("saddle", a.SADDLE),
                      ("gradients", a.GRADIENTS), ("flows", a.FLOWS), ("energy", a.ENERGY),
                      ("relu", a.RELU)):
        io.write_parquet(written[key], path)
    io.write_json(inputs["saddle_summary"], a.SADDLE_SUMMARY)
    loaded = evidence.Outputs.load(SimpleNamespace(linear=SimpleNamespace(S=[0.9, 0.5], D=5)))
    assert len(loaded.linear) == len(inputs["linear"]) and len(loaded.relu) == len(relu) - 1
    np.testing.assert_allclose(loaded.spectrum, inputs["spectrum"])
    assert claims.CLAIMS.rows(loaded) == claims.CLAIMS.rows(evidence.Outputs(**inputs))


#: Sec. 3.1's finding as ladder-settled measured it (D 20, 5 models a S): the S swept and the
#: models' spread of their share of the loss from inputs with ≥ 2 active features, relative (up
#: to 16%, at S 0.98).
RELU_S, SHARE_SPREAD = (0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.998, 0.999), 0.16


def _relu_draw(inputs, rng, times):
    """``inputs`` with 5 models at each S of RELU_S whose share of the loss is ``times`` the
    mass of inputs with ≥ 2 active features, each ± SHARE_SPREAD (relative)."""
    S = np.repeat(RELU_S, 5)
    mass = np.array([data.mass_ge2(s, 20) for s in S])
    share = np.minimum(times * mass * (1 + rng.normal(0, SHARE_SPREAD, len(S))), 1.0)
    relu = pd.DataFrame({"S": S, "D": 20, "d": 5, "share_ge2": share, "mass_ge2": mass})
    return evidence.Outputs(**{**inputs, "relu": relu})


@pytest.mark.calibration
def test_the_finding_on_inputs_with_two_active_features_finds_them_only_where_they_weigh(
        inputs):
    """Calibration (docs/claims.md) of sec31.ignore_ge2: models whose share of the loss is 2.6×
    the mass (the least ladder-settled measured where the mass is under 50%), with its spread,
    read found at least 95% of the time; models whose share is the mass (what ignoring them
    assumes), at most 5%."""
    def found(times, seed):
        rng = np.random.default_rng(seed)
        return np.mean([claims.CLAIMS.row("sec31.ignore_ge2", _relu_draw(inputs, rng, times))[
                            "verdict"]
                        == "finding" for _ in range(200)])
    held, broken = found(2.6, 0), found(1.0, 1)
    print(f"sec31.ignore_ge2: found in {held:.1%} of models that weigh 2.6× their mass, "
          f"{broken:.1%} of models that weigh their mass")
    assert held >= 0.95 and broken <= 0.05
