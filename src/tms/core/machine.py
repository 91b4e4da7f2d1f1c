"""What this machine can do: the memory a stage may allocate, the disk its outputs may take, and
how fast it multiplies.

A stage that allocates in proportion to its params predicts its memory before any work and
calls :func:`check_fits`, so a run that cannot fit stops with the numbers (exit status 2, like
any invalid params) instead of an allocator traceback or the kernel's OOM killer; a stage whose
outputs grow so predicts their disk (:func:`check_disk`, counting DVC's cache where it
copies). A training stage also predicts its time (:func:`warn_if_long`) and says so when it can
exceed an hour.
"""

from __future__ import annotations

import configparser
import os
import shutil
import sys
import time
from functools import cache
from pathlib import Path

from tms.core.schema import ParamsError

GiB = 2 ** 30


class MachineError(ParamsError):
    """What the machine could not do once the work began (a process the stage started was
    killed, most often for memory): said in one line, exit status 2, as for invalid params."""


def available_bytes(device: str) -> int:
    """Bytes a stage may allocate on ``device`` now: for a CUDA device the free memory torch
    reports; for the CPU the kernel's MemAvailable (/proc/meminfo, else the physical memory),
    or less where a cgroup (a container) limits this process's memory."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.mem_get_info(torch.device(device))[0]
    have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        with open("/proc/meminfo") as fh:
            have = next(int(line.split()[1]) * 1024 for line in fh
                        if line.startswith("MemAvailable:"))
    except (OSError, StopIteration):
        pass
    return min(have, _cgroup_headroom())


def _cgroup_headroom() -> float:
    """What this process's cgroup (v2) still lets it allocate: memory.max − memory.current, or
    inf where there is no limit."""
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text())
    except (OSError, ValueError):
        return float("inf")
    return float("inf") if limit == "max" else max(0, int(limit) - used)


def check_fits(need: int, device: str, what: str, remedy: str) -> None:
    """Raise ParamsError if ``need`` bytes exceed :func:`available_bytes` of ``device``; the
    message says ``what`` needs them, both numbers, and the ``remedy`` (which params to lower)."""
    have = available_bytes(device)
    if need > have:
        raise ParamsError(f"{what} needs about {need / GiB:.3g} GiB, and {device} has "
                          f"{have / GiB:.3g} GiB available: {remedy}")


#: The cache types (DVC's ``cache.type``) that link an output to the cache instead of copying it.
LINKS = ("hardlink", "symlink")


def disk_copies(repo: str | Path = ".") -> int:
    """How many copies of a pipeline output the disk holds: 1 where DVC's ``cache.type``
    (.dvc/config, overridden by .dvc/config.local) starts with a link (hardlink, symlink), as
    this project's does; else 2 (the output and its copy in DVC's cache). A cache type that
    starts with reflink counts two: most file systems (ext4) cannot reflink, and DVC then leaves
    the files of a directory output in the workspace beside their cache copies, whatever link
    follows (seen with DVC 3.67)."""
    config = configparser.ConfigParser()
    config.read([Path(repo) / ".dvc/config", Path(repo) / ".dvc/config.local"])
    kinds = [k.strip() for k in config.get("cache", "type", fallback="reflink,copy").split(",")]
    return 1 if kinds[0] in LINKS else 2


def check_disk(need: int, what: str, remedy: str, repo: str | Path = ".",
               scratch: int = 0, scratch_is: str = "the checkpoints") -> None:
    """Raise ParamsError if ``need`` bytes (one copy of the outputs ``what`` writes) times
    :func:`disk_copies`, plus ``scratch`` bytes the run needs while it lasts (``scratch_is``:
    its checkpoints, say), exceed the free space of the disk of ``repo``; the message gives both
    numbers and the ``remedy``, and, where DVC's cache copies, how to make it link."""
    copies = disk_copies(repo)
    total = need * copies + scratch
    free = shutil.disk_usage(repo).free
    if total > free:
        parts = ["DVC's cache copy"] * (copies > 1) + [scratch_is] * bool(scratch)
        if copies > 1:
            remedy += ("; or let DVC link outputs to its cache instead of copying them, as this "
                       "project's .dvc/config does (`dvc config cache.type "
                       "hardlink,symlink`)")
        raise ParamsError(f"{what} needs about {total / GiB:.3g} GiB of disk"
                          f"{' (with ' + ' and '.join(parts) + ')' if parts else ''}, and "
                          f"{Path(repo).resolve()} has {free / GiB:.3g} GiB free: {remedy}")


#: No machine this pipeline runs on multiplies fp32 slower than this (FLOP/s): below
#: ``3600 · SLOWEST`` FLOPs no run can take an hour, and the speed is not measured.
SLOWEST = 1e9


@cache
def fp32_flops(device: str) -> float:
    """This machine's fp32 matmul speed on ``device`` (FLOP/s): the fastest of 6 products of
    two 1024 × 1024 matrices, with torch's threads (about 0.1 s)."""
    import torch

    a = torch.rand(1024, 1024, device=device)
    best = float("inf")
    for _ in range(6):
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)
        t = time.perf_counter()
        a @ a
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - t)
    return 2 * 1024 ** 3 / best


def warn_if_long(flops: float, device: str, what: str) -> None:
    """Print one ``warning:`` line on stderr when ``flops`` (an upper bound: to the step cap)
    can take more than an hour at :func:`fp32_flops` of ``device``."""
    if flops <= 3600 * SLOWEST:
        return
    rate = fp32_flops(device)
    hours = flops / rate / 3600
    if hours > 1:
        print(f"warning: {what}: up to {hours:.2g} h at this machine's fp32 matmul speed "
              f"({rate / 1e9:.3g} GFLOP/s on {device}; {flops:.2g} FLOPs to the step cap, "
              f"fewer if the stopping rule ends it sooner)", file=sys.stderr)
