"""Variants of the default params.yaml for the bad-params tests."""

import copy
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = yaml.safe_load((ROOT / "params.yaml").read_text())
DELETE = object()


def with_value(path: str, value) -> dict:
    """A deep copy of the default params with the dotted ``path`` set to ``value``
    (or removed, for :data:`DELETE`)."""
    raw = copy.deepcopy(DEFAULT)
    *parents, last = path.split(".")
    node = raw
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return raw
