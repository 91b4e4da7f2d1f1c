"""Where the chunks of a trained grid run: in this process, or as Ray tasks on a cluster.

An executor is a callable ``executor(fn, chunks)`` returning an iterator of ``fn(c)`` for every
chunk, in order (tms.engine.train.train_chunks calls it with tms.engine.train.train_chunk). Trained
weights never depend on the executor: a chunk trains with the same numbers in any process, on any
thread count (tms.engine.train.train_chunk). A chunk's ``reduce`` (its scores and statistics) runs
in the chunk's process, with that process's thread count: equal across executors up to rounding.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

import torch

from tms.engine.threads import torch_threads
from tms.engine.train import local_map

#: torch threads of one Ray task (its ``num_cpus``): pinned, whatever OMP_NUM_THREADS says.
RAY_TASK_CPUS = 1


def _in_task(fn: Callable, chunk: Sequence, threads: int):
    with torch_threads(threads):
        return fn(chunk)


def ray_map(device: str, address: str | None = None) -> Callable:
    """An executor that sends every chunk to a Ray task, one GPU each when ``device`` is
    CUDA, RAY_TASK_CPUS CPUs (and as many torch threads) each otherwise.

    Every task is sent at once; their results are handed over in chunk order, each as it is
    asked for. Connects to ``address``, else to ``RAY_ADDRESS`` in the environment, else starts a
    local Ray instance; an already initialised Ray is used as it is. Raises ImportError when Ray
    is not installed.
    """
    import ray

    def run(fn: Callable, chunks: list) -> Iterator:
        connect(address)
        cuda = torch.device(device).type == "cuda"
        task = ray.remote(num_gpus=1 if cuda else 0, num_cpus=RAY_TASK_CPUS)(_in_task)
        for ref in [task.remote(fn, chunk, RAY_TASK_CPUS) for chunk in chunks]:
            yield ray.get(ref)

    return run


def connect(address: str | None = None) -> None:
    """Connect to the Ray cluster at ``address``, else ``RAY_ADDRESS``, else start a local
    instance (nothing if Ray is initialised already). Raises ConnectionError saying where it
    looked when no cluster answers there; ImportError when Ray is not installed."""
    import ray

    if ray.is_initialized():
        return
    where = address or os.environ.get("RAY_ADDRESS")
    try:
        ray.init(address=where)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise ConnectionError(f"no Ray cluster answers at {where!r} "
                              f"({str(err).splitlines()[0] if str(err) else type(err).__name__})"
                              ) from None


def named(name: str, device: str, address: str | None = None) -> Callable:
    """The executor ``name`` for ``device``: ``local`` (:func:`tms.engine.train.local_map`) or
    ``ray`` (:func:`ray_map` on the cluster at ``address``). Raises ValueError for another name."""
    if name == "ray":
        return ray_map(device, address)
    if name == "local":
        return local_map
    raise ValueError(f"executor must be 'local' or 'ray', got {name!r}")
