"""What every stage script shares: its command line, params validated before any work, errors
reported, and its time logged.

Each script under ``stages/`` ends with ``stage.run(main, __doc__, ..., params=SECTION)``,
SECTION the params section it reads (its paper's ``params.SECTION``, or the whole file's,
tms.pipeline.params.SECTION), so that a stage runs, and depends on, its own paper's schema
alone. ``--help`` prints the script's docstring and arguments and exits before params are read
or anything is written.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from tms.core import machine, progress
from tms.core.params_file import Section, read_yaml
from tms.core.schema import ParamsError
from tms.pipeline import dvc_state

PARAMS_FILE = "params.yaml"

#: The stages' log for people: a time-stamped line per record of every stage run (its start, its
#: end with seconds and exit status, warnings, errors, the device 'auto' chose, progress lines
#: off a terminal), appended; git-ignored, and outside every output DVC hashes.
LOG_FILE = Path("logs/repro.log")
#: The same records for programs (tms.pipeline.repro.stage_times, the snapshot): one JSON object a
#: line, ``at`` (UTC, ISO 8601), ``stage``, ``event``, ``message`` and the event's own fields.
RECORDS_FILE = Path("logs/stages.jsonl")
#: The runner's own events: a run began; it ended (``seconds``, ``status``: the exit status); a
#: warning; an error; the device a params ``device: auto`` chose (``key``, ``device``, ``why``).
#: The progress of its work comes as tms.core.progress's records.
STARTED, ENDED, ERROR, DEVICE = "started", "ended", "error", "device"
WARNING = progress.WARNING
#: The logger of the stages' records: tms.core.progress's are its children's.
LOG = logging.getLogger("tms")

#: ``--n-s`` of a per-n_s Persian Rug stage (one item of a DVC ``matrix``).
N_S = ("--n-s", {"type": int, "required": True, "metavar": "N_S", "dest": "n_s",
                 "help": "the n_s of the grid to run: one of persian_rug.grid.n_s"})


def run(main: Callable[..., None], doc: str, *arguments: tuple[str, dict], params: Section,
        argv: list[str] | None = None) -> None:
    """Parse the command line, validate ``params``'s section of ``params.yaml``, then call
    ``main(section, **arguments)``.

    ``doc``: the script's docstring (the ``--help`` text). ``arguments``: ``(flag, kwargs)`` pairs
    for ``argparse.ArgumentParser.add_argument`` (e.g. :data:`N_S`); their parsed values are
    passed to ``main`` as keyword arguments. ``--help`` exits 0 before anything is read or written.

    An invalid params file, a ``device`` this machine lacks, or a disk without room for the
    stage's outputs (:func:`check_disk`) stops the stage with exit status 2 and the message of
    :class:`ParamsError` (key, value, what is allowed; or both numbers) before anything is
    written; a disk that fills during the stage (ENOSPC, EDQUOT, or EFBIG past ``ulimit -f``),
    or its params section edited while it ran (:func:`check_unchanged`: DVC would record the new
    values), ends it with exit status 2 and one line. SIGTERM ends the stage like an exception
    (exit status 143), and SIGINT as KeyboardInterrupt even if it was ignored, so temporary
    files of unfinished outputs (tms.core.io.atomic_path) are removed on the way out; training
    checkpoints (tms.engine.checkpoint) stay for the next run to resume from. The stage's wall
    time and exit status go to stderr and, with everything it logs (its progress,
    tms.core.progress), to the stages' logs :data:`LOG_FILE` and :data:`RECORDS_FILE`.
    """
    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    for flag, kwargs in arguments:
        parser.add_argument(flag, **kwargs)
    args = vars(parser.parse_args(argv))
    name = (os.environ.get("DVC_STAGE")
            or " ".join([Path(sys.argv[0]).stem, *map(str, args.values())]))
    _handle_signals()
    log_to_files(name)
    start, status = time.perf_counter(), 1
    LOG.info("started", extra={"event": STARTED})
    try:
        section, read = _load(params)
        for choice in params.check_devices(section):
            LOG.info(str(choice), extra={"event": DEVICE, **choice._asdict()})
        check_disk(os.environ.get("DVC_STAGE"))
        main(section, **args)
        check_unchanged(params, read)
        status = 0
    except (ParamsError, OSError) as err:
        if isinstance(err, OSError) and err.errno not in (errno.ENOSPC, errno.EDQUOT,
                                                          errno.EFBIG):
            raise
        _say(f"error: {_failure(err)}", logging.ERROR, event=ERROR)
        status = 2
        sys.exit(2)
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
        raise
    except KeyboardInterrupt:
        status = 130
        raise
    finally:
        seconds = time.perf_counter() - start
        ended = "done" if status == 0 else f"failed (exit status {status})"
        _say(f"{ended} in {seconds:.1f} s", event=ENDED, seconds=seconds, status=status,
             named=True)
        log_to_files(None)


def _load(params: Section) -> tuple[object, str]:
    """The stage's params section of :data:`PARAMS_FILE`, validated, and the digest of what was
    read (:func:`section_digest`). Raises ParamsError."""
    if not Path(PARAMS_FILE).exists():
        raise ParamsError(f"{PARAMS_FILE} is missing: `git checkout {PARAMS_FILE}` restores "
                          "the default, `make profile PROFILE=…` writes a profile")
    raw = read_yaml(PARAMS_FILE)
    return params.parse(raw, PARAMS_FILE), _digest(raw, params)


def section_digest(params: Section, path: str | Path = PARAMS_FILE) -> str:
    """A hash of the values of ``params``'s section of the params file ``path`` as YAML parses
    them (comments and layout do not count); "unreadable" for a file that cannot be read or
    parsed."""
    try:
        return _digest(read_yaml(path), params)
    except (ParamsError, OSError):
        return "unreadable"


def _digest(raw: object, params: Section) -> str:
    value = raw.get(params.key) if params.key is not None and isinstance(raw, dict) else raw
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def check_unchanged(params: Section, read: str, path: str | Path = PARAMS_FILE) -> None:
    """Raise ParamsError if ``params``'s section of ``path`` no longer has the digest ``read``
    (:func:`section_digest`, taken when the stage read it): an edit while the stage ran."""
    if section_digest(params, path) != read:
        section = params.key or "the params"
        raise ParamsError(f"{path} changed while this stage ran ({section} is not what it read "
                          f"at its start): its outputs are from the old values, and DVC would "
                          f"record the new ones, so it records nothing; run again")


def _failure(err: ParamsError | OSError) -> str:
    """What stops the stage: the params' message, or the disk's (ENOSPC, EDQUOT, EFBIG)."""
    if isinstance(err, ParamsError):
        return str(err)
    what = (f"a file grew past this shell's limit on file size (`ulimit -f` is "
            f"{_file_limit()})" if err.errno == errno.EFBIG else "the disk filled")
    fix = "raise the limit" if err.errno == errno.EFBIG else "free space"
    return (f"{what} while writing ({err.filename or 'an output'}): {fix} and run again; no "
            f"output was left half-written (each is written under a temporary name, removed on "
            f"the way out), and checkpoints resume the training")


def _file_limit() -> str:
    import resource

    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return "unlimited" if soft == resource.RLIM_INFINITY else f"{soft // 1024} blocks of 1 KiB"


#: Free disk a stage keeps beyond its outputs' last sizes (their sizes can grow with the params,
#: and its temporary files, logs and DVC's own files need room).
DISK_MARGIN = 256 * 2**20


def check_disk(stage_name: str | None, lock: str | Path = "dvc.lock") -> None:
    """Raise ParamsError before any work if the disk lacks room for every output of the DVC
    stage ``stage_name`` (tables, weights, figures, notebooks): their sizes at its last run, as
    ``lock`` records them, times the copies DVC keeps (tms.core.machine.check_disk), plus
    :data:`DISK_MARGIN`. A stage never run counts the margin alone; ``stage_name`` None (the
    script run outside DVC) checks the margin."""
    entry = (dvc_state.recorded_stages(lock).get(stage_name) or {}) if stage_name else {}
    need = sum(out.get("size", 0) for out in (entry.get("outs") or []))
    machine.check_disk(need, f"stage {stage_name or 'outputs'} (its outputs as last written)",
                       "free disk space (the outputs' sizes are those of the stage's last run, "
                       "as dvc.lock records them, whatever profile it ran)", scratch=DISK_MARGIN,
                       scratch_is=f"a margin of {DISK_MARGIN // 2**20} MiB")


def warn(messages: list[str]) -> None:
    """Print each message as ``warning: …`` on stderr and log it (a :data:`WARNING` record: a
    valid run that is likely not meant)."""
    for message in messages:
        _say(f"warning: {message}", logging.WARNING, event=WARNING)


def check_n_s(pr, n_s: int) -> int:
    """``n_s`` (the ``--n-s`` of :data:`N_S`), checked against the grid of ``pr``, the
    persian_rug section (tms.persian_rug.params.PersianRug).

    Raises ParamsError unless it is one of persian_rug.grid.n_s.
    """
    if n_s not in pr.grid.n_s:
        raise ParamsError(f"--n-s {n_s} is not in persian_rug.grid.n_s = {pr.grid.n_s}")
    return n_s


def _say(message: str, level: int = logging.INFO, named: bool = False, **record) -> None:
    """Print ``message`` on stderr (after the stage's name, ``named``) and log it as a record
    with the fields ``record`` (its ``event`` among them)."""
    print(f"{_STAMP.stage}: {message}" if named else message, file=sys.stderr)
    LOG.log(level, message, extra=record)


class _Stamp(logging.Filter):
    """Gives every record the stage's name (``stage``) and its UTC time (``at``)."""

    stage = "stage"

    def filter(self, record: logging.LogRecord) -> bool:
        record.stage = self.stage
        record.at = datetime.fromtimestamp(record.created, timezone.utc).isoformat(
            timespec="seconds")
        return True


_STAMP = _Stamp()
#: The fields of a record written to :data:`RECORDS_FILE` besides ``at``, ``stage``, ``event`` and
#: ``message``, where it has them.
FIELDS = ("done", "total", "step", "seconds", "status", "key", "device", "why")


class _Append(logging.Handler):
    """Appends each record as one line ``line(record)`` to ``path``, in one write (stages may
    run at once). A log that cannot be written (a read-only checkout) is skipped; the run is
    unaffected."""

    def __init__(self, path: Path, line: Callable[[logging.LogRecord], str]) -> None:
        super().__init__()
        self.path, self.line = path, line
        self.addFilter(_STAMP)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.line(record)
            self.path.parent.mkdir(exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError:
            pass


def _text(record: logging.LogRecord) -> str:
    return f"{record.at} {record.stage}: {record.getMessage()}"


def _json(record: logging.LogRecord) -> str:
    fields = {k: getattr(record, k) for k in FIELDS if hasattr(record, k)}
    return json.dumps({"at": record.at, "stage": record.stage,
                       "event": getattr(record, "event", "message"),
                       "message": record.getMessage(), **fields}, ensure_ascii=False)


def log_to_files(stage: str | None) -> None:
    """Send the records of :data:`LOG` and its children (tms.core.progress) to :data:`LOG_FILE`
    and :data:`RECORDS_FILE`, each named with ``stage``, in place of what an earlier call set;
    None: nowhere any more (the stage has ended)."""
    for handler in [h for h in LOG.handlers if isinstance(h, _Append)]:
        LOG.removeHandler(handler)
    LOG.setLevel(logging.NOTSET if stage is None else logging.INFO)
    LOG.propagate = stage is None       # a stage's records: printed by the runner itself
    if stage is not None:
        _STAMP.stage = stage
        LOG.addHandler(_Append(LOG_FILE, _text))
        LOG.addHandler(_Append(RECORDS_FILE, _json))


def _handle_signals() -> None:
    """SIGTERM ends the stage like an exception; Ctrl-C stops it even when it was started with
    SIGINT ignored (a background job of a shell ignores it, and Python then leaves it ignored).
    Once one has come, a repeat of it is ignored, so that the same signal twice (a process
    group's, passed on again by the client of a warm start: stages/starter.py) cannot cut the
    clean-up short; the other still stops the stage."""
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)


def _stop(signum, frame) -> None:
    signal.signal(signum, signal.SIG_IGN)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)
