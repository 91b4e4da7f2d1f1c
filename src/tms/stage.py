"""What every stage script shares: load and validate params before any work, report errors."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable

from tms.params import Params, ParamsError, check_devices, load
from tms.train import Schedule

PARAMS_FILE = "params.yaml"


def run(main: Callable[[Params], None]) -> None:
    """Validate ``params.yaml`` then call ``main(params)``.

    An invalid params file, or a ``device`` this machine lacks, stops the stage with exit
    status 2 and the message of :class:`ParamsError` (key, value, what is allowed) before
    anything is written. SIGTERM ends the stage like an exception (exit status 143), so
    temporary files of unfinished outputs (tms.io.atomic_path) are removed on the way out;
    training checkpoints (tms.checkpoint) stay for the next run to resume from.
    """
    signal.signal(signal.SIGTERM, _terminate)
    try:
        params = load(PARAMS_FILE)
        check_devices(params)
        main(params)
    except ParamsError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


def _terminate(signum, frame) -> None:
    raise SystemExit(128 + signum)


def schedule(params: Params) -> Schedule:
    """The training schedule of the Persian Rug section."""
    t = params.persian_rug.train
    return Schedule(t.batch_size, t.adam_eps, t.window, t.check_every, t.max_steps,
                    t.diverge_factor)
