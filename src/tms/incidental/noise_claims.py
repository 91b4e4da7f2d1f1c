"""The claims of *Incidental polysemanticity* on noise (figs. 4–6, sec. 4; :data:`PART`):
bipolar against normal noise (fig. 4), the final fourth norms under l1 and noise (fig. 5) and
the stuck encoding (fig. 6), checked on tms.incidental.evidence.Outputs. The paper's claims
module takes them in after its own (tms.incidental.claims, Claims.include).

A run below the paper's model (n 8, m 16) or steps (100k; fig. 6: 1M), fig. 6 away from its
printed σ = 0.01, or where the paper's unstated settings (ours are fig. 4's) never meet fig. 6's
precondition, reads 'inconclusive at this scale'.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from tms.core.claim_rows import Claims, Record, Result
from tms.incidental import theory
from tms.incidental.evidence import SWEPT, Outputs, rise_width

_FIG45 = "n 8, m 16, SGD lr 0.02, 100k steps, 5 models"
_FIG5 = "n 8, m 16, SGD lr 0.02, 100k steps"
_SWEEP = ("ip_sweep",)
#: Fig. 6's σ and steps.
PAPER_SIGMA6, PAPER_STEPS6 = 0.01, 1_000_000
#: The paper's model of figs. 4–6 (n features, m neurons) and the steps of figs. 4 and 5: a run
#: below them reads inconclusive (a toy run decides nothing).
PAPER_N45, PAPER_M45, PAPER_STEPS45 = 8, 16, 100_000
#: Fig. 6's stuck encoding sits among sparse ones: the other encodings' median fourth norm must
#: reach this (one-hot: 1; a dense unit vector of R^16: 3/(m + 2) ≈ 0.17, what an encoding that
#: has not sparsified yet looks like).
MIN_OTHERS_FOURTH = 0.5
#: Fig. 4's "the larger σ, the faster": the level of the one-sided test of each pair of σ
#: (:func:`_sigma_speed`; with 5 models each the test can reach p = 1/252).
SPEED_LEVEL = 0.05
#: Fig. 5's "σ⁴ where l1 is linear": σ's rise at most this fraction as wide (in decades) as λ's,
#: the geometric middle of a fourth power's 1/4 and a σ acting as λ's 1. On the sweeps' grids,
#: with curves as steep as the snapshots' λ (0.95 decades from 10% to 90%), σ⁴ of the same curve
#: gives a median 0.26 (99th percentile 0.46) and σ acting as λ 0.88 (5th percentile 0.54)
#: (docs/claims.md, Calibration).
RISE_RATIO = 0.5

PART = Claims(empirical=("ip_collisions", "ip_noise", "ip_sweep", "ip_single"),
              central=("fig4.contrast", "fig6.stuck"))


def _short(cfg, steps: int = PAPER_STEPS45) -> list[str]:
    """Where a run of figs. 4–6 (its params section: n, m, steps) falls short of the paper's
    model and of ``steps``, in words; [] where it does not."""
    return [words for words, short in (
        (f"n {cfg.n} < the paper's {PAPER_N45}", cfg.n < PAPER_N45),
        (f"m {cfg.m} < the paper's {PAPER_M45}", cfg.m < PAPER_M45),
        (f"{cfg.steps} steps, not the paper's {steps:.0e}", cfg.steps < steps)) if short]


def _below(cfg) -> str | None:
    """:func:`_short` of a fig. 4 or 5 run as a row's ``inconclusive``."""
    return "; ".join(_short(cfg)) or None


def _fig4_lacks(o: Outputs, kind: str | None = None) -> str | None:
    """Why a fig. 4 claim (on ``kind`` noise) cannot be checked, or None if it can."""
    if not len(o.noise):
        return "every fig. 4 model diverged"
    if kind is not None and kind not in o.noise_by_sigma.index.get_level_values(0):
        return f"no fig. 4 model with {kind} noise trained without diverging"
    return None


#: What fig. 4's claims share.
_FIG4 = {"source": "fig. 4, sec. 4", "paper_scale": _FIG45, "figure": "fig4",
         "stages": ("ip_noise",)}


