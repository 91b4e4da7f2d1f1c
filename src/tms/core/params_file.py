"""Reading a params file: YAML with no aliases and no repeated key, validated by a schema
(the whole file, tms.pipeline.params, or one paper's section), every error reported by key.

A wrong type, an out-of-range value, an unknown or misspelt key or a missing section raises
tms.core.schema.ParamsError, whose message names the key (dotted path), the value and what is
allowed.
"""

from __future__ import annotations

import difflib
import os
import re
import reprlib
import stat
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML, events
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import YAMLError

from tms.core import device
from tms.core.schema import ParamsError

M = TypeVar("M", bound=BaseModel)


def _section_keys(model: type[BaseModel], loc: list[str]) -> list[str]:
    """The keys ``model`` allows in the section holding ``loc`` (a dotted path within it, as
    parts)."""
    for part in [p for p in loc[:-1] if not p.isdigit()]:     # digits: an item of a list
        field = model.model_fields.get(part)
        if field is None:
            return []
        candidates = [field.annotation]
        while candidates:                  # unwrap Annotated / Optional / unions to a section
            t = candidates.pop()
            if isinstance(t, type) and issubclass(t, BaseModel):
                model = t
                break
            candidates += [a for a in typing.get_args(t) if a is not type(None)]
        else:
            return []
    return list(model.model_fields)


def _offending_key(key: str, value: object, msg: str) -> tuple[str, object, str]:
    """A rule checked on a whole section whose message starts ``name = ...`` (name a dotted key
    of that section) is reported at that key, with its value, and without the message's own
    ``name = value: `` where it starts so; else ``(key, value, msg)``."""
    match = re.match(r"([\w.]+) = ", msg)
    node = value
    for part in match.group(1).split(".") if match else []:
        if not isinstance(node, dict) or part not in node:
            return key, value, msg
        node = node[part]
    if not match:
        return key, value, msg
    return f"{key}.{match.group(1)}", node, msg.removeprefix(f"{match.group(0)}{node}: ")


_REPR = reprlib.Repr()
_REPR.maxlist, _REPR.maxdict, _REPR.maxlevel, _REPR.maxstring = 6, 4, 3, 60


def shown(value: object) -> str:
    """``value`` as a message shows it: its repr, long lists and sections cut short (with the
    count of a long list's values)."""
    if isinstance(value, dict):
        text = repr(value)
        return text if len(text) <= 80 else "{...}"
    text = _REPR.repr(value)
    if isinstance(value, list) and len(value) > _REPR.maxlist:
        text += f" ({len(value)} values)"
    return text


