"""Checkable claims of the notes on toy autoencoding (:data:`CLAIMS`), each declared beside the
check that gives its row (tms.core.claim_rows), from the stage outputs
(tms.notes.evidence.Outputs).

The notes' propositions and equations are theorems: checking them numerically is a sanity check
(of the notes' algebra and of our code), never a reproduction. What our checks find beyond them
are errata (statements that do not hold as printed), caveats (they hold with a qualification the
notes leave out) and a finding (the open question of section 3.1, answered).
"""

from __future__ import annotations

import functools

import numpy as np

from tms.core.claim_rows import MATHEMATICS, Check, Claim, Claims, max_z, span
from tms.notes.evidence import Outputs
from tms.notes.flows import RISE_TOL


_DATA = ("notes_data",)
_LIN = ("notes_linear",)
_SADDLE = ("notes_saddle",)
_FLOW = ("notes_flows",)


CLAIMS = Claims(empirical=("notes_linear", "notes_relu"),
                central=("prop1.trained_minimum", "sec31.ignore_ge2"))


def _moment(claim: Claim, out: Outputs, col: str) -> dict:
    """The row of a moment (column ``col`` of the moments table): Monte Carlo against it."""
    m = out.moments
    z = max_z(m[f"{col}_mc"], m[col], m[f"{col}_se"])
    return claim.row(
        z <= 4, f"Monte Carlo against the closed form: largest deviation {z:.1f} standard errors",
        f"≤ 4 standard errors everywhere: a false alarm in < 1% of {len(m)} points",
        out.moments_scale, value=z)


@CLAIMS.claim("sec21.second_moment", "E x_i² = (1 − S)/3", "sec. 2.1", "(1 − S)/3", "—",
              "moments", _DATA, "sanity check")
def _second_moment(claim: Claim, out: Outputs) -> dict:
    return _moment(claim, out, "diag")


@CLAIMS.claim("sec21.cross_moment", "E x_i x_j = (1 − S)²/4 (i ≠ j)", "sec. 2.1", "(1 − S)²/4",
              "—", "moments", _DATA, "sanity check")
def _cross_moment(claim: Claim, out: Outputs) -> dict:
    return _moment(claim, out, "off")


@CLAIMS.claim("sec21.zero_probability", "P(x_i² = 0) = S, P(x_i x_j = 0) = 1 − (1 − S)²",
              "sec. 2.1", "S, 1 − (1 − S)²", "—", "moments", _DATA, "sanity check")
def _zero_probability(claim: Claim, out: Outputs) -> dict:
    m = out.moments
    dev = max((m.zero_diag_mc - m.zero_diag).abs().max(), (m.zero_off_mc - m.zero_off).abs().max())
    tol = 4 * 0.5 / np.sqrt(m.n_vectors.min())
    return claim.row(dev <= tol, f"largest |Monte Carlo − exact| = {dev:.2g}",
                     f"≤ 4·0.5/√n = {tol:.2g} (4 standard errors at worst)", out.moments_scale,
                     value=dev)


@CLAIMS.claim("sec1.distinct_eigenvalues", "assumption (b): Σ has distinct eigenvalues (the "
              "population Σ of the notes' own data, in expectation)",
              "sec. 1", "assumed", "—", "spectra", (), "caveat")
def _distinct_eigenvalues(claim: Claim, out: Outputs) -> dict:
    spectrum = out.spectrum
    gaps = np.abs(np.diff(np.sort(spectrum)))
    repeated = int((gaps <= 1e-9 * np.abs(spectrum).max()).sum())
    return claim.row(
        repeated > 0, f"fails in expectation for the notes' own data: {repeated + 1} of the "
        f"{len(spectrum)} eigenvalues of the population Σ = Var(x)·I + (1 − S)²/4·11ᵀ are equal "
        "(λ_2 = … = λ_D = Var(x)). The finite-sample Σ the notes define has distinct "
        "eigenvalues almost surely, but nearly equal ones, so its critical points lie close to "
        "the population's continuous families; the propositions hold as stated for the scaled "
        "data (distinct s_i)", "a repeated eigenvalue (relative gap ≤ 1e-9) breaks (b)",
        f"D {len(spectrum)}", value=repeated + 1)


