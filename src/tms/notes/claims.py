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
from collections.abc import Callable

import numpy as np

from tms.core.claim_rows import MATHEMATICS, Claims, Record, Result, max_z, span
from tms.notes.evidence import Outputs
from tms.notes.flows import RISE_TOL


_DATA = ("notes_data",)
_LIN = ("notes_linear",)
_SADDLE = ("notes_saddle",)
_FLOW = ("notes_flows",)


CLAIMS = Claims(empirical=("notes_linear", "notes_relu"),
                central=("prop1.trained_minimum", "sec31.ignore_ge2"))


#: The rows of a moment against its Monte Carlo estimate (:func:`_moment`).
_MOMENT = {"ours": "Monte Carlo against the closed form: largest deviation {value:.1f} standard "
                   "errors",
           "tolerance": "≤ 4 standard errors everywhere: a false alarm in < 1% of {points} points"}
#: What the sanity checks of sec. 2.1's moments share.
_MOMENTS = {"source": "sec. 2.1", "paper_scale": "—", "figure": "moments", "stages": _DATA,
            "kind": "sanity check"}


def _moment(out: Outputs, col: str) -> Result:
    """A moment (column ``col`` of the moments table): Monte Carlo against it."""
    m = out.moments
    z = max_z(m[f"{col}_mc"], m[col], m[f"{col}_se"])
    return Result(z <= 4, z, numbers={"value": z, "points": len(m)}, scale=out.moments_scale)


@CLAIMS.record(Record(id="sec21.second_moment", statement="E x_i² = (1 − S)/3",
                      paper="(1 − S)/3", **_MOMENTS, **_MOMENT))
def _second_moment(out: Outputs) -> Result:
    return _moment(out, "diag")


@CLAIMS.record(Record(id="sec21.cross_moment", statement="E x_i x_j = (1 − S)²/4 (i ≠ j)",
                      paper="(1 − S)²/4", **_MOMENTS, **_MOMENT))
def _cross_moment(out: Outputs) -> Result:
    return _moment(out, "off")


@CLAIMS.record(Record(
    id="sec21.zero_probability", statement="P(x_i² = 0) = S, P(x_i x_j = 0) = 1 − (1 − S)²",
    paper="S, 1 − (1 − S)²", **_MOMENTS, ours="largest |Monte Carlo − exact| = {value:.2g}",
    tolerance="≤ 4·0.5/√n = {tol:.2g} (4 standard errors at worst)"))
def _zero_probability(out: Outputs) -> Result:
    m = out.moments
    dev = max((m.zero_diag_mc - m.zero_diag).abs().max(), (m.zero_off_mc - m.zero_off).abs().max())
    tol = 4 * 0.5 / np.sqrt(m.n_vectors.min())
    return Result(dev <= tol, dev, numbers={"value": dev, "tol": tol}, scale=out.moments_scale)


@CLAIMS.record(Record(
    id="sec1.distinct_eigenvalues", statement="assumption (b): Σ has distinct eigenvalues (the "
    "population Σ of the notes' own data, in expectation)", source="sec. 1", paper="assumed",
    paper_scale="—", figure="spectra", stages=(), kind="caveat",
    ours="fails in expectation for the notes' own data: {value} of the {count} eigenvalues of the "
         "population Σ = Var(x)·I + (1 − S)²/4·11ᵀ are equal (λ_2 = … = λ_D = Var(x)). The "
         "finite-sample Σ the notes define has distinct eigenvalues almost surely, but nearly "
         "equal ones, so its critical points lie close to the population's continuous families; "
         "the propositions hold as stated for the scaled data (distinct s_i)",
    tolerance="a repeated eigenvalue (relative gap ≤ 1e-9) breaks (b)"))
def _distinct_eigenvalues(out: Outputs) -> Result:
    spectrum = out.spectrum
    gaps = np.abs(np.diff(np.sort(spectrum)))
    repeated = int((gaps <= 1e-9 * np.abs(spectrum).max()).sum())
    return Result(repeated > 0, repeated + 1, numbers={"value": repeated + 1,
                                                       "count": len(spectrum)},
                  scale=f"D {len(spectrum)}")


#: The least step cap at which trained linear autoencoders check a statement about the minimum
#: (Proposition 1, Corollary 2): the default profile's shortest cap. A toy run (the smoke
#: profile's 30 Adam steps) is too short to reach the minimum, so it checks nothing.
MIN_CAP = 100
#: What the checks of the trained linear autoencoders share.
_LINEAR = {"paper_scale": "—", "figure": "linear_convergence", "stages": _LIN}


