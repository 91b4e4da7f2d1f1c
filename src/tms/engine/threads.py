"""Torch's intra-op thread count for a block of code, and a pool of single-threaded workers.

Small stacks of tiny models run faster on one thread: a second thread only adds
synchronisation (measured 2–10× slower on a busy 2-core machine). Larger stacks are shared
out by the training engine as whole pieces of work, each run by one :class:`WorkerPool`
thread on one intra-op thread, so that the numbers never depend on the thread count.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import torch

T = TypeVar("T")
R = TypeVar("R")


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``n`` torch threads (None: leave the setting alone), then restore it.
    Also usable as a decorator."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class WorkerPool:
    """``n`` worker threads, each running torch on one intra-op thread, started once and kept
    for the life of a training stack (no thread start-up per step). A context manager; with
    n = 1 no thread is started and :meth:`map` runs in the caller. Raises ValueError if n < 1.
    """

    def __init__(self, n: int):
        if n < 1:
            raise ValueError(f"a worker pool needs at least one thread, got {n}")
        self.n = n
        # a new thread starts with torch's default intra-op thread count: set it to one
        self._pool = (ThreadPoolExecutor(n, initializer=torch.set_num_threads, initargs=(1,))
                      if n > 1 else None)

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """[fn(item) for item in items], the items run side by side on the workers."""
        if self._pool is None or len(items) < 2:
            return [fn(item) for item in items]
        return list(self._pool.map(fn, items))

    def close(self) -> None:
        """Stop the threads (waiting for running work)."""
        if self._pool is not None:
            self._pool.shutdown()

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


#: The pool of one worker: the caller's own thread.
SERIAL = WorkerPool(1)


def near_equal(n: int, k: int) -> list[slice]:
    """``range(n)`` cut into k consecutive near-equal slices (k ≥ 1)."""
    cuts = [n * j // k for j in range(k + 1)]
    return [slice(a, b) for a, b in zip(cuts[:-1], cuts[1:])]
