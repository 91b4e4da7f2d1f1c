"""Torch's intra-op thread count for a block of code.

Small stacks of tiny models run faster on one thread: a second thread only adds
synchronisation (measured 2–10× slower on a busy 2-core machine).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


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
