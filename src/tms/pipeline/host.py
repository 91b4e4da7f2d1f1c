"""This machine in words, as a snapshot names it and as ``make repro`` compares it with the
machine a snapshot was made on: the CPU model and the vector instructions of torch's CPU kernels
decide the bytes of CPU results (another CPU family rounds differently)."""

from __future__ import annotations

import os
import platform


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux, else what the platform says), or
    "unknown CPU"."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            names = [line.split(":", 1)[1].strip() for line in info
                     if line.startswith("model name")]
    except OSError:
        names = []
    return names[0] if names else platform.processor() or "unknown CPU"


def cpu_family() -> str:
    """What decides the bytes of CPU results, in words: the CPU model and the vector instructions
    torch's CPU kernels use, e.g. "AMD EPYC (torch CPU kernels: AVX2)". Two machines of one model
    name can differ in the second (an AMD EPYC with AVX-512 and one without), and another family
    rounds differently."""
    import torch

    return f"{cpu_model()} (torch CPU kernels: {torch.backends.cpu.get_cpu_capability()})"


def machine() -> str:
    """This machine in words: the CPU family (:func:`cpu_family`), core count, torch version,
    and the CUDA device if any."""
    import torch

    gpu = (f", {torch.cuda.get_device_name(0)} (CUDA {torch.version.cuda})"
           if torch.cuda.is_available() else ", no GPU")
    return (f"{platform.machine()} {platform.system()}, {cpu_family()}, {os.cpu_count()} CPU "
            f"cores, torch {torch.__version__}{gpu}")