#: The least step cap at which trained linear autoencoders check a statement about the minimum
#: (Proposition 1, Corollary 2): the default profile's shortest cap. A toy run (the smoke
#: profile's 30 Adam steps) is too short to reach the minimum, so it checks nothing.
MIN_CAP = 100


def _trained(check: Check) -> Check:
    """``check`` of a claim on the linear autoencoders (Proposition 1, Corollary 2), or the
    claim not computed when every one of them diverged, or when their longest step cap is below
    :data:`MIN_CAP`."""
    @functools.wraps(check)
    def guarded(claim: Claim, out: Outputs) -> dict:
        if not len(out.linear_final):
            return claim.not_computed("every linear autoencoder diverged")
        if (cap := int(out.linear_final.steps_cap.max())) < MIN_CAP:
            return claim.not_computed(f"the longest step cap, {cap}, is below {MIN_CAP} (the "
                                      "default's shortest): too short to reach the minimum the "
                                      "statement is about", out.linear_scale)
        return check(claim, out)
    return guarded


@CLAIMS.claim("prop1.trained_minimum",
              r"trained x ↦ ABx reaches $L = \mathrm{tr}\,\Sigma - \sum_{i \le d} \lambda_i$",
              "Prop. 1, Cor. 2",
              r"minimum $\mathrm{tr}\,\Sigma - \sum_{i \le d} \lambda_i$", "—",
              "linear_convergence", _LIN, "sanity check")
@_trained
def _trained_minimum(claim: Claim, out: Outputs) -> dict:
    final, first = out.linear_final, out.linear_first
    gaps = final.groupby("spectrum").gap.max()
    return claim.row(
        final.gap.max() <= 0.01, f"max L/L_min − 1 = {gaps.get('sparse', np.nan):.2%} (sparse), "
        f"{gaps.get('scaled', np.nan):.2%} (scaled); after {int(first.steps_cap.iloc[0])} steps "
        f"{first.gap.max():.1%}", "≤ 1%: training to the cap converges", out.linear_scale,
        value=float(final.gap.max()))


@CLAIMS.claim("prop1.top_eigenspace", "col(A) = span of the top-d eigenvectors (distinct "
              "eigenvalues)", "Prop. 1, Cor. 2", "AB = projection onto the top-d eigenspace", "—",
              "linear_convergence", _LIN, "sanity check")
@_trained
def _top_eigenspace(claim: Claim, out: Outputs) -> dict:
    sc = out.linear_final[out.linear_final.spectrum == "scaled"]
    sc0 = out.linear_first[out.linear_first.spectrum == "scaled"]
    if not (len(sc) and len(sc0)):
        return claim.not_computed("every linear autoencoder on the scaled data diverged",
                                  out.linear_scale)
    return claim.row(
        sc.angle_top_deg.max() <= 5, f"scaled data: largest principal angle ≤ "
        f"{sc.angle_top_deg.max():.2f}° after {int(sc.steps_cap.iloc[0])} steps "
        f"(≤ {sc0.angle_top_deg.max():.0f}° after {int(sc0.steps_cap.iloc[0])}); ‖AB − P_A‖_F ≤ "
        f"{sc.projection_residual.max():.3f}", "≤ 5°", out.linear_scale,
        value=float(sc.angle_top_deg.max()))


@CLAIMS.claim("prop1.u1_commutes", "on the notes' data: col(A) contains u_1 = 1/√D and commutes "
              "with Σ", "Prop. 1 (eq. 7)", "PA commutes with Σ", "—", "linear_convergence", _LIN,
              "sanity check")
