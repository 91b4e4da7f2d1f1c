"""What this machine can hold: the memory a stage may allocate, on the CPU or a CUDA device.

A stage that allocates in proportion to its params predicts its memory before any work and
calls :func:`check_fits`, so a run that cannot fit stops with the numbers (exit status 2, like
any invalid params) instead of an allocator traceback or the kernel's OOM killer.
"""

from __future__ import annotations

import os

from tms.pipeline.params import ParamsError

GiB = 2 ** 30


def available_bytes(device: str) -> int:
    """Bytes a stage may allocate on ``device`` now: for a CUDA device the free memory torch
    reports; for the CPU the kernel's MemAvailable (/proc/meminfo), else the physical memory."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.mem_get_info(torch.device(device))[0]
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_fits(need: int, device: str, what: str, remedy: str) -> None:
    """Raise ParamsError if ``need`` bytes exceed :func:`available_bytes` of ``device``; the
    message says ``what`` needs them, both numbers, and the ``remedy`` (which params to lower)."""
    have = available_bytes(device)
    if need > have:
        raise ParamsError(f"{what} needs about {need / GiB:.3g} GiB, and {device} has "
                          f"{have / GiB:.3g} GiB available: {remedy}")
