"""The torch device of a params section: its ``device`` key, unless ``TMS_DEVICE`` in the
environment names another, resolved on this machine before any work."""

from __future__ import annotations

import importlib.util
import os
import re
from typing import NamedTuple

from pydantic import BaseModel

from tms.core.schema import DEVICE_PATTERN, ParamsError


def resolve_device(name: str, key: str = "device") -> str:
    """The torch device for a params ``device`` value; ``TMS_DEVICE`` in the environment wins.

    'auto' means CUDA when available, else CPU. Raises ParamsError (before any work), naming
    ``key`` (or ``TMS_DEVICE`` when the environment gave the name), if the name is not auto, cpu,
    cuda or cuda:N, if CUDA is named but absent, or if cuda:N names a GPU this machine does not
    have.
    """
    if "TMS_DEVICE" in os.environ:              # the environment's, named as such in errors
        name, key = os.environ["TMS_DEVICE"], f"TMS_DEVICE (in the environment, over {key})"
    if re.fullmatch(DEVICE_PATTERN, name) is None:
        raise ParamsError(f"{key} = {name!r}: must be 'auto', 'cpu', 'cuda' or 'cuda:N'")
    if name == "cpu":
        return name                 # without importing torch: stages with no model start fast
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ParamsError(f"{key} = {name!r}: CUDA is not available on this machine; "
                          f"use 'cpu' or 'auto'")
    count = torch.cuda.device_count() if name.startswith("cuda:") else 0
    if name.startswith("cuda:") and int(name[5:]) >= count:
        raise ParamsError(f"{key} = {name!r}: this machine has {count} CUDA device(s), "
                          f"cuda:0 to cuda:{count - 1}; use one of them, 'cuda' or 'auto'")
    return name


class Choice(NamedTuple):
    """The device a params ``device: auto`` chose: ``key`` (e.g. ``persian_rug.device``),
    ``device`` (``cpu``, ``cuda:0``) and ``why``; its ``str`` is the line people read."""

    key: str
    device: str
    why: str

    def __str__(self) -> str:
        return f"{self.key} = 'auto': {self.device} ({self.why})"


def check(key: str, section: BaseModel) -> list[Choice]:
    """Resolve the ``device`` of the params section ``key`` on this machine
    (:func:`resolve_device`), so that a device that does not exist stops a stage at validation
    time, and check that its ``compute.precision`` and ``compute.executor`` run there (Ray is an
    optional extra). Returns which device 'auto' chose and why (empty unless the device is
    'auto', after ``TMS_DEVICE``), for the caller to say. Raises ParamsError."""
    name = f"{key}.device"
    chosen = resolve_device(section.device, name)
    if section.compute.precision == "tf32" and not chosen.startswith("cuda"):
        raise ParamsError(f"{key}.compute.precision = 'tf32': needs CUDA, and {name} is "
                          f"{chosen} here; use 'fp32' or 'bf16'")
    if (getattr(section.compute, "executor", "local") == "ray"
            and importlib.util.find_spec("ray") is None):
        raise ParamsError(f"{key}.compute.executor = 'ray': Ray is not installed in this "
                          "environment; `make ray` installs it (pip install -e '.[ray]'), or "
                          "use 'local'")
    if os.environ.get("TMS_DEVICE", section.device) == "auto":
        return [Choice(name, chosen, _why(chosen))]
    return []


def _why(device: str) -> str:
    import torch

    if device == "cpu":
        return "CUDA is not available to this torch build or machine"
    return f"{torch.cuda.get_device_name(device)}, {torch.cuda.device_count()} CUDA device(s)"