@_trained
def _u1_commutes(claim: Claim, out: Outputs) -> dict:
    sp = out.linear_sparse
    if not len(sp):
        return claim.not_computed("every linear autoencoder on the sparse data diverged",
                                  out.linear_scale)
    return claim.row(
        sp.angle_u1_deg.max() <= 5 and sp.commutator.max() <= 0.05,
        f"max angle(u_1, col A) = {sp.angle_u1_deg.max():.2f}°, max ‖ΣP_A − P_AΣ‖/‖Σ‖ = "
        f"{sp.commutator.max():.3f}", "≤ 5°, ≤ 0.05", out.linear_scale,
        value=float(sp.angle_u1_deg.max()))


@CLAIMS.claim("cor2.unique", "the minimum is attained on a unique subspace", "Cor. 2",
              "unique minimum", "—", "linear_convergence", _LIN, "caveat", MATHEMATICS)
@_trained
def _unique(claim: Claim, out: Outputs) -> dict:
    multi = out.linear_sparse[out.linear_sparse.d >= 2]
    if not len(multi):
        return claim.not_computed("no d ≥ 2 model on the sparse data", out.linear_scale)
    return claim.row(
        multi.angle_top_deg.max() > 5 and multi.gap.max() <= 0.01,
        f"unique in value only: for d ≥ 2 the trained col(A) lies "
        f"{multi.angle_top_deg.min():.0f}°–{multi.angle_top_deg.max():.0f}° from numpy's "
        f"top-d eigenvectors at L/L_min − 1 ≤ {multi.gap.max():.2%}: every d-space "
        "containing u_1 is a minimiser", "a minimiser > 5° from the top-d eigenvectors at "
        "L/L_min − 1 ≤ 1% shows the subspace is not unique", out.linear_scale,
        value=float(multi.angle_top_deg.max()))


@CLAIMS.claim("prop1.critical_points", "every (A, B) = (U_I C, C⁻¹U_Iᵀ) is critical with "
              r"$L = \mathrm{tr}\,\Sigma - \sum_{i \in I} \lambda_i$", "Prop. 1, (⋆)",
              r"critical, $L = \sum_{i \notin I} \lambda_i$", "—",
              "saddle", _SADDLE, "sanity check")
def _critical_points(claim: Claim, out: Outputs) -> dict:
    critical = out.critical
    grad, dloss = critical.grad_norm.max(), (critical.loss - critical.loss_formula).abs().max()
    return claim.row(grad <= 1e-10 and dloss <= 1e-12,
                     f"max ‖∇L‖ = {grad:.1e}, max |L − formula| = {dloss:.1e}",
                     "≤ 1e-10, ≤ 1e-12 (float64 round-off)", out.critical_scale, value=grad)


@CLAIMS.claim("prop3.saddles", "only I = {1, …, d} is a minimum; every other critical point is a "
              "saddle", "Cor. 2, Prop. 3", "saddles elsewhere", "—", "saddle", _SADDLE,
              "sanity check")
def _saddles(claim: Claim, out: Outputs) -> dict:
    critical = out.critical
    stable = critical[critical.n_negative == 0]
    unique_min = len(stable) == 1 and bool(stable.top.iloc[0]) and \
        critical.loss.idxmin() == stable.index[0]
    counted = int((critical.n_negative == critical.inversions).sum())
    return claim.row(
        unique_min and counted == len(critical),
        f"Hessian without negative eigenvalues only at I = {{1..d}}; every other point has one "
        f"(least negative: {critical[~critical.top].hess_min.max():.2e}); count = "
        f"#{{j ∈ I, k ∉ I, k < j}} at {counted}/{len(critical)} points", "exact counts",
        out.critical_scale)


@CLAIMS.claim("prop3.decrease", "loss decrease ε²/(1 + ε²)(λ_k − λ_j) along ũ_j = (u_j + εu_k)/"
              "√(1 + ε²)", "Prop. 3 (eq. 18)", "ε²/(1 + ε²)(λ_k − λ_j)", "—", "saddle", _SADDLE,
              "sanity check")
