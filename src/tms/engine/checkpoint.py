"""Checkpoints of long training runs, so a killed stage resumes where it stopped.

A stage's checkpoints live in ``.checkpoints/<stage>/<key>/`` beside the repository's
``dvc.yaml`` — outside every DVC out, since DVC deletes a stage's outs before running it. The
key is a hash of the params the stage reads (and its arguments) and of the source files the
stage runs (:func:`code_digest`), so a checkpoint is only ever resumed by a run of the same
stage with the same params and code; checkpoints of other keys of the same stage are deleted when a run starts. Each
checkpoint file is written atomically (tms.core.io.atomic_path) and carries the sha256 of
its content: a file that fails it (a flipped bit, a truncation) is discarded with one line on
the console, and its stack trains from the start. The stage removes the whole directory after
its outputs are written.

The trainer (tms.engine.train) saves one file per stack of models: the full training state every
``every`` steps (at the next stopping-rule check), and the final results once the stack is
done, so that a resumed run gives the same bytes as an uninterrupted one on CPU.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import torch
from pydantic import BaseModel

from tms.core import code_deps
from tms.core.io import CHECKPOINTS as ROOT
from tms.core.io import atomic_path
from tms.core.schema import ParamsError

#: The first bytes of a checkpoint file, then the sha256 (hex) of the rest and a newline.
MAGIC = b"tms-checkpoint sha256:"


@cache
def code_digest(script: str | None = None) -> str:
    """A hash of the project files that ``script`` runs (default: the running script,
    ``sys.argv[0]``): tms.core.code_deps.executed, the same files its stage declares in
    dvc.yaml, so an edit of code the stage does not run keeps its checkpoints. A script outside
    the repository's stages/ and bench/ (an interactive session, a test runner) hashes every
    source file of the package instead. Raises FileNotFoundError for a ``script`` that is
    missing."""
    entry = Path(script or sys.argv[0]).resolve()
    if any(entry.is_relative_to(code_deps.ROOT / d) for d in ("stages", "bench")):
        files = code_deps.executed([entry])
    else:
        files = set((code_deps.SRC / "tms").rglob("*.py"))
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(str(path.relative_to(code_deps.ROOT)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


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

    def load(self, name: str, device: str = "cpu") -> dict | None:
        """The state saved under ``name`` with its tensors on ``device``; None if there is
        none, or if the file fails its checksum or cannot be read (then it is deleted, and one
        line on stderr says so)."""
        path = self.path(name)
        if not path.exists():
            return None
        data = path.read_bytes()
        head, _, body = data.partition(b"\n")
        problem = None
        if not head.startswith(MAGIC):
            problem = "not a checkpoint of this project"
        elif head[len(MAGIC):].decode(errors="replace") != hashlib.sha256(body).hexdigest():
            problem = f"its content fails its sha256 ({len(data)} bytes: corrupted or truncated)"
        else:
            try:
                return torch.load(io.BytesIO(body), map_location=device, weights_only=False)
            except Exception as err:          # noqa: BLE001  (whatever torch makes of it)
                problem = f"it cannot be read ({type(err).__name__})"
        print(f"discarding the checkpoint {path}: {problem}; this stack trains from the start",
              file=sys.stderr)
        path.unlink()
        return None

    def save(self, name: str, state: dict) -> None:
        """Write ``state`` (tensors, numpy arrays, plain values) under ``name``, atomically,
        with the sha256 of its content."""
        buf = io.BytesIO()
        torch.save(state, buf)
        body = buf.getvalue()
        with atomic_path(self.path(name)) as tmp:
            tmp.write_bytes(MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)

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
    sections and arguments) and :func:`code_digest`, or None when ``every`` is 0
    (checkpointing off).

    Checkpoints of the same stage under another key are deleted: no run can resume them.
    Raises ValueError for a negative ``every``, ParamsError (before any training) where a file
    stands in the folders' place.
    """
    if every < 0:
        raise ValueError(f"checkpoint_every must be >= 0, got {every}")
    if every == 0:
        return None
    for place in (root, root / stage):
        if place.exists() and not place.is_dir():
            raise ParamsError(f"{place} is a file where the checkpoints' folder goes: remove it "
                              f"(`rm {place}`; checkpoints are only for resuming a killed run) "
                              f"and run again")
    directory = (root / stage / digest(code_digest(), *params)).absolute()   # same in Ray tasks
    if directory.parent.is_dir():
        for other in directory.parent.iterdir():
            if other != directory:
                shutil.rmtree(other, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)
    return Checkpoints(directory, every)


def pack(step: int, live: list[int], model: object, opt: object, losses: np.ndarray,
         results: dict, generators: dict[str, torch.Generator]) -> dict:
    """The full state of a stack in training (tms.engine.train) after ``step`` steps: the live rows,
    the model and its optimiser (weights, Adam's moments, step count, learning rates), every
    loss so far (losses[:, :step]), the finished results and each named generator's state."""
    return {"done": False, "step": step, "live": list(live), "model": model, "opt": opt,
            "losses": losses[:, :step].copy(), "results": dict(results),
            "generators": {k: g.get_state().cpu().numpy().tobytes()
                           for k, g in generators.items()}}


def unpack(state: dict, losses: np.ndarray, generators: dict[str, torch.Generator]
           ) -> tuple[int, list[int], object, object, dict]:
    """Restore a state written by :func:`pack`: fills ``losses`` and sets each generator's
    state in place; returns (step, live, model, opt, results)."""
    step = state["step"]
    losses[:, :step] = state["losses"]
    for k, g in generators.items():
        g.set_state(torch.frombuffer(bytearray(state["generators"][k]), dtype=torch.uint8))
    return step, state["live"], state["model"], state["opt"], state["results"]