def _trained(check: Callable[[Outputs], Result]) -> Callable[[Outputs], Result]:
    """``check`` of a claim on the linear autoencoders (Proposition 1, Corollary 2), or the
    claim not computed when every one of them diverged, or when their longest step cap is below
    :data:`MIN_CAP`."""
    @functools.wraps(check)
    def guarded(out: Outputs) -> Result:
        if not len(out.linear_final):
            return Result(not_computed="every linear autoencoder diverged")
        if (cap := int(out.linear_final.steps_cap.max())) < MIN_CAP:
            return Result(not_computed=f"the longest step cap, {cap}, is below {MIN_CAP} (the "
                          "default's shortest): too short to reach the minimum the statement is "
                          "about", scale=out.linear_scale)
        return check(out)
    return guarded


@CLAIMS.record(Record(
    id="prop1.trained_minimum",
    statement=r"trained x ↦ ABx reaches $L = \mathrm{tr}\,\Sigma - \sum_{i \le d} \lambda_i$",
    source="Prop. 1, Cor. 2", paper=r"minimum $\mathrm{tr}\,\Sigma - \sum_{i \le d} \lambda_i$",
    kind="sanity check", **_LINEAR,
    ours="max L/L_min − 1 = {sparse:.2%} (sparse), {scaled:.2%} (scaled); after {steps} steps "
         "{first:.1%}",
    tolerance="≤ 1%: training to the cap converges"))
@_trained
def _trained_minimum(out: Outputs) -> Result:
    final, first = out.linear_final, out.linear_first
    gaps = final.groupby("spectrum").gap.max()
    return Result(final.gap.max() <= 0.01, float(final.gap.max()), scale=out.linear_scale,
                  numbers={"sparse": gaps.get("sparse", np.nan),
                           "scaled": gaps.get("scaled", np.nan),
                           "steps": int(first.steps_cap.iloc[0]), "first": first.gap.max()})


@CLAIMS.record(Record(
    id="prop1.top_eigenspace", statement="col(A) = span of the top-d eigenvectors (distinct "
    "eigenvalues)", source="Prop. 1, Cor. 2", paper="AB = projection onto the top-d eigenspace",
    kind="sanity check", **_LINEAR,
    ours="scaled data: largest principal angle ≤ {value:.2f}° after {steps} steps (≤ "
         "{first:.0f}° after {first_steps}); ‖AB − P_A‖_F ≤ {residual:.3f}",
    tolerance="≤ 5°"))
@_trained
def _top_eigenspace(out: Outputs) -> Result:
    sc = out.linear_final[out.linear_final.spectrum == "scaled"]
    sc0 = out.linear_first[out.linear_first.spectrum == "scaled"]
    if not (len(sc) and len(sc0)):
        return Result(not_computed="every linear autoencoder on the scaled data diverged",
                      scale=out.linear_scale)
    return Result(sc.angle_top_deg.max() <= 5, float(sc.angle_top_deg.max()),
                  scale=out.linear_scale, numbers={
                      "value": sc.angle_top_deg.max(), "steps": int(sc.steps_cap.iloc[0]),
                      "first": sc0.angle_top_deg.max(), "first_steps": int(sc0.steps_cap.iloc[0]),
                      "residual": sc.projection_residual.max()})


@CLAIMS.record(Record(
    id="prop1.u1_commutes", statement="on the notes' data: col(A) contains u_1 = 1/√D and "
    "commutes with Σ", source="Prop. 1 (eq. 7)", paper="PA commutes with Σ",
    kind="sanity check", **_LINEAR,
    ours="max angle(u_1, col A) = {value:.2f}°, max ‖ΣP_A − P_AΣ‖/‖Σ‖ = {commutator:.3f}",
    tolerance="≤ 5°, ≤ 0.05"))
@_trained
def _u1_commutes(out: Outputs) -> Result:
    sp = out.linear_sparse
    if not len(sp):
        return Result(not_computed="every linear autoencoder on the sparse data diverged",
                      scale=out.linear_scale)
    return Result(sp.angle_u1_deg.max() <= 5 and sp.commutator.max() <= 0.05,
                  float(sp.angle_u1_deg.max()), scale=out.linear_scale,
                  numbers={"value": sp.angle_u1_deg.max(), "commutator": sp.commutator.max()})


