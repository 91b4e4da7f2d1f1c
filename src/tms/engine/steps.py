"""A step's inputs and gradients for the trainer (tms.engine.train): the data streams of a
stack, drawn once per step, turned into each group's sparse inputs, and the losses and gradients
of the step, on the CPU path (:class:`RaggedSteps`) or the GPU path (:class:`BucketSteps`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from tms.engine import models, sampler
from tms.engine.grid import Instance, input_groups, stream
from tms.engine.models import loss_and_grads
from tms.engine.threads import WorkerPool


def scaled(x: torch.Tensor, scale: torch.Tensor | None) -> torch.Tensor:
    """x (I, B, n_s) times the per-feature factors ``scale`` (n_s,), in place; x if None."""
    return x if scale is None else x.mul_(scale)


def stream_generators(insts: Sequence[Instance], order: Sequence[int],
                       gens: Sequence[torch.Generator], device: str) -> dict:
    """The generator of every data stream of the stack (tms.engine.grid.stream), by key: an
    instance's own is its init generator, a shared one is seeded from its data seed, a resumed
    one is its start's."""
    streams = {}
    for key in dict.fromkeys(stream(insts, k) for k in order):
        kind, k = key
        if kind == "shared":
            streams[key] = sampler.stream_generator(k, device)
        elif kind == "own":
            streams[key] = gens[k]
        else:
            streams[key] = torch.Generator(device=device)
            streams[key].set_state(torch.frombuffer(bytearray(insts[k].start.stream),
                                                    dtype=torch.uint8))
    return streams


class RaggedSteps:
    """The CPU path: each step's inputs per group of equal inputs, drawn from its stream, and
    the losses and gradients of tms.engine.models.loss_and_grads (the work shared out to
    ``workers``; the numbers do not depend on their number)."""

    def __init__(self, insts: Sequence[Instance], streams: dict, n_s: int, batch: int,
                 scale: torch.Tensor | None, workers: WorkerPool, device: str):
        self.insts, self.streams, self.batch, self.scale = insts, streams, batch, scale
        self.workers = workers
        self.uniforms = {key: torch.empty(batch, n_s, device=device) for key in streams}

    def regroup(self, live: Sequence[int], model: models.RaggedStack) -> None:
        """The groups of the stack's rows ``live`` (indices into the instances)."""
        self.groups, self.keys, self.group_p = input_groups(self.insts, live)

    def __call__(self, model: models.RaggedStack, grad: torch.Tensor, loss: torch.Tensor
                 ) -> None:
        for key in dict.fromkeys(self.keys):     # the streams still in use, each drawn once
            self.uniforms[key].uniform_(0.0, 1.0, generator=self.streams[key])
        loss_and_grads(model, self.groups, self.x_of, self.batch, grad, loss, self.workers,
                       self.group_p)

    def x_of(self, g: int, rows: slice, out: torch.Tensor) -> torch.Tensor:
        """Rows ``rows`` of the inputs of group g this step: its stream's uniforms turned
        sparse with its p."""
        x = sampler.sparse_from_uniform(self.uniforms[self.keys[g]][rows], self.group_p[g],
                                        out=out)
        return scaled(x, self.scale)


class BucketSteps:
    """The GPU path: every stream's uniforms drawn into one tensor (streams, batch, n_s) on the
    device, each bucket's inputs gathered from it with its instances' p, and the losses and
    gradients of tms.engine.models.bucketed_loss_and_grads: the operations of a step grow with
    the streams and the buckets of equal n_d, never with the models in a bucket."""

    def __init__(self, insts: Sequence[Instance], streams: dict, n_s: int, batch: int,
                 scale: torch.Tensor | None, device: str, matmul_dtype: torch.dtype | None):
        self.insts, self.streams, self.batch, self.scale = insts, streams, batch, scale
        self.device, self.matmul_dtype = device, matmul_dtype
        self.slot = {key: i for i, key in enumerate(streams)}
        self.uniforms = torch.empty(len(streams), batch, n_s, device=device)

    def regroup(self, live: Sequence[int], model: models.RaggedStack) -> None:
        """The buckets of the stack's rows ``live``, each row's p on the device, and where each
        bucket's uniforms are: one stream's slot where all its rows share it (read in place,
        broadcast over the bucket), else the slot of every row."""
        self.buckets = models.equal_width_runs(model.n_d)
        self.keys = list(dict.fromkeys(stream(self.insts, k) for k in live))
        slots = [self.slot[stream(self.insts, k)] for k in live]
        self.source = [slots[a] if len(set(slots[a:b])) == 1
                       else torch.tensor(slots[a:b], device=self.device)
                       for a, b in self.buckets]
        self.row_p = torch.tensor([self.insts[k].p for k in live], device=self.device)

    def __call__(self, model: models.RaggedStack, grad: torch.Tensor, loss: torch.Tensor
                 ) -> None:
        for key in self.keys:
            self.uniforms[self.slot[key]].uniform_(0.0, 1.0, generator=self.streams[key])
        models.bucketed_loss_and_grads(model, self.buckets, self.x_of, self.batch, grad, loss,
                                       self.matmul_dtype)

    def x_of(self, j: int) -> torch.Tensor:
        """The inputs of bucket j this step, (m, batch, n_s)."""
        a, b = self.buckets[j]
        src = self.source[j]
        v = self.uniforms[src] if isinstance(src, int) else self.uniforms.index_select(0, src)
        return scaled(sampler.sparse_from_uniform(v, self.row_p[a:b]), self.scale)
