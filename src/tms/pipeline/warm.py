"""A warm starter for the stages of one ``dvc repro``: ``stages/starter.py``, run beside DVC.

Each stage is a fresh Python process (DVC runs its command), and importing torch, pandas and
scipy takes it 1–2.5 s: about as long as DVC's own bookkeeping, and most of a short stage's time.
Under :func:`starter`, every stage's ``python stages/run.py …`` hands its stage to a process
that has imported them once, which forks a child to run it; the child is the stage as its own
process would run it (stages/starter.py says what it keeps and when it declines), so the
outputs are the same bytes (tests/pipeline/test_warm.py). Measured on two cores: 2.4 s → 0.3 s
for a stage of 0.2 s of work (docs/benchmarks.md, "Warm starts").
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

#: The variable naming the starter's socket (stages/starter.py's and stages/run.py's STARTER).
STARTER = "TMS_STAGE_STARTER"
#: The starter, relative to the repository root.
STARTER_SCRIPT = Path("stages/starter.py")
#: Seconds the starter is given, once stopped, for the stages it runs to end.
GRACE = 60


@contextlib.contextmanager
def starter(env: dict[str, str], root: str | os.PathLike = ".") -> Iterator[dict[str, str]]:
    """Run a warm starter for the block: yields ``env`` with :data:`STARTER` set, the
    environment to run ``dvc repro`` in ``root`` with; the starter is stopped on the way out.
    Where fork and ``os.pidfd_open`` are not both available (not Linux, or a kernel before 5.3),
    nothing is started and ``env`` is yielded as it is: the stages start cold."""
    if not _pidfds():
        yield env
        return
    with tempfile.TemporaryDirectory(prefix="tms-stages-") as folder:
        socket = Path(folder) / "starter"
        env = {**env, STARTER: str(socket)}
        server = subprocess.Popen([sys.executable, str(STARTER_SCRIPT), str(socket)],
                                  cwd=root, env=env, stdin=subprocess.DEVNULL)
        try:
            while not socket.exists() and server.poll() is None:   # listening in milliseconds
                time.sleep(0.005)
            yield env
        finally:                      # it stops taking stages, and ends with the last it runs
            server.terminate()
            try:
                server.wait(GRACE)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _pidfds() -> bool:
    """Whether this system gives a process's file descriptor (os.pidfd_open: Linux 5.3 on)."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True