@PART.record(Record(
    id="fig4.contrast", statement="bipolar noise sparsifies, normal does not (largest σ)",
    paper="bipolar ≫ normal", **_FIG4,
    ours="final mean ‖W_i‖₄⁴ {bipolar:.3f} (bipolar) vs {normal:.3f} (normal) at σ = {sigma:g}",
    tolerance="bipolar ≥ 2 × normal: the figure's curves end apart by more than 2×"))
def _contrast(o: Outputs) -> Result:
    if why := _fig4_lacks(o):
        return Result(not_computed=why, scale=o.scales["noise"])
    top, ns = max(o.noise.sigma), o.noise_by_sigma
    if not {("bipolar", top), ("normal", top)} <= set(ns.index):
        return Result(not_computed=f"no fig. 4 model of both noise kinds at σ = {top:g} trained "
                      "without diverging", scale=o.scales["noise"])
    b, g = ns.loc[("bipolar", top), "final"], ns.loc[("normal", top), "final"]
    return Result(b >= 2 * g, b / g, scale=o.scales["noise"], inconclusive=_below(o.ip.noise),
                  numbers={"bipolar": b, "normal": g, "sigma": top})


@PART.record(Record(
    id="fig4.sigma_speed", statement="the larger σ, the faster bipolar noise sparsifies",
    paper="faster with σ", **_FIG4,
    ours="time-averaged mean ‖W_i‖₄⁴: {means}; one-sided p of a faster rise: {pvalues}",
    tolerance="each larger σ's models average higher than the next smaller σ's (a faster rise "
              "gives a larger time average; one-sided Mann–Whitney at {level:.0%}, every pair); "
              "a pair slower at that level, Bonferroni over the pairs, fails it"))
def _sigma_speed(o: Outputs) -> Result:
    """Each larger σ's models rise faster than the next smaller σ's: their time-averaged fourth
    norms (a faster rise gives a larger average) higher by a one-sided Mann–Whitney test at
    SPEED_LEVEL, every pair (an intersection-union test: no correction); one pair slower at
    that level, Bonferroni over the pairs, fails it; else inconclusive, in the direction of the
    means."""
    if why := _fig4_lacks(o, "bipolar"):
        return Result(not_computed=why, scale=o.scales["noise"])
    bip = o.noise[o.noise.noise == "bipolar"]
    avg = {s: o.noise_fourth[t.instance.to_numpy()].mean(1) for s, t in bip.groupby("sigma")}
    pairs = list(zip(sorted(avg), sorted(avg)[1:]))
    faster = [mannwhitneyu(avg[b], avg[a], alternative="greater").pvalue for a, b in pairs]
    slower = [mannwhitneyu(avg[b], avg[a], alternative="less").pvalue * len(pairs)
              for a, b in pairs]
    means = [float(avg[s].mean()) for s in sorted(avg)]
    slow, undecided = any(q < SPEED_LEVEL for q in slower), [
        f"σ {a:g} and {b:g}" for (a, b), p in zip(pairs, faster) if p >= SPEED_LEVEL]
    ok = not slow and (not undecided or bool(np.all(np.diff(means) > 0)))
    why = _short(o.ip.noise) + ([f"no faster rise decided between {', '.join(undecided)}"]
                                if undecided and not slow else [])
    return Result(ok, means[-1] - means[0], scale=o.scales["noise"],
                  inconclusive="; ".join(why) or None, numbers={
                      "means": ", ".join(f"{v:.3f} (σ {s:g})" for s, v in zip(sorted(avg), means)),
                      "pvalues": ", ".join(f"{p:.2g} (σ {a:g} → {b:g})"
                                           for (a, b), p in zip(pairs, faster)),
                      "level": SPEED_LEVEL})


@PART.record(Record(
    id="fig4.normal_flat", statement="normal noise: no effect on sparsity (fourth norm stays at a "
    "random vector's)", paper="≈ 3/m", **_FIG4, ours="final / (3/(m + 2)): {finals}",
    tolerance="each within [0.75, 1.25]: the spread of 5 random vectors' mean"))
def _normal_flat(o: Outputs) -> Result:
    if why := _fig4_lacks(o, "normal"):
        return Result(not_computed=why, scale=o.scales["noise"])
    rel = o.noise_by_sigma.loc["normal"].final_vs_random
    return Result(bool(rel.between(0.75, 1.25).all()), float(rel.max()), scale=o.scales["noise"],
                  inconclusive=_below(o.ip.noise), numbers={
                      "finals": ", ".join(f"{v:.2f} (σ {k:g})" for k, v in rel.items())})


