"""The evidence the claims of *Incidental polysemanticity* are judged on
(tms.incidental.claims): the stage outputs read once (:class:`Outputs`, :meth:`Outputs.load` from
the paths of tms.incidental.artefacts), with the values several checks share derived once; the
summaries of the sparsification ODE (figs. 2 and 7) and of the fourth norms under noise (fig. 4)
the report shows too; and how fast fig. 5's fourth norm rises with λ or σ (:func:`rise_width`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from tms.core import divergence, io
from tms.incidental import artefacts, stats, theory
from tms.incidental.params import Incidental

#: The fig. 5 sweeps: kind → (the swept column, its symbol).
SWEPT = {"l1": ("lam", "λ"), "noise": ("sigma", "σ")}


@dataclass(frozen=True)
class Outputs:
    """What the checks of :data:`CLAIMS` read: the stage outputs, diverged models left out
    (tms.core.divergence.split; a claim left without models reads 'not computed').

    checks: tms.incidental.theory.CHECK_COLUMNS; trajectory, euler: the ip_sparsification tables;
    collisions: tms.incidental.training.COLLISION_COLUMNS, with ``fit`` and ``fit_init``
    (tms.incidental.stats.collision_constant of the polysemantic counts and of the benign
    collisions at init; None where fewer than 2 models are left); noise: NOISE_COLUMNS of the
    same module, with noise_fourth (I, T) each instance's mean ‖W_i‖₄⁴ at each recorded step;
    sweep: its SWEEP_COLUMNS; single: per fig. 6 run ("single", our σ; "single_printed", the
    paper's) the stuck encodings found (tms.incidental.stats.STUCK_COLUMNS) and the number of
    candidates that did not diverge; ip: the incidental_polysemanticity params (the scales).
    """

    checks: pd.DataFrame
    trajectory: pd.DataFrame
    euler: pd.DataFrame
    collisions: pd.DataFrame
    fit: dict[str, float] | None
    fit_init: dict[str, float] | None
    noise: pd.DataFrame
    noise_fourth: np.ndarray
    sweep: pd.DataFrame
    single: dict[str, tuple[pd.DataFrame, int]]
    ip: Incidental

    @classmethod
    def load(cls, ip: Incidental) -> Outputs:
        """Read the stage outputs from the paths of tms.incidental.artefacts (relative to the
        working directory); ``ip``: the params they ran with. Raises FileNotFoundError where a
        stage has not run."""
        read = pd.read_parquet
        kept = lambda path: divergence.split(read(path))[0]  # noqa: E731
        col, c = kept(artefacts.COLLISIONS), ip.collisions
        fit = fit_init = None
        if len(col) >= 2:
            fit = stats.collision_constant(col.polysemantic, c.n, col.m, c.level)
            fit_init = stats.collision_constant(col.benign_pairs_init, c.n, col.m, c.level)
        single = {run: (read(artefacts.stuck(run)),    # and the candidates that did not diverge
                        int((~io.read_arrays(artefacts.single(run))["diverged"]).sum()))
                  for run in artefacts.RUNS}
        return cls(read(artefacts.CHECKS), read(artefacts.SPARSIFICATION), read(artefacts.EULER),
                   col, fit, fit_init, kept(artefacts.NOISE),
                   io.read_arrays(artefacts.NOISE_FOURTH)["fourth"], kept(artefacts.SWEEP),
                   single, ip)

    @cached_property
    def sparsification(self) -> dict[str, object]:
        """:func:`sparsification_summary` of the trajectory and Euler tables."""
        return sparsification_summary(self.trajectory, self.euler)

    @cached_property
    def scales(self) -> dict[str, str]:
        """The scale we ran each experiment at, in words: 'ode' (figs. 2 and 7), 'mc' and
        'exact' (the checks of the closed forms), 'fig3', 'noise' (fig. 4), 'sweep' (fig. 5)."""
        ip = self.ip
        ck, c, nz, sw = ip.checks, ip.collisions, ip.noise, ip.sweep
        ms = ", ".join(f"{m:.0e}" for m in sorted(self.trajectory.m.unique()))   # its m values
        return {"ode": f"m {ms}, λ {ip.sparsification.lam:g}",
                "mc": f"n {ck.n}, m {ck.m}, σ {ck.sigma:g}; {ck.samples} samples",
                "fig3": f"n {c.n}, m {min(c.m)}–{max(c.m)}, {len(self.collisions)} models, "
                        f"{c.optimizer.name} lr {c.optimizer.lr:g}, {c.steps} steps",
                "noise": f"n {nz.n}, m {nz.m}, σ {', '.join(f'{v:g}' for v in nz.sigma)}, "
                         f"{nz.optimizer.name} lr {nz.optimizer.lr:g}, {nz.steps} steps, "
                         f"{nz.instances} models",
                "exact": f"m {ck.m_exact} (every noise vector)",
                "sweep": f"n {sw.n}, m {sw.m}, {sw.optimizer.name} lr {sw.optimizer.lr:g}, "
                         f"{sw.steps} steps, {sw.instances} models per point"}

    @cached_property
    def by_check(self) -> pd.DataFrame:
        """The checks table indexed by check (its name)."""
        return self.checks.set_index("check")

    @cached_property
    def noise_by_sigma(self) -> pd.DataFrame:
        """:func:`noise_summary` of fig. 4, indexed by (noise, σ)."""
        return noise_summary(self.noise, self.noise_fourth, self.ip.noise.m).set_index(
            ["noise", "sigma"])

    @cached_property
    def sweep_curves(self) -> dict[str, pd.DataFrame]:
        """Fig. 5: per swept kind ('l1', 'noise') the mean fourth norm, ‖W_i‖² and
        ‖W_i‖₄⁴/‖W_i‖₂⁴ (``shape``, tms.incidental.stats.encoding_shape) by λ or σ."""
        return {kind: self.sweep[self.sweep.kind == kind].groupby(col)[["fourth", "l2sq",
                                                                          "shape"]].mean()
                for kind, (col, _) in SWEPT.items()}

    @cached_property
    def sweep_base(self) -> pd.Series:
        """Fig. 5: the fourth norms of the unregularised models."""
        return self.sweep[self.sweep.kind == "baseline"].fourth


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


def rise_width(magnitude: np.ndarray, fourth: np.ndarray, base: float) -> float:
    """Decades of magnitude over which the mean fourth norm rises from 10% to 90% of the way
    from ``base`` (the unregularised models') to its peak, by log-linear interpolation on the
    curve up to its peak. magnitude: (K,) increasing λ or σ values; fourth: (K,) the mean fourth
    norm at each. NaN if the curve never rises above ``base``."""
    peak = int(np.argmax(fourth))
    rise = fourth[:peak + 1] - base
    if peak == 0 or rise[-1] <= 0:
        return float("nan")
    x = np.log10(np.asarray(magnitude, dtype=np.float64)[:peak + 1])
    low, high = np.interp([0.1 * rise[-1], 0.9 * rise[-1]], np.maximum.accumulate(rise), x)
    return float(high - low)