def _decrease(claim: Claim, out: Outputs) -> dict:
    saddle, s = out.saddle, out.saddle_summary
    rel = (saddle.decrease / saddle.predicted - 1).abs().max()
    return claim.row(
        rel <= 1e-6 and abs(s["curvature"] / s["curvature_predicted"] - 1) <= 1e-4,
        f"max relative error {rel:.1e}; d²L/dε² = {s['curvature']:.6f} vs −2(λ_k − λ_j) = "
        f"{s['curvature_predicted']:.6f}", "≤ 1e-6, curvature ≤ 1e-4 (finite differences)",
        f"I = {s['I']}, j = {s['j']}, k = {s['k']}, ε {saddle.eps.min():g}–{saddle.eps.max():g}",
        value=rel)


@CLAIMS.claim("eq19.gradient", "∇L = −2(AᵀΣ − AᵀABΣ, ΣBᵀ − ABΣBᵀ)", "eq. 19", "closed form",
              "—", None, _FLOW, "sanity check")
def _gradient(claim: Claim, out: Outputs) -> dict:
    g19 = out.gradients[out.gradients.equation == "19"].rel_diff.max()
    return claim.row(g19 <= 1e-10, f"max relative difference from autograd {g19:.1e}",
                     "≤ 1e-10 (round-off)", "one random (A, B)", value=g19)


@CLAIMS.claim("eq20_28.identities", "eqs. 20–28 follow from eq. 19 (tied flow, W = W̄Uᵀ, column "
              "form)", "eqs. 20–28", "algebra", "—", None, _FLOW, "sanity check")
def _identities(claim: Claim, out: Outputs) -> dict:
    other = out.gradients[out.gradients.equation != "19"]
    worst = other.rel_diff.max()
    return claim.row(worst <= 1e-10,
                     f"max relative difference {worst:.1e} over {len(other)} identities",
                     "≤ 1e-10 (round-off)", "one random W", value=worst)


@CLAIMS.claim("eq22.identity_gd", "with Σ = I the tied flow (22) is gradient descent on the tied "
              "loss", "eq. 22", "dW/dt = W(Σ − WᵀWΣ)", "—", "flows", _FLOW, "sanity check")
def _identity_gd(claim: Claim, out: Outputs) -> dict:
    ident = out.flows[out.flows.spectrum == "identity"]
    return claim.row(len(ident) > 0 and ident.distance.max() <= 0.05,
                     f"max ‖W_flow(4ηk) − W_GD(k)‖_F = {ident.distance.max():.1e}",
                     "≤ 0.05 (the discretisation error of gradient descent)",
                     f"{len(ident)} times", value=ident.distance.max())


@CLAIMS.claim("eq22.tied_dynamics", "eq. 22 is the weight-tied training dynamics", "eq. 22",
              "updates that preserve A = Bᵀ", "—", "flows", _FLOW, "erratum")
def _tied_dynamics(claim: Claim, out: Outputs) -> dict:
    end = out.flows.groupby("spectrum").tail(1).set_index("spectrum").drop(index="identity",
                                                                         errors="ignore")
    stuck = end[(end.loss_flow - end.loss_min > 1e-3) & (end.loss_gd - end.loss_min <= 1e-3)]
    parts = [f"{name}: eq. 22 stops at L − L_min = {r.loss_flow - r.loss_min:.3g} with WWᵀ = I "
             f"(±{r.orth_flow:.0e}), GD at {r.loss_gd - r.loss_min:.1e}"
             for name, r in end.iterrows()]
    return claim.row(
        len(stuck) > 0, "only the B-half of the gradient: the tied loss has −∇L = 2[W(Σ − WᵀWΣ) + "
        "W(Σ − ΣWᵀW)], and every W with orthonormal rows is a rest point of eq. 22, so it need "
        "not reach PCA when Σ ≠ I. " + "; ".join(parts),
        "eq. 22 stuck > 1e-3 above L_min where gradient descent on the tied loss gets within it",
        f"spectra {', '.join(end.index)}", value=len(stuck))


@CLAIMS.claim("eq28.energy_decreases", "E decreases along the flow when Σ = I", "eq. 28 (energy)",
              "flow = gradient descent on E", "—", "energy", _FLOW, "sanity check")
