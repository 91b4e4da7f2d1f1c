"""The folders of trained weights (data/persian_rug/train/n{n_s}_weights, fig3_weights).

A folder holds the kept models of one trained grid as ``.npy`` files (byte-stable): ``W_in`` and
``W_out`` flat, each model's (n_d, n_s) and (n_s, n_d) matrix row-major, concatenated in file
order; ``b`` (models, n_s); and the index of the file order: ``model`` ('relu' or 'linear'),
``instance`` (the row of the trained table) and ``n_d``, one entry per kept model. It is
written model by model as the chunks of a grid finish (:class:`Writer`), so no more than one
chunk's weights are ever in memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

#: The key of a model in a folder: (model, instance).
Key = tuple[str, int]


class Writer:
    """Writes the kept models of one grid into ``directory`` (an empty folder) as they come.

    ``index``: (model, instance, n_d) of every kept model, in file order. The files are
    preallocated (so the disk they need is taken at the start); :meth:`put` fills one model's
    place; leaving the ``with`` block normally flushes them and raises ValueError if a kept model
    was never put (on an exception nothing is flushed). Use it inside
    tms.core.io.atomic_path, so an interrupted run leaves no folder.
    """

    def __init__(self, directory: str | Path, n_s: int, index: Sequence[tuple[str, int, int]]):
        directory = Path(directory)
        n_d = np.array([d for _, _, d in index], dtype=np.int64)
        self.n_s = n_s
        self.at = np.concatenate([[0], np.cumsum(n_d)]) * n_s
        self.slot = {(m, int(i)): k for k, (m, i, _) in enumerate(index)}
        self.missing = set(self.slot)
        np.save(directory / "model.npy", np.array([m for m, _, _ in index], dtype="<U6"))
        np.save(directory / "instance.npy", np.array([i for _, i, _ in index], dtype=np.int64))
        np.save(directory / "n_d.npy", n_d)
        self.files = {name: np.lib.format.open_memmap(directory / f"{name}.npy", "w+",
                                                      np.float32, shape)
                      for name, shape in [("W_in", (int(self.at[-1]),)),
                                          ("W_out", (int(self.at[-1]),)),
                                          ("b", (len(index), n_s))]}

    def wants(self, model: str, instance: int) -> bool:
        """Whether (model, instance) is one of the kept models."""
        return (model, instance) in self.slot

    def put(self, model: str, instance: int, W_in: np.ndarray, W_out: np.ndarray,
            b: np.ndarray) -> None:
        """Write one kept model: W_in (n_d, n_s), W_out (n_s, n_d), b (n_s,). Raises KeyError
        for a model that is not kept, ValueError for shapes that do not match its n_d."""
        k = self.slot[(model, instance)]
        a, z = self.at[k], self.at[k + 1]
        n_d = (z - a) // self.n_s
        if W_in.shape != (n_d, self.n_s) or W_out.shape != (self.n_s, n_d) or \
                b.shape != (self.n_s,):
            raise ValueError(f"{model} model {instance}: shapes W_in {W_in.shape}, W_out "
                             f"{W_out.shape}, b {b.shape} for n_d = {n_d}, n_s = {self.n_s}")
        self.files["W_in"][a:z] = W_in.ravel()
        self.files["W_out"][a:z] = W_out.ravel()
        self.files["b"][k] = b
        self.missing.discard((model, instance))

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, kind, *_) -> None:
        if kind is None:                    # an interrupted folder is deleted: nothing to flush
            for f in self.files.values():
                f.flush()
        self.files.clear()
        if kind is None and self.missing:
            raise ValueError(f"{len(self.missing)} kept models were never written, e.g. "
                             f"{sorted(self.missing)[0]}")


def read(directory: str | Path) -> dict[Key, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The models of a folder written by :class:`Writer`: {(model, instance): (W_in (n_d, n_s),
    W_out (n_s, n_d), b (n_s,))}, the matrices memory-mapped (read on use)."""
    directory = Path(directory)
    load = lambda name: np.load(directory / f"{name}.npy", mmap_mode="r")  # noqa: E731
    W_in, W_out, b = load("W_in"), load("W_out"), load("b")
    n_s = b.shape[1]
    out, at = {}, 0
    for m, i, d in zip(load("model").tolist(), load("instance").tolist(), load("n_d").tolist()):
        size = d * n_s
        out[(m, i)] = (W_in[at:at + size].reshape(d, n_s), W_out[at:at + size].reshape(n_s, d),
                       b[len(out)])
        at += size
    return out


def nbytes(n_s: int, n_d: Sequence[int]) -> int:
    """Bytes of a folder holding models of these widths (float32; the index not counted)."""
    return 4 * sum((2 * d + 1) * n_s for d in n_d)