def _fig5_lacks(o: Outputs, kind: str) -> str | None:
    """Why a fig. 5 claim on the ``kind`` sweep cannot be checked, or None if it can."""
    if not len(o.sweep_curves[kind]) or not len(o.sweep_base):
        return f"every fig. 5 {'baseline' if len(o.sweep_curves[kind]) else kind} model diverged"
    return None


for _kind, (_, _sym) in SWEPT.items():
    @PART.record(Record(
        id=f"fig5.small_{_kind}", statement=f"small {_sym}: almost no effect on sparsity",
        source="fig. 5, sec. 4", paper="≈ unregularised", paper_scale=_FIG5, figure="fig5",
        stages=_SWEEP, ours=f"{{small:.3f}} at {_sym} = {{at:g}}; baseline {{base:.3f}}",
        tolerance="|difference| ≤ 0.1: a tenth of the fourth norm's range"))
    def _small(o: Outputs, kind: str = _kind) -> Result:
        if why := _fig5_lacks(o, kind):
            return Result(not_computed=why, scale=o.scales["sweep"])
        tab, base = o.sweep_curves[kind], o.sweep_base.mean()
        return Result(abs(tab.fourth.iloc[0] - base) <= 0.1, tab.fourth.iloc[0] - base,
                      scale=o.scales["sweep"], inconclusive=_below(o.ip.sweep), numbers={
                          "small": tab.fourth.iloc[0], "at": tab.index[0], "base": base})

    @PART.record(Record(
        id=f"fig5.large_{_kind}", statement=f"very large {_sym}: the fourth norm drops",
        source="fig. 5, sec. 4", paper="drop", paper_scale=_FIG5, stages=_SWEEP, figure="fig5",
        ours=f"{{large:.3f}} at {_sym} = {{at:g}}, from its peak {{peak:.3f}} at {_sym} = "
             "{peak_at:g}",
        tolerance="a drop from the peak of at least 0.1, a tenth of the fourth norm's range (as "
                  "for small λ and σ); a drop of 0.09 breaks it"))
    def _large(o: Outputs, kind: str = _kind) -> Result:
        if why := _fig5_lacks(o, kind):
            return Result(not_computed=why, scale=o.scales["sweep"])
        d = _drop(o.sweep_curves[kind])
        return Result(ok=d["peak"] - d["large"] >= 0.1, value=d["peak"] - d["large"], numbers=d,
                      scale=o.scales["sweep"], inconclusive=_below(o.ip.sweep))

    @PART.record(Record(
        id=f"fig5.shrink_{_kind}", statement=f"very large {_sym}: the fourth norm drops 'due to "
        "an overall drop in the magnitudes' (‖W_i‖ shrinks; the encodings stay sparse)",
        source="fig. 5, sec. 4", paper="drop by shrinking", paper_scale=_FIG5, stages=_SWEEP,
        figure="fig5",
        ours=f"from the peak ({_sym} = {{peak_at:g}}) to {_sym} = {{at:g}}: ‖W_i‖² "
             "{l2_peak:.3f} → {l2_large:.3f}, ‖W_i‖₄⁴/‖W_i‖₂⁴ {shape_peak:.3f} → "
             "{shape_large:.3f} (a random unit vector: {random:.3f}); the shrinking of ‖W_i‖ "
             "makes {value:.0%} of the drop of ‖W_i‖₄⁴ = ‖W_i‖₂⁴ · ‖W_i‖₄⁴/‖W_i‖₂⁴ (in logs), "
             "the loss of concentration the rest",
        tolerance="the shrinking at least half of the drop (in logs): 'due to' read as the main "
                  "cause; a share of 49% breaks it"))
    def _shrink(o: Outputs, kind: str = _kind) -> Result:
        if why := _fig5_lacks(o, kind):
            return Result(not_computed=why, scale=o.scales["sweep"])
        d = _drop(o.sweep_curves[kind])
        if not d["peak"] > d["large"]:
            return Result(not_computed="the fourth norm does not drop: no drop to explain",
                          scale=o.scales["sweep"])
        share = _shrink_share(d)
        return Result(ok=share >= 0.5, value=share, scale=o.scales["sweep"],
                      inconclusive=_below(o.ip.sweep),
                      numbers={**d, "value": share,
                               "random": theory.random_unit_fourth_norm(o.ip.sweep.m)})


