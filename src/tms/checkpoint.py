"""Checkpoints of long training runs, so a killed stage resumes where it stopped.

A stage's checkpoints live in ``.checkpoints/<stage>/<key>/`` beside the repository's
``dvc.yaml`` — outside every DVC out, since DVC deletes a stage's outs before running it. The
key is a hash of the params the stage reads (and its arguments), so a checkpoint is only ever
resumed by a run of the same stage with the same params; checkpoints of other params of the
same stage are deleted when a run starts. Each checkpoint file is written atomically
(tms.io.atomic_path) and the stage removes the whole directory after its outputs are written.

The trainer (tms.train) saves one file per stack of models: the full training state every
``every`` steps (at the next stopping-rule check), and the final results once the stack is
done, so that a resumed run gives the same bytes as an uninterrupted one on CPU.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from pydantic import BaseModel

from tms.io import atomic_path
from tms.models import AutoencoderStack, BatchedAdam

ROOT = Path(".checkpoints")


def digest(*parts: object) -> str:
    """A short stable hash of ``parts`` (pydantic models as their JSON, others as repr)."""
    text = json.dumps([p.model_dump(mode="json") if isinstance(p, BaseModel) else repr(p)
                       for p in parts], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Checkpoints:
    """Where the checkpoints of one stage run go and how often they are written.

    directory: ``.checkpoints/<stage>/<key>``; every: steps between checkpoints (≥ 1).
    """

    directory: Path
    every: int

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.pt"

    def load(self, name: str) -> dict | None:
        """The state saved under ``name``, or None if there is none."""
        path = self.path(name)
        return torch.load(path, map_location="cpu", weights_only=False) if path.exists() else None

    def save(self, name: str, state: dict) -> None:
        """Write ``state`` (tensors, numpy arrays, plain values) under ``name``, atomically."""
        with atomic_path(self.path(name)) as tmp:
            torch.save(state, tmp)

    def due(self, last: int, step: int) -> bool:
        """Whether a checkpoint is due at ``step`` when the last one was taken at ``last``."""
        return step // self.every > last // self.every

    def clear(self) -> None:
        """Remove this run's checkpoints (after the stage's outputs are written)."""
        shutil.rmtree(self.directory, ignore_errors=True)
        for parent in (self.directory.parent, self.directory.parent.parent):
            if parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()


def for_stage(stage: str, every: int, *params: object, root: Path = ROOT) -> Checkpoints | None:
    """The checkpoints of one run of ``stage`` keyed by the params it reads (``params``:
    sections and arguments), or None when ``every`` is 0 (checkpointing off).

    Checkpoints of the same stage under other params are deleted: no run can resume them.
    Raises ValueError for a negative ``every``.
    """
    if every < 0:
        raise ValueError(f"checkpoint_every must be >= 0, got {every}")
    if every == 0:
        return None
    directory = root / stage / digest(*params)
    if directory.parent.is_dir():
        for other in directory.parent.iterdir():
            if other != directory:
                shutil.rmtree(other, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)
    return Checkpoints(directory, every)


def pack(step: int, live: list[int], model: AutoencoderStack, opt: BatchedAdam,
         p: torch.Tensor, losses: np.ndarray, results: dict, gens: list[torch.Generator]) -> dict:
    """The full state of a stack in training (tms.train) after ``step`` steps: the live rows,
    weights, Adam's moments, step count and learning rates, the feature probabilities, every
    loss so far (losses[:, :step]), the finished results and every generator's state."""
    return {"done": False, "step": step, "live": list(live), "n_d": list(model.n_d),
            "params": [t.cpu() for t in (model.W_in, model.W_out, model.b)],
            "adam": {"t": opt.t, "lr": opt.lr.cpu(), "m": [m.cpu() for m in opt.m],
                     "v": [v.cpu() for v in opt.v]},
            "p": p.cpu(), "losses": losses[:, :step].copy(), "results": dict(results),
            "gens": [g.get_state() for g in gens]}


def unpack(state: dict, model: AutoencoderStack, opt: BatchedAdam, losses: np.ndarray,
           gens: list[torch.Generator]) -> tuple[int, list[int], AutoencoderStack, torch.Tensor,
                                                 dict]:
    """Restore a state written by :func:`pack` into a freshly built stack: fills ``losses``,
    ``opt`` and ``gens`` in place; returns (step, live, model, p, results)."""
    device = model.W_in.device
    W_in, W_out, b = (t.to(device) for t in state["params"])
    model = AutoencoderStack(W_in, W_out, b, state["n_d"], model.relu, model.bias)
    adam = state["adam"]
    opt.t, opt.lr = adam["t"], adam["lr"].to(device)
    opt.m = [m.to(device) for m in adam["m"]]
    opt.v = [v.to(device) for v in adam["v"]]
    step = state["step"]
    losses[:, :step] = state["losses"]
    for g, s in zip(gens, state["gens"]):
        g.set_state(s)
    return step, state["live"], model, state["p"].to(device), state["results"]
