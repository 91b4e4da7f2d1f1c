"""Where the slowest models ended: the training states a convergence check resumes from.

The convergence check (tms.persian_rug.converge) retrains, per (n_s, p), the ReLU model the
stopping rule stopped last, several times its steps with the rule off. Up to its stop that is
the model's own trajectory, so the training stages keep these models' training states where
they stopped (tms.engine.grid.TrainState: weights, Adam's moments and step count, the data
stream's generator) and the check trains on from there: the stopped model itself, trained on as
it would have gone on in its stack, a factor's worth of steps fewer than retraining it.

This module picks the models (:func:`sample`; the training stages keep the states of both of its
choices, with and without ``capped``, so the check's params never rerun training; only of
models whose weights are kept: a grid too large to keep, the paper profile's n_s 8192, keeps
none and its check retrains from the start) and writes and
reads the folder of states (data/persian_rug/train/n{n_s}_ends, fig3_ends) as ``.npy`` files,
byte-stable: ``instance``, ``steps``, ``first_loss`` and ``rows`` (2·n_d + 1) per model, and
``flat``, ``m``, ``v`` (Σ rows, n_s) float32 and ``stream`` (models, bytes) uint8 in that order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tms.engine.grid import TrainState
from tms.persian_rug import weights

#: The files of a folder of states, one entry per model (the first four) or stacked.
FILES = ("instance", "steps", "first_loss", "rows", "flat", "m", "v", "stream")


def sample(table: pd.DataFrame, capped: bool = False) -> pd.DataFrame:
    """The models a convergence check retrains: per (n_s, p) of ``table``
    (tms.persian_rug.training.TRAIN_COLUMNS), the ReLU model that the stopping rule stopped
    (with ``capped``, or the step cap; not diverged) with the most steps; ties: the largest n_d,
    then the first seed index and instance. A (n_s, p) without such a model has none (its models
    are not converged already). Sorted by n_s and p."""
    ok = table[(table.model == "relu") & (table.stopped | capped) & ~table.diverged]
    ranked = ok.sort_values(["n_s", "p", "steps", "n_d", "seed_index", "instance"],
                            ascending=[True, True, False, False, True, True])
    return ranked.groupby(["n_s", "p"], sort=False).head(1).reset_index(drop=True)


def kept(table: pd.DataFrame) -> set[int]:
    """The instances whose states a training stage keeps: :func:`sample`'s with and without
    ``capped``."""
    return {int(k) for capped in (False, True) for k in sample(table, capped).instance}


def nbytes(n_s: int, n_d: Sequence[int], n_p: int) -> int:
    """A bound on the bytes of the folder of states of the kept models of a grid of ``n_s``
    with hidden widths ``n_d`` and ``n_p`` values of p: two models per p (:func:`kept`), each of
    the widest n_d, three times its weights (the weights and Adam's two moments); 0 without a
    kept model."""
    return 3 * weights.nbytes(n_s, [max(n_d)] * 2 * n_p) if n_d else 0


def write(states: Mapping[int, TrainState], directory: str | Path) -> None:
    """Write ``states`` {instance: state} (ordered by instance) into the empty folder
    ``directory`` (inside tms.core.io.atomic_path, so that it appears whole or not at all).
    Raises ValueError on states of different widths n_s or stream lengths."""
    directory, order = Path(directory), sorted(states)
    got = [states[k] for k in order]
    if len({s.flat.shape[1] for s in got}) > 1 or len({len(s.stream) for s in got}) > 1:
        raise ValueError("the states to keep differ in n_s or in their streams' lengths")
    arrays = {"instance": np.array(order, dtype=np.int64),
              "steps": np.array([s.steps for s in got], dtype=np.int64),
              "first_loss": np.array([s.first_loss for s in got], dtype=np.float64),
              "rows": np.array([len(s.flat) for s in got], dtype=np.int64),
              **{name: (np.concatenate([getattr(s, name) for s in got]).astype(np.float32)
                        if got else np.zeros((0, 0), np.float32)) for name in ("flat", "m", "v")},
              "stream": (np.stack([np.frombuffer(s.stream, dtype=np.uint8) for s in got])
                         if got else np.zeros((0, 0), np.uint8))}
    for name in FILES:
        np.save(directory / f"{name}.npy", arrays[name])


def read(directory: str | Path) -> dict[int, TrainState]:
    """The states of a folder :func:`write` wrote, {instance: state}. Raises FileNotFoundError
    for a folder without them."""
    a = {name: np.load(Path(directory) / f"{name}.npy") for name in FILES}
    at = np.concatenate([[0], np.cumsum(a["rows"])])
    return {int(k): TrainState(a["flat"][at[i]:at[i + 1]], a["m"][at[i]:at[i + 1]],
                               a["v"][at[i]:at[i + 1]], int(a["steps"][i]),
                               float(a["first_loss"][i]), a["stream"][i].tobytes())
            for i, k in enumerate(a["instance"])}