@CLAIMS.record(Record(
    id="cor2.unique", statement="the minimum is attained on a unique subspace", source="Cor. 2",
    paper="unique minimum", kind="caveat", basis=MATHEMATICS, **_LINEAR,
    ours="unique in value only: for d ≥ 2 the trained col(A) lies {least:.0f}°–{value:.0f}° "
         "from numpy's top-d eigenvectors at L/L_min − 1 ≤ {gap:.2%}: every d-space containing "
         "u_1 is a minimiser",
    tolerance="a minimiser > 5° from the top-d eigenvectors at L/L_min − 1 ≤ 1% shows the "
              "subspace is not unique"))
@_trained
def _unique(out: Outputs) -> Result:
    multi = out.linear_sparse[out.linear_sparse.d >= 2]
    if not len(multi):
        return Result(not_computed="no d ≥ 2 model on the sparse data", scale=out.linear_scale)
    return Result(multi.angle_top_deg.max() > 5 and multi.gap.max() <= 0.01,
                  float(multi.angle_top_deg.max()), scale=out.linear_scale, numbers={
                      "least": multi.angle_top_deg.min(), "value": multi.angle_top_deg.max(),
                      "gap": multi.gap.max()})


#: What the sanity checks of the critical points and saddles share.
_CRITICAL = {"paper_scale": "—", "figure": "saddle", "stages": _SADDLE, "kind": "sanity check"}


@CLAIMS.record(Record(
    id="prop1.critical_points", statement="every (A, B) = (U_I C, C⁻¹U_Iᵀ) is critical with "
    r"$L = \mathrm{tr}\,\Sigma - \sum_{i \in I} \lambda_i$", source="Prop. 1, (⋆)",
    paper=r"critical, $L = \sum_{i \notin I} \lambda_i$", **_CRITICAL,
    ours="max ‖∇L‖ = {value:.1e}, max |L − formula| = {dloss:.1e}",
    tolerance="≤ 1e-10, ≤ 1e-12 (float64 round-off)"))
def _critical_points(out: Outputs) -> Result:
    critical = out.critical
    grad, dloss = critical.grad_norm.max(), (critical.loss - critical.loss_formula).abs().max()
    return Result(grad <= 1e-10 and dloss <= 1e-12, grad, scale=out.critical_scale,
                  numbers={"value": grad, "dloss": dloss})


@CLAIMS.record(Record(
    id="prop3.saddles", statement="only I = {1, …, d} is a minimum; every other critical point "
    "is a saddle", source="Cor. 2, Prop. 3", paper="saddles elsewhere", **_CRITICAL,
    ours="Hessian without negative eigenvalues only at I = {{1..d}}; every other point has one "
         "(least negative: {least:.2e}); count = #{{j ∈ I, k ∉ I, k < j}} at {counted}/{points} "
         "points",
    tolerance="exact counts"))
def _saddles(out: Outputs) -> Result:
    critical = out.critical
    stable = critical[critical.n_negative == 0]
    unique_min = len(stable) == 1 and bool(stable.top.iloc[0]) and \
        critical.loss.idxmin() == stable.index[0]
    counted = int((critical.n_negative == critical.inversions).sum())
    return Result(unique_min and counted == len(critical), scale=out.critical_scale, numbers={
        "least": critical[~critical.top].hess_min.max(), "counted": counted,
        "points": len(critical)})


@CLAIMS.record(Record(
    id="prop3.decrease", statement="loss decrease ε²/(1 + ε²)(λ_k − λ_j) along ũ_j = (u_j + "
    "εu_k)/√(1 + ε²)", source="Prop. 3 (eq. 18)", paper="ε²/(1 + ε²)(λ_k − λ_j)", **_CRITICAL,
    ours="max relative error {value:.1e}; d²L/dε² = {curvature:.6f} vs −2(λ_k − λ_j) = "
         "{predicted:.6f}",
    tolerance="≤ 1e-6, curvature ≤ 1e-4 (finite differences)"))
def _decrease(out: Outputs) -> Result:
    saddle, s = out.saddle, out.saddle_summary
    rel = (saddle.decrease / saddle.predicted - 1).abs().max()
    return Result(
        rel <= 1e-6 and abs(s["curvature"] / s["curvature_predicted"] - 1) <= 1e-4, rel,
        numbers={"value": rel, "curvature": s["curvature"],
                 "predicted": s["curvature_predicted"]},
        scale=f"I = {s['I']}, j = {s['j']}, k = {s['k']}, ε {saddle.eps.min():g}–"
              f"{saddle.eps.max():g}")


