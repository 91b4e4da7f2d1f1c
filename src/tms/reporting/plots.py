"""The main curves as long tables for DVC plots (``dvc plots show`` / ``dvc plots diff``).

Each table has an x column, a y column and, where a figure draws several curves, a ``series``
column the templates of reports/templates/plots/ draw one curve per value of (fig. 2's
``p_and_curve.json`` reads its ``<kind> p=<p>`` labels: colour by p, dash by kind).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tms.incidental.theory import random_unit_fourth_norm
from tms.persian_rug.figures import nearest


def fig2_loss(trained: pd.DataFrame, rug: pd.DataFrame, theory_table: pd.DataFrame,
              p_targets: Sequence[float]) -> pd.DataFrame:
    """Persian Rug fig. 2 as rows ``series, p, ratio, loss, relative_loss``.

    Per target p: the theory and optimal linear curves and the Persian rug (at that p), and
    the trained ReLU models at the grid p nearest to it (mean loss over seeds). ``loss`` is
    the per-feature loss; ``relative_loss`` = loss / (p/3), the loss of the all-zero output.
    Inputs as :func:`tms.persian_rug.figures.fig2_loss`.
    """
    parts = []
    relu = trained[trained.model == "relu"]
    for p in p_targets:
        th = theory_table[np.isclose(theory_table.p, p)]
        parts += [pd.DataFrame({"series": f"theory p={p:g}", "p": p, "ratio": th.ratio,
                                "loss": th.loss}),
                  pd.DataFrame({"series": f"optimal linear p={p:g}", "p": p, "ratio": th.ratio,
                                "loss": th.loss_linear})]
        rg = rug[np.isclose(rug.p, p)]
        parts.append(pd.DataFrame({"series": f"Persian rug p={p:g}", "p": p, "ratio": rg.ratio,
                                   "loss": rg.loss}))
        if len(relu):
            p_tr = nearest(relu.p, p)
            tr = relu[np.isclose(relu.p, p_tr)].groupby("ratio", as_index=False).loss.mean()
            parts.append(pd.DataFrame({"series": f"trained p={p_tr:.3g}", "p": p_tr,
                                       "ratio": tr.ratio, "loss": tr.loss}))
    out = pd.concat(parts, ignore_index=True).sort_values(["series", "ratio"], kind="stable")
    out["relative_loss"] = out.loss / (out.p / 3)
    return out.reset_index(drop=True)


def collisions(col: pd.DataFrame) -> pd.DataFrame:
    """Incidental polysemanticity fig. 3 per m: mean polysemantic neurons and benign collisions
    at initialisation over instances, and the paper's n²/(4m). col: COLLISION_COLUMNS (empty:
    an empty table)."""
    out = col.groupby("m", as_index=False).agg(polysemantic=("polysemantic", "mean"),
                                                benign_init=("benign_pairs_init", "mean"))
    out["n2_over_4m"] = col.n.max() ** 2 / (4 * out.m)
    return out


#: The most recorded steps per curve of :func:`fourth_norms` (a plot of more shows no more).
CURVE_POINTS = 500


def fourth_norms(noise: pd.DataFrame, steps: np.ndarray, fourth: np.ndarray,
                 m: int) -> pd.DataFrame:
    """Incidental polysemanticity fig. 4 as rows ``series, step, fourth``: the mean over
    instances of the mean ‖W_i‖₄⁴ per (noise, σ), and a random unit vector's 3/(m + 2), at
    most :data:`CURVE_POINTS` evenly spaced recorded steps per series, the first and the last
    among them (the values there are exact; the figure of the report draws every step).

    noise: NOISE_COLUMNS, a row's ``instance`` its row of ``fourth`` (rows may be left out);
    steps (T,); fourth (I, T).
    """
    keep = np.unique(np.linspace(0, len(steps) - 1, min(len(steps), CURVE_POINTS)).round()
                     .astype(int))
    steps, fourth = steps[keep], fourth[:, keep]
    parts = [pd.DataFrame({"series": f"{kind} σ={sigma:g}", "step": steps,
                           "fourth": fourth[tab.instance.to_numpy()].mean(0)})
             for (kind, sigma), tab in noise.groupby(["noise", "sigma"])]
    parts.append(pd.DataFrame({"series": "random unit vector 3/(m+2)", "step": steps,
                               "fourth": random_unit_fourth_norm(m)}))
    return pd.concat(parts, ignore_index=True)
