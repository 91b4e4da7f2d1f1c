"""Checkable claims of *Incidental polysemanticity*, one row each (columns
:data:`tms.pipeline.claim_rows.COLUMNS`): the closed forms of section 2.1 and appendix C against
Monte Carlo or exact computation, the sparsification ODE (figs. 2 and 7), the collisions of fig. 3
and the fourth norms under noise (figs. 4–6).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tms.incidental import theory
from tms.pipeline.claim_rows import COLUMNS, not_computed, verdict


def _mc_row(checks: pd.DataFrame, check: str, claim: str, source: str, paper: str) -> list:
    """A closed form against its Monte Carlo estimate: reproduced within 3 standard errors."""
    r = checks.set_index("check").loc[check]
    z = abs(r.estimate - r.closed_form) / r.se
    return [claim, source, f"{paper} = {r.closed_form:.5g}",
            f"{r.estimate:.5g} ± {r.se:.2g} (Monte Carlo; {z:.1f} s.e. off)", "≤ 3 s.e.",
            verdict(z <= 3)]


def _exact_row(checks: pd.DataFrame, check: str, claim: str, source: str, paper: str,
               tol: float) -> list:
    """A closed form against an exact computation: reproduced within ``tol`` (absolute)."""
    r = checks.set_index("check").loc[check]
    return [claim, source, paper, f"{check}: {r.estimate:.4g} (closed form {r.closed_form:.4g})",
            f"|difference| ≤ {tol:g}", verdict(abs(r.estimate - r.closed_form) <= tol)]


def sparsification_summary(trajectory: pd.DataFrame, euler: pd.DataFrame) -> dict[str, object]:
    """The numbers of the fig. 2 and fig. 7 claims.

    trajectory: tms.incidental.sparsification.TRAJECTORY_COLUMNS;
    euler: tms.incidental.sparsification.euler_comparison.
    Returns, per m (dicts keyed by m): ``ratio`` (min, max) of ‖W_i‖₁·(1/√m + λt) over t > 0,
    ``lam_t_end`` λ·t at m′ = 1, ``inside`` the share of times with m′ ≥ 2 whose relative variance
    lies within appendix B's bounds (relative slack 1e-9), ``relvar`` (min, max) of the relative
    variance while m′ ≥ 10; and ``euler_error`` {dt: max |‖w‖₁ Euler/exact − 1|}.
    """
    out: dict[str, object] = {"ratio": {}, "lam_t_end": {}, "inside": {}, "relvar": {}}
    for m, tab in trajectory.groupby("m"):
        lam = tab.lam.iloc[0]
        pos = tab[tab.t > 0]
        r = pos.l1 * (1 / np.sqrt(m) + lam * pos.t)
        out["ratio"][m] = (float(r.min()), float(r.max()))
        out["lam_t_end"][m] = float(lam * tab.t.max())
        two = tab[tab.m_prime >= 2]
        ok = ((two.relvar >= two.relvar_lo * (1 - 1e-9))
              & (two.relvar <= two.relvar_hi * (1 + 1e-9)))
        out["inside"][m] = float(ok.mean())
        ten = tab[tab.m_prime >= 10].relvar
        out["relvar"][m] = (float(ten.min()), float(ten.max()))
    err = (euler.l1 / euler.exact_l1 - 1).abs()
    out["euler_error"] = {float(dt): float(e) for dt, e in err.groupby(euler.dt).max().items()}
    return out


def noise_summary(noise: pd.DataFrame, fourth: np.ndarray, m: int) -> pd.DataFrame:
    """Per (noise, σ) of fig. 4: ``final`` (mean over instances of the final mean ‖W_i‖₄⁴),
    ``average`` (its average over the recorded steps: how fast it rose) and ``final_vs_random``
    (final / (3/(m + 2))). noise: tms.incidental.training.NOISE_COLUMNS (rows may be left out:
    a row's ``instance`` is its row of ``fourth``); fourth (I, T)."""
    rows = []
    for (kind, sigma), tab in noise.groupby(["noise", "sigma"]):
        curve = fourth[tab.instance.to_numpy()].mean(0)
        rows.append([kind, sigma, float(curve[-1]), float(curve.mean()),
                     float(curve[-1] / theory.random_unit_fourth_norm(m))])
    return pd.DataFrame(rows, columns=["noise", "sigma", "final", "average", "final_vs_random"])


def _noise_rows(noise: pd.DataFrame, fourth: np.ndarray, m: int) -> list[list]:
    """The fig. 4 claims: bipolar sparsifies and normal does not, faster with σ."""
    claims_ = [("bipolar noise sparsifies, normal does not", "fig. 4, sec. 4", "bipolar ≫ normal"),
               ("the larger σ, the faster bipolar noise sparsifies", "fig. 4, sec. 4",
                "faster with σ"),
               ("normal noise: no effect on sparsity (fourth norm stays at a random "
                "vector's)", "fig. 4, sec. 4", "≈ 3/m")]
    if not len(noise):
        return [not_computed(*c, "every fig. 4 model diverged") for c in claims_]
    rows = []
    ns = noise_summary(noise, fourth, m).set_index(["noise", "sigma"])
    kinds = set(ns.index.get_level_values(0))
    top = max(noise.sigma)
    if {("bipolar", top), ("normal", top)} <= set(ns.index):
        b, g = ns.loc[("bipolar", top), "final"], ns.loc[("normal", top), "final"]
        rows.append([f"{claims_[0][0]} (σ = {top:g})", *claims_[0][1:],
                     f"final mean ‖W_i‖₄⁴ {b:.3f} vs {g:.3f}", "bipolar ≥ 2 × normal",
                     verdict(b >= 2 * g)])
    else:
        rows.append(not_computed(*claims_[0], f"no fig. 4 model of both noise kinds at σ = "
                                 f"{top:g} trained without diverging"))
    if "bipolar" in kinds:
        avg = ns.loc["bipolar"].average
        averages = ", ".join(f"{v:.3f} (σ {k:g})" for k, v in avg.items())
        rows.append([*claims_[1], f"time-averaged mean ‖W_i‖₄⁴: {averages}",
                     "increasing in σ", verdict(bool(np.all(np.diff(avg.to_numpy()) > 0)))])
    else:
        rows.append(not_computed(*claims_[1], "no fig. 4 model with bipolar noise trained "
                                 "without diverging"))
    if "normal" in kinds:
        rel = ns.loc["normal"].final_vs_random
        ratios = ", ".join(f"{v:.2f} (σ {k:g})" for k, v in rel.items())
        rows.append([*claims_[2], f"final / (3/(m + 2)): {ratios}",
                     "each within [0.75, 1.25]", verdict(bool(rel.between(0.75, 1.25).all()))])
    else:
        rows.append(not_computed(*claims_[2], "no fig. 4 model with normal noise trained "
                                 "without diverging"))
    return rows


def _sweep_rows(sweep: pd.DataFrame) -> list[list]:
    """The fig. 5 claims: small λ or σ barely matter, very large ones shrink the encodings."""
    rows = []
    base = sweep[sweep.kind == "baseline"].fourth
    for kind, col, sym in (("l1", "lam", "λ"), ("noise", "sigma", "σ")):
        small_claim = (f"small {sym}: almost no effect on sparsity", "fig. 5, sec. 4",
                       "≈ unregularised")
        large_claim = (f"very large {sym}: fourth norm drops as ‖W_i‖ shrinks", "fig. 5, sec. 4",
                       "drop")
        tab = sweep[sweep.kind == kind].groupby(col)[["fourth", "l2sq"]].mean()
        if not len(tab) or not len(base):
            why = f"every fig. 5 {'baseline' if len(tab) else kind} model diverged"
            rows += [not_computed(*small_claim, why), not_computed(*large_claim, why)]
            continue
        small, large = tab.iloc[0], tab.iloc[-1]
        rows.append([*small_claim, f"{small.fourth:.3f} at {sym} = {tab.index[0]:g}; "
                     f"baseline {base.mean():.3f}", "|difference| ≤ 0.1",
                     verdict(abs(small.fourth - base.mean()) <= 0.1)])
        rows.append([*large_claim, f"{large.fourth:.3f} at {sym} = {tab.index[-1]:g} (peak "
                     f"{tab.fourth.max():.3f}); ‖W_i‖² = {large.l2sq:.3f}",
                     "below the peak and ‖W_i‖² < 0.95",
                     verdict(large.fourth < tab.fourth.max() and large.l2sq < 0.95)])
    return rows


def incidental_polysemanticity(checks: pd.DataFrame, trajectory: pd.DataFrame,
                               euler: pd.DataFrame, collisions: pd.DataFrame,
                               fit: dict[str, float] | None, fit_init: dict[str, float] | None,
                               noise: pd.DataFrame, noise_fourth: np.ndarray, noise_m: int,
                               sweep: pd.DataFrame, stuck: pd.DataFrame, candidates: int,
                               level: float) -> pd.DataFrame:
    """Claims of *Incidental polysemanticity* (figs. 2–7, section 2.1, appendix C), one row each.

    checks: tms.incidental.theory.CHECK_COLUMNS; trajectory, euler: the ip_sparsification tables;
    collisions: tms.incidental.training.COLLISION_COLUMNS with ``fit`` and ``fit_init``
    (tms.incidental.stats.collision_constant of the polysemantic counts and of the benign
    collisions at init, at confidence ``level``; None where fewer than 2 models are left);
    noise, noise_fourth (I, T), noise_m: fig. 4; sweep: tms.incidental.training.SWEEP_COLUMNS;
    stuck: tms.incidental.stats.STUCK_COLUMNS found among ``candidates`` fig. 6 models. The
    trained tables hold the models that did not diverge only (tms.pipeline.divergence.split):
    a claim left without models reads 'not computed'.
    """
    s = sparsification_summary(trajectory, euler)
    rows = []
    for m, (lo, hi) in s["ratio"].items():
        rows.append([f"‖W_i‖₁ = Θ(1/(1/√m + λt)) (m = {m:.0e})", "fig. 2, sec. 2",
                     "constants ≈ 1", f"‖W_i‖₁·(1/√m + λt) from {lo:.2f} to {hi:.2f}",
                     "within [1/3, 3]", verdict(lo >= 1 / 3 and hi <= 3)])
        t_end = s["lam_t_end"][m]
        rows.append([f"m′ reaches 1 at t = Θ(1/λ) (m = {m:.0e})", "fig. 2, sec. 2", "λt ≈ 1",
                     f"λt = {t_end:.2f}", "within [1/3, 3]", verdict(1 / 3 <= t_end <= 3)])
        rows.append([f"relative variance of the non-zero weights within appendix B's bounds "
                     f"(m = {m:.0e})", "fig. 7, app. B", "always",
                     f"{s['inside'][m]:.1%} of the recorded times", "100%",
                     verdict(s["inside"][m] == 1.0)])
        vlo, vhi = s["relvar"][m]
        rows.append([f"relative variance a constant not far from 1 (m = {m:.0e}, m′ ≥ 10)",
                     "fig. 7, app. B", "Θ(1), near 1", f"from {vlo:.2f} to {vhi:.2f}",
                     "within [1/4, 4]", verdict(vlo >= 0.25 and vhi <= 4)])
    errs = s["euler_error"]
    dts = sorted(errs, reverse=True)
    orders = [errs[a] / errs[b] / (a / b) for a, b in zip(dts, dts[1:])]
    rows.append(["exact affine-map integration equals the authors' Euler scheme as dt → 0",
                 "app. B", "error ∝ dt (first order)",
                 "max |‖w‖₁ Euler/exact − 1|: "
                 + ", ".join(f"{errs[d]:.2%} (dt {d:g})" for d in dts),
                 "error ratio / dt ratio in [0.8, 1.25]",
                 verdict(all(0.8 <= o <= 1.25 for o in orders))])
    rows.append(_mc_row(checks, "collision probability", "benign collision probability 1/(2m)",
                        "sec. 2.1", "1/(2m)"))
    rows.append(_mc_row(checks, "interference at init", "interference at init Θ(n/m)",
                        "sec. 2.1", "(n − 1)/(2m)"))
    rows.append(_exact_row(checks, "interference decay: numerical W_i·W_j / exact solution − 1 "
                           "(max)", "interference alone: W_i·W_j follows "
                           "p = √C / (2 sinh(asinh(√C/2p₀) + √C t)), C = s² − 4p² (our solution)",
                           "sec. 2.1", "−Θ(W_i·W_j) decay", 1e-5))
    rows.append(_exact_row(checks, "interference decay: rate −d ln(W_i·W_j)/dt / "
                           "(‖W_i‖² + ‖W_j‖²) − 1 (max)",
                           "positive W_i·W_j decays at rate ‖W_i‖² + ‖W_j‖²", "sec. 2.1",
                           "rate ‖W_i‖² + ‖W_j‖²", 1e-4))
    claim3 = ("polysemantic neurons ≈ c·n²/m with c = 1/4", "fig. 3, sec. 2.1", "c = 0.25")
    claim_init = ("benign collisions at init ≈ C(n, 2)/(2m), i.e. c = (n − 1)/(4n)", "sec. 2.1")
    if fit is None or fit_init is None:
        why = f"{len(collisions)} fig. 3 model(s) trained without diverging; the fit needs 2"
        rows.append(not_computed(*claim3, why))
        rows.append(not_computed(*claim_init, "c = (n − 1)/(4n)", why))
    else:
        n = int(collisions.n.iloc[0])
        rows.append([f"{claim3[0]} (n = {n}, m = {collisions.m.min()}…{collisions.m.max()}, "
                     f"{len(collisions)} models)", *claim3[1:],
                     f"c = {fit['c']:.3f}, {level:.0%} interval [{fit['lo']:.3f}, "
                     f"{fit['hi']:.3f}]", "0.25 in the interval",
                     verdict(fit["lo"] <= 0.25 <= fit["hi"])])
        expect = (n - 1) / (4 * n)
        rows.append([*claim_init, f"c = {expect:.3f}",
                     f"c = {fit_init['c']:.3f}, {level:.0%} interval "
                     f"[{fit_init['lo']:.3f}, {fit_init['hi']:.3f}]", "in the interval",
                     verdict(fit_init["lo"] <= expect <= fit_init["hi"])])
    for kind in ("bipolar", "normal"):
        rows.append(_mc_row(checks, f"E(w·ξ)⁴, {kind} noise",
                            f"E(W_i·ξ)⁴ = 3σ⁴‖W_i‖⁴ + ‖W_i‖₄⁴(μ₄ − 3σ⁴), {kind} noise",
                            "app. C", "formula"))
    rows.append(_exact_row(checks, "‖W_i‖₄⁴ coefficient of the next-step loss, bipolar noise",
                           "η² coefficient of ‖W_i‖₄⁴ in the next-step loss, bipolar (negative: "
                           "sparsity rewarded)", "app. C, sec. 3.2", "16σ⁴·(−2) < 0", 1e-9))
    rows.append(_exact_row(checks, "‖W_i‖₄⁴ coefficient of the next-step loss, normal noise",
                           "the same, normal noise (zero: no push)", "app. C, sec. 3.2",
                           "16σ⁴·0 = 0", 1e-9))
    rows.append(_mc_row(checks, "random unit vector fourth norm",
                        "‖u‖₄⁴ of a random unit vector (the paper draws 3/m)", "figs. 4–5",
                        "3/(m + 2)"))
    rows += _noise_rows(noise, noise_fourth, noise_m)
    rows += _sweep_rows(sweep)
    claim6 = ("an encoding stuck below ‖W_i‖₄⁴ = 0.2, spread over the other encodings' "
              "neurons with opposite signs", "fig. 6, sec. 4",
              "1 encoding, 7 neurons, opposite signs")
    if candidates == 0:
        rows.append(not_computed(*claim6, "every fig. 6 candidate diverged"))
    elif len(stuck):
        r = stuck.iloc[0]
        ours = (f"instance {int(r.instance)}: W_{int(r.feature)} at ‖W_i‖₄⁴ = {r.fourth:.3f}, "
                f"spread over {int(r.coords)} neurons ({int(r.owned_by_others)} owned by other "
                f"encodings, {int(r.opposite_sign)} with the opposite sign); stuck encodings in "
                f"{stuck.instance.nunique()} instance(s)")
        ok = r.fourth < 0.2 and r.opposite_sign == r.owned_by_others
        rows.append([*claim6, ours, "found, < 0.2, all opposite", verdict(bool(ok))])
    else:
        rows.append([*claim6, f"no stuck encoding among the {candidates} candidates",
                     "found, < 0.2, all opposite", verdict(False)])
    return pd.DataFrame(rows, columns=COLUMNS)
