"""Progress of a long loop, on a terminal and off it alike.

On a terminal: a tqdm bar on stderr. Off a terminal (``make repro > log``, DVC's output piped,
CI): one line at most every :data:`EVERY` seconds on stderr. On both, that line is a record of
the logger :data:`LOG` (the stage runner, tms.pipeline.stage, writes them to the stages' logs),
with the steps done, what the caller adds (models still training, the loss) and an estimate of
the time left at the rate so far, e.g.

    pr_train@1024: step 3000 of 8000 (38%), active 12, 4m10s elapsed, at most 6m57s left

A record carries its ``event`` (:data:`PROGRESS`, :data:`RESUMED`, :data:`MESSAGE`) and, for a
count, ``done`` and ``total``; for a checkpoint taken up, ``step``.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm

#: Seconds between two progress lines off a terminal.
EVERY = 30.0
#: The logger of progress records (nothing handles them unless a stage runner does).
LOG = logging.getLogger("tms.progress")
#: A record's ``event``: a count (``done`` of ``total``), a checkpoint taken up (``step``, the
#: steps an earlier run did), any other line, a run likely not meant (:data:`LONG`).
PROGRESS, RESUMED, MESSAGE, WARNING = "progress", "resumed", "message", "warning"
#: Seconds of work after which the time left is judged from the measured speed, and the time
#: left (at that speed, to the total) that earns one ``warning:`` line: a run of more than an
#: hour that a params edit made by mistake (a step cap 1000 times too large) says so early,
#: whatever the estimate in FLOPs said before it began (tms.core.machine.warn_if_long).
MEASURE, LONG = 10.0, 3600.0


def _clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


class Progress:
    """Progress of ``total`` ``unit``s named ``desc``; ``bound``: the total is an upper bound
    (a step cap a stopping rule may undercut), so the time left is "at most". Use as a context
    manager, or call :meth:`close`."""

    def __init__(self, desc: str, total: int, unit: str = "step", bound: bool = False,
                 every: float = EVERY, clock: Callable[[], float] = time.monotonic,
                 terminal: bool | None = None) -> None:
        self.desc, self.total, self.unit, self.bound, self.every = desc, total, unit, bound, every
        self.clock, self.done, self.resumed, self.info, self.warned = clock, 0, 0, "", False
        self.start = self.last = clock()
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self.bar = (tqdm(total=total, desc=desc, unit=unit, mininterval=2.0, leave=False)
                    if self.terminal else None)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def line(self) -> str:
        """The progress line as it stands."""
        elapsed = self.clock() - self.start
        share = self.done / self.total if self.total else 1.0
        ran = self.done - self.resumed                       # done in this run
        left = (elapsed / ran * (self.total - self.done)) if ran else None
        return (f"{self.desc}: {self.unit} {self.done} of {self.total} ({share:.0%})"
                + (f", {self.info}" if self.info else "") + f", {_clock(elapsed)} elapsed"
                + ("" if left is None else
                   f", {'at most ' if self.bound else ''}{_clock(left)} left"))

    def update(self, n: int = 1, **info) -> None:
        """``n`` more done; ``info``: what to show beside the count (e.g. ``active=12``)."""
        self.done += n
        if info:
            self.info = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                  for k, v in info.items())
        if self.bar is not None:
            self.bar.update(n)
            if info:
                self.bar.set_postfix(info, refresh=False)
        if not self.warned:
            self._warn_if_long()
        if self.clock() - self.last >= self.every:
            self.last = self.clock()
            if self.bar is None:
                print(self.line(), file=sys.stderr, flush=True)
            LOG.info(self.line(), extra={"event": PROGRESS, "done": self.done,
                                         "total": self.total})

    def _warn_if_long(self) -> None:
        """After :data:`MEASURE` seconds of this run's work, once: a ``warning:`` line (a
        :data:`WARNING` record) if the rest, at the speed so far, takes more than :data:`LONG`."""
        elapsed, ran = self.clock() - self.start, self.done - self.resumed
        if elapsed < MEASURE or not ran:
            return
        self.warned = True
        left = elapsed / ran * (self.total - self.done)
        if left > LONG:
            self._say(f"warning: {self.desc}: {'up to ' if self.bound else ''}{_clock(left)} "
                      f"left at the speed of its first {_clock(elapsed)} ({self.total} "
                      f"{self.unit}s{' at most' if self.bound else ''}); stop it (Ctrl-C) if "
                      f"that is not meant", {"event": WARNING}, logging.WARNING)

    def resume(self, n: int) -> None:
        """``n`` more done by an earlier run (a checkpoint taken up at step ``n``): counted as
        done, and left out of the rate that estimates the time left; said in a line of its own
        (a :data:`RESUMED` record)."""
        self.done += n
        self.resumed += n
        if self.bar is not None:
            self.bar.n = self.bar.initial = self.bar.last_print_n = self.done
            self.bar.refresh()
        self._say(f"{self.desc}: resuming from the checkpoint at {self.unit} {n}",
                  {"event": RESUMED, "step": n})

    def write(self, message: str) -> None:
        """A line of its own: above the bar on a terminal, else on stderr; a :data:`MESSAGE`
        record on both."""
        self._say(message, {"event": MESSAGE})

    def _say(self, message: str, record: dict, level: int = logging.INFO) -> None:
        if self.bar is not None:
            self.bar.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr, flush=True)
        LOG.log(level, message, extra=record)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@contextmanager
def heartbeat(desc: str, every: float = EVERY, terminal: bool | None = None) -> Iterator[None]:
    """While the block runs, off a terminal, a line ``desc: still running, 1m30s elapsed`` every
    ``every`` seconds (on stderr, and a :data:`MESSAGE` record), for work whose own steps cannot
    be counted from here (a notebook's cells run by papermill). On a terminal: nothing."""
    if sys.stderr.isatty() if terminal is None else terminal:
        yield
        return
    stop, start = threading.Event(), time.monotonic()

    def beat() -> None:
        while not stop.wait(every):
            line = f"{desc}: still running, {_clock(time.monotonic() - start)} elapsed"
            print(line, file=sys.stderr, flush=True)
            LOG.info(line, extra={"event": MESSAGE})
    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