def _drop(tab: pd.DataFrame) -> dict[str, float]:
    """Fig. 5: the fourth norm, ‖W_i‖² and ‖W_i‖₄⁴/‖W_i‖₂⁴ (``shape``, NaN where every W_i = 0)
    at the curve's peak and at its largest λ or σ (``tab``: evidence.Outputs.sweep_curves)."""
    peak, large = tab.fourth.idxmax(), tab.index[-1]
    return {"peak": float(tab.fourth[peak]), "peak_at": float(peak),
            "large": float(tab.fourth.iloc[-1]), "at": float(large),
            "l2_peak": float(tab.l2sq[peak]), "l2_large": float(tab.l2sq.iloc[-1]),
            "shape_peak": float(tab["shape"][peak]), "shape_large": float(tab["shape"].iloc[-1])}


def _shrink_share(d: dict[str, float]) -> float:
    """The share of the drop of ‖W_i‖₄⁴ = (‖W_i‖²)² · ‖W_i‖₄⁴/‖W_i‖₂⁴ from the peak to the largest
    λ or σ (:func:`_drop`) that the shrinking of ‖W_i‖² makes, in logs: 2a / (2a + c), a and c
    the log-falls of ‖W_i‖² and of the shape; 1 where every W_i = 0 at the largest (all
    shrinking). A share above 1 means the shape rose while the norm fell."""
    if d["l2_large"] <= 0 or not np.isfinite(d["shape_large"]):
        return 1.0
    a = 2 * np.log(d["l2_peak"] / d["l2_large"])
    return float(a / (a + np.log(d["shape_peak"] / d["shape_large"])))


@PART.record(Record(
    id="fig5.sigma_stronger", statement="σ acts much more strongly than λ: its effect appears as "
    "a fourth power (σ⁴) where l1 is linear in λ", source="fig. 5, sec. 4",
    paper="σ's rise far steeper", paper_scale=_FIG5, figure="fig5", stages=_SWEEP,
    ours="{widths}", tolerance="{test}"))
def _sigma_stronger(o: Outputs) -> Result:
    if not len(o.sweep_base) or not all(len(c) for c in o.sweep_curves.values()):
        return Result(not_computed="every fig. 5 model of a kind diverged", scale=o.scales["sweep"])
    width = {k: rise_width(c.index.to_numpy(), c.fourth.to_numpy(), float(o.sweep_base.mean()))
             for k, c in o.sweep_curves.items()}
    if not np.isfinite(list(width.values())).all():
        return Result(False, scale=o.scales["sweep"], inconclusive=_below(o.ip.sweep), numbers={
            "widths": "no rise from 10% to 90% of the peak over the " + " and the ".join(
                f"{SWEPT[k][1]} swept" for k, w in width.items() if not np.isfinite(w)),
            "test": f"a rise of each, σ's at most {RISE_RATIO:g}× as wide (in decades) as λ's"})
    return Result(
        width["noise"] <= RISE_RATIO * width["l1"],
        width["noise"] / width["l1"] if width["l1"] else None, scale=o.scales["sweep"],
        inconclusive=_below(o.ip.sweep), numbers={
            "widths": f"the fourth norm rises from 10% to 90% of its peak over "
                      f"{width['noise']:.2f} decades of σ and {width['l1']:.2f} decades of λ",
            "test": f"σ's rise at most {RISE_RATIO:g}× as wide (in decades) as λ's: a fourth "
                    f"power is 4× steeper on a log scale than a linear effect (on our grids, "
                    f"curves as steep as λ's give about 0.26× for σ⁴ and 0.9× for σ acting as λ)"})


#: Fig. 6's test, in words.
_STUCK_TEST = (f"found, ‖W_i‖₄⁴ < 0.2, every shared neuron of opposite sign, the other encodings "
               f"sparse (median ‖W_j‖₄⁴ ≥ {MIN_OTHERS_FOURTH:g})")