#: What the checks of the flows' algebra share.
_FLOWS = {"paper_scale": "—", "stages": _FLOW}


@CLAIMS.record(Record(
    id="eq19.gradient", statement="∇L = −2(AᵀΣ − AᵀABΣ, ΣBᵀ − ABΣBᵀ)", source="eq. 19",
    paper="closed form", figure=None, kind="sanity check", **_FLOWS,
    ours="max relative difference from autograd {value:.1e}", tolerance="≤ 1e-10 (round-off)"))
def _gradient(out: Outputs) -> Result:
    g19 = out.gradients[out.gradients.equation == "19"].rel_diff.max()
    return Result(g19 <= 1e-10, g19, numbers={"value": g19}, scale="one random (A, B)")


@CLAIMS.record(Record(
    id="eq20_28.identities", statement="eqs. 20–28 follow from eq. 19 (tied flow, W = W̄Uᵀ, "
    "column form)", source="eqs. 20–28", paper="algebra", figure=None, kind="sanity check",
    **_FLOWS, ours="max relative difference {value:.1e} over {count} identities",
    tolerance="≤ 1e-10 (round-off)"))
def _identities(out: Outputs) -> Result:
    other = out.gradients[out.gradients.equation != "19"]
    worst = other.rel_diff.max()
    return Result(worst <= 1e-10, worst, numbers={"value": worst, "count": len(other)},
                  scale="one random W")


@CLAIMS.record(Record(
    id="eq22.identity_gd", statement="with Σ = I the tied flow (22) is gradient descent on the "
    "tied loss", source="eq. 22", paper="dW/dt = W(Σ − WᵀWΣ)", figure="flows",
    kind="sanity check", **_FLOWS, ours="max ‖W_flow(4ηk) − W_GD(k)‖_F = {value:.1e}",
    tolerance="≤ 0.05 (the discretisation error of gradient descent)"))
def _identity_gd(out: Outputs) -> Result:
    ident = out.flows[out.flows.spectrum == "identity"]
    return Result(len(ident) > 0 and ident.distance.max() <= 0.05, ident.distance.max(),
                  numbers={"value": ident.distance.max()}, scale=f"{len(ident)} times")


@CLAIMS.record(Record(
    id="eq22.tied_dynamics", statement="eq. 22 is the weight-tied training dynamics",
    source="eq. 22", paper="updates that preserve A = Bᵀ", figure="flows", kind="erratum",
    **_FLOWS,
    ours="only the B-half of the gradient: the tied loss has −∇L = 2[W(Σ − WᵀWΣ) + W(Σ − "
         "ΣWᵀW)], and every W with orthonormal rows is a rest point of eq. 22, so it need not "
         "reach PCA when Σ ≠ I. {parts}",
    tolerance="eq. 22 stuck > 1e-3 above L_min where gradient descent on the tied loss gets "
              "within it"))
def _tied_dynamics(out: Outputs) -> Result:
    end = out.flows.groupby("spectrum").tail(1).set_index("spectrum").drop(index="identity",
                                                                         errors="ignore")
    stuck = end[(end.loss_flow - end.loss_min > 1e-3) & (end.loss_gd - end.loss_min <= 1e-3)]
    parts = [f"{name}: eq. 22 stops at L − L_min = {r.loss_flow - r.loss_min:.3g} with WWᵀ = I "
             f"(±{r.orth_flow:.0e}), GD at {r.loss_gd - r.loss_min:.1e}"
             for name, r in end.iterrows()]
    return Result(len(stuck) > 0, len(stuck), numbers={"parts": "; ".join(parts)},
                  scale=f"spectra {', '.join(end.index)}")


@CLAIMS.record(Record(
    id="eq28.energy_decreases", statement="E decreases along the flow when Σ = I",
    source="eq. 28 (energy)", paper="flow = gradient descent on E", figure="energy",
    kind="sanity check", **_FLOWS,
    ours="with each pair i ≠ j counted once: max step change of E {value:.1e}, |dE/dt + "
         "‖dW/dt‖²| ≤ {fd:.1e}·max‖dW/dt‖²",
    tolerance="increase ≤ 1e-12, ≤ 1e-5"))