def _format(err: ValidationError, source: str, model: type[BaseModel], prefix: list[str]) -> str:
    lines = [f"{source}: invalid parameters"]
    for e in err.errors():
        inner = [str(x) for x in e["loc"]
                 if not str(x).startswith(("function-after", "list[", "Linspace", "literal["))]
        loc = prefix + inner
        key = ".".join(loc)
        if e["type"] == "extra_forbidden":
            allowed = _section_keys(model, inner)
            close = difflib.get_close_matches(loc[-1], allowed, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            lines.append(f"  {key}: unknown key (value {shown(e['input'])}); {hint}allowed "
                         f"keys here: {', '.join(allowed)}")
        elif e["type"] == "missing":
            lines.append(f"  {key}: missing; this key is required")
        else:
            msg = e["msg"].removeprefix("Value error, ")
            key, value, msg = _offending_key(key, e["input"], msg)
            lines.append(f"  {key} = {shown(value)}: {msg}")
    return "\n".join(lines)


def validate(model: type[M], raw: object, source: str = "params", key: str | None = None) -> M:
    """Validate an already-loaded params mapping ``raw`` with ``model``: the whole of it, or with
    ``key`` its section ``raw[key]``. Raises ParamsError naming key and value."""
    if not isinstance(raw, dict):
        raise ParamsError(f"{source}: the top level must be a mapping of sections, got {raw!r}")
    if key is not None and key not in raw:
        raise ParamsError(f"{source}: invalid parameters\n  {key}: missing; this key is required")
    try:
        return model.model_validate(raw if key is None else raw[key])
    except ValidationError as err:
        raise ParamsError(_format(err, source, model, [] if key is None else [key])) from None


def _named(said: object, source: str) -> str:
    """A YAML error or place as text, naming ``source`` where the parser says "<unicode string>"
    (it was given the text, not the file)."""
    return str(said).replace('"<unicode string>"', f'"{source}"')


#: The deepest nesting of lists and mappings a params file may hold (the schema nests 7 deep);
#: thousands would exhaust the YAML reader's recursion.
MAX_DEPTH = 32


def _refuse_what_yaml_cannot_hold_safely(text: str, source: str) -> None:
    """Raise ParamsError, with the line, for an alias (``*name``: nothing needs one, and nested
    ones can expand to billions of nodes), a mapping key that is not a plain scalar, or lists or
    mappings nested deeper than :data:`MAX_DEPTH`."""
    open_: list[list] = []                 # per open collection: [is a mapping, expecting a key]

    def done() -> None:                     # a whole node read: a mapping's key or value
        if open_ and open_[-1][0]:
            open_[-1][1] = not open_[-1][1]

    for event in _YAML().parse(text):
        where = f"\n{_named(event.start_mark, source)}"
        if isinstance(event, events.AliasEvent):
            raise ParamsError(f"{source}: not a valid params file: aliases (*name) are not "
                              f"allowed in a params file; write the value out{where}")
        if (isinstance(event, (events.SequenceStartEvent, events.MappingStartEvent))
                and open_ and open_[-1] == [True, True]):
            raise ParamsError(f"{source}: not a valid params file: a key must be a plain name, "
                              f"not a list or a mapping{where}")
        if isinstance(event, events.ScalarEvent):
            done()
        elif isinstance(event, (events.SequenceStartEvent, events.MappingStartEvent)):
            open_.append([isinstance(event, events.MappingStartEvent), True])
            if len(open_) > MAX_DEPTH:
                raise ParamsError(f"{source}: not a valid params file: lists or mappings nested "
                                  f"more than {MAX_DEPTH} deep{where}")
        elif isinstance(event, (events.SequenceEndEvent, events.MappingEndEvent)):
            open_.pop()
            done()


def _YAML() -> YAML:
    """The reader DVC reads params.yaml with: ruamel.yaml's safe loader, YAML 1.2 (``010`` is
    ten, ``1e-3`` a number, ``yes`` a string), a key given twice an error."""
    return YAML(typ="safe", pure=True)


def parse_yaml(text: str, source: str) -> object:
    """The content of params YAML ``text``, read as DVC reads it (:func:`_YAML`), so that the
    values validated are those DVC records in dvc.lock. Raises ParamsError naming ``source`` and
    the line for invalid YAML, an alias, a key that is not a plain scalar or a key given twice
    in one mapping (YAML would keep the last silently). The parser's own place names ``source``
    too, not the "<unicode string>" it was given."""
    try:
        _refuse_what_yaml_cannot_hold_safely(text, source)
        return _YAML().load(text)
    except DuplicateKeyError as err:
        key = re.search(r'found duplicate key "(.*?)"', str(err))
        raise ParamsError(f"{source}: not a valid params file: key "
                          f"{key.group(1) if key else '?'!r} is given twice in this mapping; "
                          f"give it once\n{_named(err.problem_mark, source)}") from None
    except YAMLError as err:
        raise ParamsError(f"{source}: not a valid params file: {_named(err, source)}") from None


#: The largest params file read (bytes): the default is 10 kB, a profile of every key a few
#: times that; a file past this is a mistake (a pasted table), and parsing it would cost every
#: stage seconds.
MAX_BYTES = 1_000_000


def read_text(path: str | os.PathLike) -> str:
    """The text of a params file (or a profile overlay). Raises ParamsError naming the file for
    one that is not a regular file (a folder, a pipe that would block, a device such as
    /dev/zero, directly or through a link), one over :data:`MAX_BYTES` or bytes that are not
    UTF-8 text; FileNotFoundError if there is none."""
    path = Path(path)
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):
        kind = ("a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
        raise ParamsError(f"{path}: {kind}, not a params file (a YAML text file): remove it "
                          "and put one there (`git checkout params.yaml` restores the default)")
    if (size := path.stat().st_size) > MAX_BYTES:
        raise ParamsError(f"{path}: {size:,} bytes, over the {MAX_BYTES:,} a params file may "
                          "hold; the default is about 10 kB: remove what was pasted into it")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ParamsError(f"{path}: not UTF-8 text (byte {err.start}: "
                          f"{err.object[err.start:err.start + 1]!r}); save it as UTF-8") from None
    return text


def read_yaml(path: str | os.PathLike) -> object:
    """The content of a params YAML file (or a profile overlay): :func:`read_text`, then
    :func:`parse_yaml`. Raises ParamsError or FileNotFoundError as they do."""
    return parse_yaml(read_text(path), str(path))


def load(model: type[M], path: str | os.PathLike = "params.yaml", key: str | None = None) -> M:
    """Read and validate a params file (:func:`read_yaml`, :func:`validate`): the whole file, or
    with ``key`` that section alone. Raises ParamsError (bad content) or FileNotFoundError."""
    return validate(model, read_yaml(path), str(Path(path)), key)


@dataclass(frozen=True)
class Section:
    """A schema and where it sits in a params file: ``key``, one paper's section (its package's
    ``params.SECTION``), or None, the whole file (tms.pipeline.params.SECTION). What a stage
    validates before any work (tms.pipeline.stage.run)."""

    key: str | None
    model: type[BaseModel]

    def parse(self, raw: object, source: str = "params") -> BaseModel:
        """:func:`validate` an already-loaded params mapping. Raises ParamsError."""
        return validate(self.model, raw, source, self.key)

    def load(self, path: str | os.PathLike = "params.yaml") -> BaseModel:
        """:func:`load` from a params file. Raises ParamsError or FileNotFoundError."""
        return load(self.model, path, self.key)

    def check_devices(self, params: BaseModel) -> list[device.Choice]:
        """tms.core.device.check of the section, or of every section of the whole file: what
        each 'auto' device chose, and why. Raises ParamsError."""
        if self.key is not None:
            return device.check(self.key, params)
        return [line for key in type(params).model_fields
                for line in device.check(key, getattr(params, key))]