def _stuck_found(o: Outputs, run: str) -> Result:
    """Fig. 6: an encoding stuck at a low fourth norm, spread with opposite signs among sparse
    encodings, in any candidate model of the fig. 6 run ``run`` (params: ``o.ip``'s section of
    that name). Below the paper's steps, or (for fig6.stuck, the printed run) away from its
    σ, it reads inconclusive; so does a run where no candidate's other encodings sparsified:
    the paper leaves the optimiser, learning rate and initialisation unstated (ours are fig.
    4's), and under them the claim's precondition, a stuck encoding among sparse ones, is not
    met, which says nothing against the paper."""
    (stuck, candidates), cfg = o.single[run], getattr(o.ip, run)
    scale = (f"n {cfg.n}, m {cfg.m}, {cfg.noise} σ {cfg.sigma:g}, {cfg.steps} steps, "
             f"{candidates} candidate(s)")
    if candidates == 0:
        return Result(not_computed="every fig. 6 candidate diverged", scale=scale)
    differ = ([f"σ {cfg.sigma:g}, not the paper's {PAPER_SIGMA6:g}"]
              if run == "single_printed" and cfg.sigma != PAPER_SIGMA6 else []) + _short(
        cfg, PAPER_STEPS6)
    like = stuck[(stuck.fourth < 0.2) & (stuck.opposite_sign == stuck.owned_by_others)
                 & (stuck.others_fourth >= MIN_OTHERS_FOURTH)]
    if not len(stuck):
        return Result(False, scale=scale, inconclusive="; ".join(differ) or None, numbers={
            "found": f"no low, spread encoding among the {candidates} candidates"})
    if not differ and not len(like) and stuck.others_fourth.max() < MIN_OTHERS_FOURTH:
        differ = [f"setting unspecified: the paper gives n, m, σ and steps, not the optimiser, "
                  f"learning rate or initialisation (ours are fig. 4's); under them no "
                  f"candidate's other encodings sparsify (median ‖W_j‖₄⁴ at most "
                  f"{stuck.others_fourth.max():.2f}, a sparse encoding's ≥ "
                  f"{MIN_OTHERS_FOURTH:g}), so the claim's precondition is never met"]
    r = (like if len(like) else stuck).iloc[0]
    return Result(len(like) > 0, r.fourth, scale=scale, inconclusive="; ".join(differ) or None,
                  numbers={"found": (
                      f"{len(like)} of {len(stuck)} low, spread encodings (in "
                      f"{like.instance.nunique()} of {candidates} candidates) as fig. 6 shows; "
                      + ("e.g." if len(like) else "closest:")
                      + f" instance {int(r.instance)}: W_{int(r.feature)} at ‖W_i‖₄⁴ = "
                      f"{r.fourth:.3f}, spread over {int(r.coords)} neurons "
                      f"({int(r.owned_by_others)} owned by other encodings, "
                      f"{int(r.opposite_sign)} with the opposite sign), the others at median "
                      f"‖W_j‖₄⁴ = {r.others_fourth:.2f}")})


@PART.record(Record(
    id="fig6.stuck", statement="an encoding stuck below ‖W_i‖₄⁴ = 0.2, spread over the other "
    "encodings' neurons with opposite signs", source="fig. 6, sec. 4",
    paper="1 encoding, 7 neurons, opposite signs",
    paper_scale="n 8, m 16, bipolar σ 0.01, 1M steps", figure="fig6_printed",
    stages=("ip_single",), ours="{found}", tolerance=_STUCK_TEST))
def _stuck(o: Outputs) -> Result:
    return _stuck_found(o, "single_printed")


@PART.record(Record(
    id="fig6.larger_sigma", statement="fig. 6's stuck encoding at a σ of fig. 4's range (10× the "
    "printed 0.01 in both profiles): the paper ties fig. 6 to fig. 4 ('explains why the fourth "
    "norms were not quite approaching 1 in Figure 4'), whose σ are 0.07–0.15, so the printed σ "
    "is likely a misprint", source="fig. 6, sec. 4", paper="1 encoding, 7 neurons, opposite signs",
    paper_scale="n 8, m 16, bipolar σ 0.01 as printed, 1M steps", figure="fig6",
    stages=("ip_single",), ours="{found}", tolerance=_STUCK_TEST))
def _larger_sigma(o: Outputs) -> Result:
    return _stuck_found(o, "single")
