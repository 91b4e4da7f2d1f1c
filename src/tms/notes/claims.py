"""Checkable claims of the notes on toy autoencoding (:data:`CLAIMS`), one row each
(tms.core.claim_rows).

The notes' propositions and equations are theorems: checking them numerically is a sanity check
(of the notes' algebra and of our code), never a reproduction. What our checks find beyond them
are errata (statements that do not hold as printed), caveats (they hold with a qualification the
notes leave out) and a finding (the open question of section 3.1, answered).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tms.core import divergence
from tms.core.claim_rows import Claim, registry, span
from tms.notes.flows import RISE_TOL

_LIN = ("notes_linear",)
_FLOW = ("notes_flows",)
CLAIMS = registry(
    Claim("sec21.second_moment", "E x_i² = (1 − S)/3", "sec. 2.1", "(1 − S)/3", "—", "moments",
          ("notes_data",), "sanity check"),
    Claim("sec21.cross_moment", "E x_i x_j = (1 − S)²/4 (i ≠ j)", "sec. 2.1", "(1 − S)²/4", "—",
          "moments", ("notes_data",), "sanity check"),
    Claim("sec21.zero_probability", "P(x_i² = 0) = S, P(x_i x_j = 0) = 1 − (1 − S)²", "sec. 2.1",
          "S, 1 − (1 − S)²", "—", "moments", ("notes_data",), "sanity check"),
    Claim("sec1.distinct_eigenvalues", "assumption (b): Σ has distinct eigenvalues", "sec. 1",
          "assumed", "—", "spectra", ("notes_report",), "caveat"),
    Claim("prop1.trained_minimum", "trained x ↦ ABx reaches L = tr Σ − Σ_{i≤d} λ_i",
          "Prop. 1, Cor. 2", "minimum tr Σ − Σ_{i≤d} λ_i", "—", "linear_convergence", _LIN,
          "sanity check"),
    Claim("prop1.top_eigenspace", "col(A) = span of the top-d eigenvectors (distinct "
          "eigenvalues)", "Prop. 1, Cor. 2", "AB = projection onto the top-d eigenspace", "—",
          "linear_convergence", _LIN, "sanity check"),
    Claim("prop1.u1_commutes", "on the notes' data: col(A) contains u_1 = 1/√D and commutes "
          "with Σ", "Prop. 1 (eq. 7)", "PA commutes with Σ", "—", "linear_convergence", _LIN,
          "sanity check"),
    Claim("cor2.unique", "the minimum is attained on a unique subspace", "Cor. 2",
          "unique minimum", "—", "linear_convergence", _LIN, "caveat"),
    Claim("prop1.critical_points", "every (A, B) = (U_I C, C⁻¹U_Iᵀ) is critical with "
          "L = tr Σ − Σ_{i∈I} λ_i", "Prop. 1, (⋆)", "critical, L = Σ_{i∉I} λ_i", "—", "saddle",
          ("notes_saddle",), "sanity check"),
    Claim("prop3.saddles", "only I = {1, …, d} is a minimum; every other critical point is a "
          "saddle", "Cor. 2, Prop. 3", "saddles elsewhere", "—", "saddle", ("notes_saddle",),
          "sanity check"),
    Claim("prop3.decrease", "loss decrease ε²/(1 + ε²)(λ_k − λ_j) along ũ_j = (u_j + εu_k)/"
          "√(1 + ε²)", "Prop. 3 (eq. 18)", "ε²/(1 + ε²)(λ_k − λ_j)", "—", "saddle",
          ("notes_saddle",), "sanity check"),
    Claim("eq19.gradient", "∇L = −2(AᵀΣ − AᵀABΣ, ΣBᵀ − ABΣBᵀ)", "eq. 19", "closed form", "—",
          None, _FLOW, "sanity check"),
    Claim("eq20_28.identities", "eqs. 20–28 follow from eq. 19 (tied flow, W = W̄Uᵀ, column "
          "form)", "eqs. 20–28", "algebra", "—", None, _FLOW, "sanity check"),
    Claim("eq22.identity_gd", "with Σ = I the tied flow (22) is gradient descent on the tied "
          "loss", "eq. 22", "dW/dt = W(Σ − WᵀWΣ)", "—", "flows", _FLOW, "sanity check"),
    Claim("eq22.tied_dynamics", "eq. 22 is the weight-tied training dynamics", "eq. 22",
          "updates that preserve A = Bᵀ", "—", "flows", _FLOW, "erratum"),
    Claim("eq28.energy_decreases", "E decreases along the flow when Σ = I", "eq. 28 (energy)",
          "flow = gradient descent on E", "—", "energy", _FLOW, "sanity check"),
    Claim("eq28.energy_printed", "E = ¼Σλ(1 − |w_i|²)² + ½Σ_{i≠j}λ⟨w_i, w_j⟩²",
          "eq. 28 (energy)", "as printed", "—", "energy", _FLOW, "erratum"),
    Claim("sec31.skeleton_mass", "μ(Q_l) = C(D, l)(1 − S)^l S^(D−l); μ(∪_{l≥2} Q_l) = 1 − S^D − "
          "D(1 − S)S^(D−1)", "sec. 3.1", "binomial", "—", "skeletons", ("notes_data",),
          "sanity check"),
    Claim("sec31.ignore_ge2", "inputs with ≥ 2 active features can be ignored when "
          "μ(∪_{l≥2} Q_l) is small (an open question of the notes)", "sec. 3.1",
          "open question", "—", "relu_share", ("notes_relu",), "finding"),
)


def _max_z(mc: pd.Series, exact: pd.Series, se: pd.Series) -> float:
    """Largest |mc − exact| / se; a zero se counts only if mc differs from exact."""
    dev = (mc - exact).abs().to_numpy()
    se = se.to_numpy()
    return float(np.max(np.where(se > 0, dev / np.where(se > 0, se, 1.0),
                                 np.where(dev > 0, np.inf, 0.0))))


def _linear_rows(linear: pd.DataFrame) -> list[dict]:
    """Proposition 1 and Corollary 2 on the trained linear autoencoders that did not diverge."""
    ids = ("prop1.trained_minimum", "prop1.top_eigenspace", "prop1.u1_commutes", "cor2.unique")
    final = linear[linear.steps_cap == linear.steps_cap.max()]
    if not len(final):
        return [CLAIMS[i].not_computed("every linear autoencoder diverged") for i in ids]
    first = linear[linear.steps_cap == linear.steps_cap.min()]
    cap = int(final.steps_cap.iloc[0])
    scale = (f"D {span(final.D)}, d {span(final.d)}, S {span(final.S)}; {len(final)} models, "
             f"{cap} Adam steps")
    gaps = final.groupby("spectrum").gap.max()
    rows = [CLAIMS[ids[0]].row(
        final.gap.max() <= 0.01, f"max L/L_min − 1 = {gaps.get('sparse', np.nan):.2%} (sparse), "
        f"{gaps.get('scaled', np.nan):.2%} (scaled); after {int(first.steps_cap.iloc[0])} steps "
        f"{first.gap.max():.1%}", "≤ 1%: training to the cap converges", scale,
        value=float(final.gap.max()))]
    sc, sc0 = final[final.spectrum == "scaled"], first[first.spectrum == "scaled"]
    if len(sc) and len(sc0):
        rows.append(CLAIMS[ids[1]].row(
            sc.angle_top_deg.max() <= 5, f"scaled data: largest principal angle ≤ "
            f"{sc.angle_top_deg.max():.2f}° after {cap} steps (≤ {sc0.angle_top_deg.max():.0f}° "
            f"after {int(sc0.steps_cap.iloc[0])}); ‖AB − P_A‖_F ≤ "
            f"{sc.projection_residual.max():.3f}", "≤ 5°", scale,
            value=float(sc.angle_top_deg.max())))
    else:
        rows.append(CLAIMS[ids[1]].not_computed("every linear autoencoder on the scaled data "
                                                "diverged", scale))
    sp = final[final.spectrum == "sparse"]
    if len(sp):
        rows.append(CLAIMS[ids[2]].row(
            sp.angle_u1_deg.max() <= 5 and sp.commutator.max() <= 0.05,
            f"max angle(u_1, col A) = {sp.angle_u1_deg.max():.2f}°, max ‖ΣP_A − P_AΣ‖/‖Σ‖ = "
            f"{sp.commutator.max():.3f}", "≤ 5°, ≤ 0.05", scale,
            value=float(sp.angle_u1_deg.max())))
    else:
        rows.append(CLAIMS[ids[2]].not_computed("every linear autoencoder on the sparse data "
                                                "diverged", scale))
    multi = sp[sp.d >= 2]
    if len(multi):
        rows.append(CLAIMS[ids[3]].row(
            multi.angle_top_deg.max() > 5 and multi.gap.max() <= 0.01,
            f"unique in value only: for d ≥ 2 the trained col(A) lies "
            f"{multi.angle_top_deg.min():.0f}°–{multi.angle_top_deg.max():.0f}° from numpy's "
            f"top-d eigenvectors at L/L_min − 1 ≤ {multi.gap.max():.2%}: every d-space "
            "containing u_1 is a minimiser", "a minimiser > 5° from the top-d eigenvectors at "
            "L/L_min − 1 ≤ 1% shows the subspace is not unique", scale,
            value=float(multi.angle_top_deg.max())))
    else:
        rows.append(CLAIMS[ids[3]].not_computed("no d ≥ 2 model on the sparse data", scale))
    return rows


def autoencoding_notes(moments: pd.DataFrame, skeletons: pd.DataFrame, linear: pd.DataFrame,
                       critical: pd.DataFrame, saddle: pd.DataFrame, saddle_summary: dict,
                       gradients: pd.DataFrame, flows: pd.DataFrame, energy: pd.DataFrame,
                       relu: pd.DataFrame, spectrum: np.ndarray) -> list[dict]:
    """Rows of the claims of the notes on toy autoencoding (propositions and equations).

    Arguments are the stage tables under data/autoencoding_notes/: moments and skeletons
    (tms.notes.data), linear and relu (tms.notes.training), critical, saddle and saddle_summary
    (tms.notes.theory), gradients, flows and energy (tms.notes.flows); spectrum: the
    eigenvalues of Σ of the notes' own data (tms.notes.theory.spectrum), shape (D,). Diverged
    models (column ``diverged``) are left out (tms.core.divergence.split).
    """
    linear, relu = divergence.split(linear)[0], divergence.split(relu)[0]
    rows = []
    n_pts = len(moments)
    mc = (f"{n_pts} (S, D) points, S {span(moments.S)}, D {span(moments.D)}; "
          f"{moments.n_vectors.iloc[0]} vectors each")
    for col, cid in (("diag", "sec21.second_moment"), ("off", "sec21.cross_moment")):
        z = _max_z(moments[f"{col}_mc"], moments[col], moments[f"{col}_se"])
        rows.append(CLAIMS[cid].row(
            z <= 4, f"Monte Carlo against the closed form: largest deviation {z:.1f} standard "
            "errors", f"≤ 4 standard errors everywhere: a false alarm in < 1% of {n_pts} points",
            mc, value=z))
    zero_dev = max((moments.zero_diag_mc - moments.zero_diag).abs().max(),
                   (moments.zero_off_mc - moments.zero_off).abs().max())
    zero_tol = 4 * 0.5 / np.sqrt(moments.n_vectors.min())
    rows.append(CLAIMS["sec21.zero_probability"].row(
        zero_dev <= zero_tol, f"largest |Monte Carlo − exact| = {zero_dev:.2g}",
        f"≤ 4·0.5/√n = {zero_tol:.2g} (4 standard errors at worst)", mc, value=zero_dev))
    gaps = np.abs(np.diff(np.sort(spectrum)))
    repeated = int((gaps <= 1e-9 * np.abs(spectrum).max()).sum())
    rows.append(CLAIMS["sec1.distinct_eigenvalues"].row(
        repeated > 0, f"fails for the notes' own data: {repeated + 1} of the {len(spectrum)} "
        "eigenvalues of Σ = Var(x)·I + (1 − S)²/4·11ᵀ are equal (λ_2 = … = λ_D = Var(x)). "
        "Critical points then form continuous families; the propositions hold as stated for the "
        "scaled data (distinct s_i)", "a repeated eigenvalue (relative gap ≤ 1e-9) breaks (b)",
        f"D {len(spectrum)}", value=repeated + 1))
    rows += _linear_rows(linear)
    grad, dloss = critical.grad_norm.max(), (critical.loss - critical.loss_formula).abs().max()
    crit_scale = f"all {len(critical)} index sets of the scaled data"
    rows.append(CLAIMS["prop1.critical_points"].row(
        grad <= 1e-10 and dloss <= 1e-12, f"max ‖∇L‖ = {grad:.1e}, max |L − formula| = "
        f"{dloss:.1e}", "≤ 1e-10, ≤ 1e-12 (float64 round-off)", crit_scale, value=grad))
    stable = critical[critical.n_negative == 0]
    unique_min = len(stable) == 1 and bool(stable.top.iloc[0]) and \
        critical.loss.idxmin() == stable.index[0]
    counted = int((critical.n_negative == critical.inversions).sum())
    rows.append(CLAIMS["prop3.saddles"].row(
        unique_min and counted == len(critical),
        f"Hessian without negative eigenvalues only at I = {{1..d}}; every other point has one "
        f"(least negative: {critical[~critical.top].hess_min.max():.2e}); count = "
        f"#{{j ∈ I, k ∉ I, k < j}} at {counted}/{len(critical)} points", "exact counts",
        crit_scale))
    rel = (saddle.decrease / saddle.predicted - 1).abs().max()
    s = saddle_summary
    rows.append(CLAIMS["prop3.decrease"].row(
        rel <= 1e-6 and abs(s["curvature"] / s["curvature_predicted"] - 1) <= 1e-4,
        f"max relative error {rel:.1e}; d²L/dε² = {s['curvature']:.6f} vs −2(λ_k − λ_j) = "
        f"{s['curvature_predicted']:.6f}", "≤ 1e-6, curvature ≤ 1e-4 (finite differences)",
        f"I = {s['I']}, j = {s['j']}, k = {s['k']}, ε {saddle.eps.min():g}–{saddle.eps.max():g}",
        value=rel))
    g19 = gradients[gradients.equation == "19"].rel_diff.max()
    other = gradients[gradients.equation != "19"]
    rows.append(CLAIMS["eq19.gradient"].row(
        g19 <= 1e-10, f"max relative difference from autograd {g19:.1e}", "≤ 1e-10 (round-off)",
        "one random (A, B)", value=g19))
    rows.append(CLAIMS["eq20_28.identities"].row(
        other.rel_diff.max() <= 1e-10, f"max relative difference {other.rel_diff.max():.1e} over "
        f"{len(other)} identities", "≤ 1e-10 (round-off)", "one random W",
        value=other.rel_diff.max()))
    ident = flows[flows.spectrum == "identity"]
    rows.append(CLAIMS["eq22.identity_gd"].row(
        len(ident) > 0 and ident.distance.max() <= 0.05,
        f"max ‖W_flow(4ηk) − W_GD(k)‖_F = {ident.distance.max():.1e}",
        "≤ 0.05 (the discretisation error of gradient descent)", f"{len(ident)} times",
        value=ident.distance.max()))
    end = flows.groupby("spectrum").tail(1).set_index("spectrum").drop(index="identity",
                                                                     errors="ignore")
    stuck = end[(end.loss_flow - end.loss_min > 1e-3) & (end.loss_gd - end.loss_min <= 1e-3)]
    parts = [f"{name}: eq. 22 stops at L − L_min = {r.loss_flow - r.loss_min:.3g} with WWᵀ = I "
             f"(±{r.orth_flow:.0e}), GD at {r.loss_gd - r.loss_min:.1e}"
             for name, r in end.iterrows()]
    rows.append(CLAIMS["eq22.tied_dynamics"].row(
        len(stuck) > 0, "only the B-half of the gradient: the tied loss has −∇L = 2[W(Σ − WᵀWΣ) + "
        "W(Σ − ΣWᵀW)], and every W with orthonormal rows is a rest point of eq. 22, so it need "
        "not reach PCA when Σ ≠ I. " + "; ".join(parts),
        "eq. 22 stuck > 1e-3 above L_min where gradient descent on the tied loss gets within it",
        f"spectra {', '.join(end.index)}", value=len(stuck)))
    e = energy[energy.t > 0]
    rise = float(np.diff(energy.E).max())
    fd = float((e.dE_dt - e.minus_speed_sq).abs().max() / e.minus_speed_sq.abs().max())
    rows.append(CLAIMS["eq28.energy_decreases"].row(
        rise <= 1e-12 and fd <= 1e-5, f"with each pair i ≠ j counted once: max step change of E "
        f"{rise:.1e}, |dE/dt + ‖dW/dt‖²| ≤ {fd:.1e}·max‖dW/dt‖²", "increase ≤ 1e-12, ≤ 1e-5",
        f"{len(energy)} times", value=rise))
    printed_rise = float(e.dE_ordered_dt.max())
    rows.append(CLAIMS["eq28.energy_printed"].row(
        printed_rise > RISE_TOL, "summed over ordered pairs the cross term is doubled: the flow is "
        "−∇E only with ½Σ_{i<j} (or ¼Σ_{i≠j}); the printed E rises along the flow by up to "
        f"{printed_rise:.2g} per unit time", f"a rise > {RISE_TOL:g} (above round-off) "
        "shows the printed E is not the flow's energy", f"{len(energy)} times", value=printed_rise))
    z = _max_z(skeletons.mass_ge2_mc, skeletons.mass_ge2, skeletons.mass_ge2_se)
    rows.append(CLAIMS["sec31.skeleton_mass"].row(
        z <= 4, f"Monte Carlo: largest deviation {z:.1f} standard errors", "≤ 4 standard errors",
        f"{len(skeletons)} (S, D) points", value=z))
    question = CLAIMS["sec31.ignore_ge2"]
    if not len(relu):
        rows.append(question.not_computed("every ReLU-output model diverged"))
    else:
        g = relu.groupby("S").agg(share=("share_ge2", "mean"), mass=("mass_ge2", "first"))
        sparse_end = g.iloc[-1]
        ratio = (g.share / g.mass)[g.mass < 0.5]
        rows.append(question.row(
            len(ratio) > 0 and ratio.max() >= 2,
            f"trained ReLU-output models carry {ratio.min():.0f}–{ratio.max():.0f}× their mass "
            f"in loss where the mass is < 50%; at S = {g.index[-1]:g} mass {sparse_end.mass:.2%} "
            f"but {sparse_end.share:.1%} of the loss. Not negligible until the share itself is",
            "share of the loss ≥ 2 × the mass somewhere: the mass understates them",
            f"D {relu.D.iloc[0]}, d {relu.d.iloc[0]}, S {span(relu.S)}", value=ratio.max()))
    return rows


#: The paper's title, as the site shows it.
TITLE = "Notes on toy autoencoding"