def _energy_decreases(claim: Claim, out: Outputs) -> dict:
    e = out.energy_moving
    rise = float(np.diff(out.energy.E).max())
    fd = float((e.dE_dt - e.minus_speed_sq).abs().max() / e.minus_speed_sq.abs().max())
    return claim.row(
        rise <= 1e-12 and fd <= 1e-5, f"with each pair i ≠ j counted once: max step change of E "
        f"{rise:.1e}, |dE/dt + ‖dW/dt‖²| ≤ {fd:.1e}·max‖dW/dt‖²", "increase ≤ 1e-12, ≤ 1e-5",
        f"{len(out.energy)} times", value=rise)


@CLAIMS.claim("eq28.energy_printed",
              r"$E = \frac{1}{4} \sum \lambda (1 - |w_i|^2)^2 + "
              r"\frac{1}{2} \sum_{i \neq j} \lambda \langle w_i, w_j \rangle^2$",
              "eq. 28 (energy)", "as printed", "—", "energy", _FLOW, "erratum")
def _energy_printed(claim: Claim, out: Outputs) -> dict:
    printed_rise = float(out.energy_moving.dE_ordered_dt.max())
    return claim.row(
        printed_rise > RISE_TOL, "summed over ordered pairs the cross term is doubled: the flow is "
        r"−∇E only with $\frac{1}{2} \sum_{i<j}$ (or $\frac{1}{4} \sum_{i \neq j}$); the printed E "
        "rises along the flow by up to "
        f"{printed_rise:.2g} per unit time", f"a rise > {RISE_TOL:g} (above round-off) "
        "shows the printed E is not the flow's energy", f"{len(out.energy)} times",
        value=printed_rise)


@CLAIMS.claim("sec31.skeleton_mass", r"the masses of sec. 3.1's skeletons (ours: the notes "
              r"define $Q_l$ and leave its mass open): $\mu(Q_l) = C(D, l)(1 - S)^l S^{D-l}$; "
              r"$\mu(\bigcup_{l \ge 2} Q_l) = "
              r"1 - S^D - D(1 - S) S^{D-1}$", "sec. 3.1 ($Q_l$ defined; the masses ours)",
              "— (left open)", "—", "skeletons", _DATA, "sanity check")
def _skeleton_mass(claim: Claim, out: Outputs) -> dict:
    sk = out.skeletons
    z = max_z(sk.mass_ge2_mc, sk.mass_ge2, sk.mass_ge2_se)
    return claim.row(z <= 4, f"Monte Carlo: largest deviation {z:.1f} standard errors",
                     "≤ 4 standard errors", f"{len(sk)} (S, D) points", value=z)


@CLAIMS.claim("sec31.ignore_ge2", "inputs with ≥ 2 active features can be ignored when "
              r"$\mu(\bigcup_{l \ge 2} Q_l)$ is small (an open question of the notes)", "sec. 3.1",
              "open question", "—", "relu_share", ("notes_relu",), "finding")
def _ignore_ge2(claim: Claim, out: Outputs) -> dict:
    relu = out.relu
    if not len(relu):
        return claim.not_computed("every ReLU-output model diverged")
    g = relu.groupby("S").agg(share=("share_ge2", "mean"), mass=("mass_ge2", "first"))
    sparse_end = g.iloc[-1]
    ratio = (g.share / g.mass)[g.mass < 0.5]
    found = len(ratio) > 0 and ratio.max() >= 2
    why = ("no S with the mass < 50%" if not len(ratio) else
           f"the share of the loss is at most {ratio.max():.2g}× the mass, under 2×")
    return claim.row(
        found,
        f"trained ReLU-output models carry {ratio.min():.0f}–{ratio.max():.0f}× their mass "
        f"in loss where the mass is < 50%; at S = {g.index[-1]:g} mass {sparse_end.mass:.2%} "
        f"but {sparse_end.share:.1%} of the loss. "
        + ("Not negligible until the share itself is" if found else f"Not found: {why}"),
        "share of the loss ≥ 2 × the mass somewhere: the mass understates them",
        f"D {relu.D.iloc[0]}, d {relu.d.iloc[0]}, S {span(relu.S)}", value=ratio.max())