def _energy_decreases(out: Outputs) -> Result:
    e = out.energy_moving
    rise = float(np.diff(out.energy.E).max())
    fd = float((e.dE_dt - e.minus_speed_sq).abs().max() / e.minus_speed_sq.abs().max())
    return Result(rise <= 1e-12 and fd <= 1e-5, rise, numbers={"value": rise, "fd": fd},
                  scale=f"{len(out.energy)} times")


@CLAIMS.record(Record(
    id="eq28.energy_printed",
    statement=r"$E = \frac{1}{4} \sum \lambda (1 - |w_i|^2)^2 + "
              r"\frac{1}{2} \sum_{i \neq j} \lambda \langle w_i, w_j \rangle^2$",
    source="eq. 28 (energy)", paper="as printed", figure="energy", kind="erratum", **_FLOWS,
    ours="summed over ordered pairs the cross term is doubled: the flow is −∇E only with "
         r"$\frac{{1}}{{2}} \sum_{{i<j}}$ (or $\frac{{1}}{{4}} \sum_{{i \neq j}}$); the "
         "printed E rises along the flow by up to {value:.2g} per unit time",
    tolerance="a rise > {tol:g} (above round-off) shows the printed E is not the flow's "
              "energy"))
def _energy_printed(out: Outputs) -> Result:
    printed_rise = float(out.energy_moving.dE_ordered_dt.max())
    return Result(printed_rise > RISE_TOL, printed_rise,
                  numbers={"value": printed_rise, "tol": RISE_TOL},
                  scale=f"{len(out.energy)} times")


@CLAIMS.record(Record(
    id="sec31.skeleton_mass", statement=r"the masses of sec. 3.1's skeletons (ours: the notes "
    r"define $Q_l$ and leave its mass open): $\mu(Q_l) = C(D, l)(1 - S)^l S^{D-l}$; "
    r"$\mu(\bigcup_{l \ge 2} Q_l) = 1 - S^D - D(1 - S) S^{D-1}$",
    source="sec. 3.1 ($Q_l$ defined; the masses ours)", paper="— (left open)", paper_scale="—",
    figure="skeletons", stages=_DATA, kind="sanity check",
    ours="Monte Carlo: largest deviation {value:.1f} standard errors",
    tolerance="≤ 4 standard errors"))
def _skeleton_mass(out: Outputs) -> Result:
    sk = out.skeletons
    z = max_z(sk.mass_ge2_mc, sk.mass_ge2, sk.mass_ge2_se)
    return Result(z <= 4, z, numbers={"value": z}, scale=f"{len(sk)} (S, D) points")


@CLAIMS.record(Record(
    id="sec31.ignore_ge2", statement="inputs with ≥ 2 active features can be ignored when "
    r"$\mu(\bigcup_{l \ge 2} Q_l)$ is small (an open question of the notes)", source="sec. 3.1",
    paper="open question", paper_scale="—", figure="relu_share", stages=("notes_relu",),
    kind="finding",
    ours="trained ReLU-output models carry {least:.0f}–{value:.0f}× their mass in loss where the "
         "mass is < 50%; at S = {S:g} mass {mass:.2%} but {share:.1%} of the loss. {end}",
    tolerance="share of the loss ≥ 2 × the mass somewhere: the mass understates them"))
def _ignore_ge2(out: Outputs) -> Result:
    relu = out.relu
    if not len(relu):
        return Result(not_computed="every ReLU-output model diverged")
    g = relu.groupby("S").agg(share=("share_ge2", "mean"), mass=("mass_ge2", "first"))
    sparse_end = g.iloc[-1]
    ratio = (g.share / g.mass)[g.mass < 0.5]
    found = len(ratio) > 0 and ratio.max() >= 2
    why = ("no S with the mass < 50%" if not len(ratio) else
           f"the share of the loss is at most {ratio.max():.2g}× the mass, under 2×")
    return Result(found, ratio.max(), scale=f"D {relu.D.iloc[0]}, d {relu.d.iloc[0]}, S "
                  f"{span(relu.S)}", numbers={
                      "least": ratio.min(), "value": ratio.max(), "S": g.index[-1],
                      "mass": sparse_end.mass, "share": sparse_end.share,
                      "end": "Not negligible until the share itself is" if found else
                      f"Not found: {why}"})
