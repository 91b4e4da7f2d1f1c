"""What every stage script shares: load and validate params before any work, report errors."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable

from tms.pipeline.params import Params, ParamsError, check_devices, load

PARAMS_FILE = "params.yaml"


def run(main: Callable[[Params], None]) -> None:
    """Validate ``params.yaml`` then call ``main(params)``.

    An invalid params file, or a ``device`` this machine lacks, stops the stage with exit
    status 2 and the message of :class:`ParamsError` (key, value, what is allowed) before
    anything is written. SIGTERM ends the stage like an exception (exit status 143), so
    temporary files of unfinished outputs (tms.pipeline.io.atomic_path) are removed on the way out;
    training checkpoints (tms.engine.checkpoint) stay for the next run to resume from.
    """
    signal.signal(signal.SIGTERM, _terminate)
    try:
        params = load(PARAMS_FILE)
        check_devices(params)
        main(params)
    except ParamsError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


def warn(messages: list[str]) -> None:
    """Print each message as ``warning: …`` on stderr (a valid run that is likely not meant)."""
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)


def _terminate(signum, frame) -> None:
    raise SystemExit(128 + signum)


def grid_n_s(params: Params, description: str) -> int:
    """The ``--n-s`` argument of a per-n_s Persian Rug stage (one DVC matrix item).

    Raises ParamsError unless it is one of persian_rug.grid.n_s.
    """
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--n-s", type=int, required=True)
    n_s = ap.parse_args().n_s
    if n_s not in params.persian_rug.grid.n_s:
        raise ParamsError(f"--n-s {n_s} is not in persian_rug.grid.n_s = "
                          f"{params.persian_rug.grid.n_s}")
    return n_s
