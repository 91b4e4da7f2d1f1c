"""The warm starter of the stages, run beside ``dvc repro`` by tms.pipeline.warm:

    python stages/starter.py SOCKET

A stage started as its own process spends 1–2.5 s importing torch, pandas and scipy and about a
second tearing them down at its end. This process imports them once (:data:`PRELOAD`) and
listens at SOCKET, a Unix socket; ``python stages/run.py …`` hands it its stage
(:func:`hand_over`), and it forks a child that runs the stage as that process would have: the
same ``stages/run.py``, arguments, working folder, environment, standard streams, SIGINT
disposition and process group; the client waits and ends as the child ends (its exit status, or
the signal that killed it), passing on the signals it gets.

It declines (the client then runs the stage itself) while its imports are under way, and
wherever a library imported here could differ from one the stage would import: another
interpreter or interpreter options, another ``sys.path``, another session (the child must join
its client's process group), other resource limits, umask, CPU affinity or niceness, another
environment but for DVC's and the shell's per-stage variables, or another working folder where
either has a file those libraries read as they are imported (:data:`FOLDER_FILES`). A warm child
still shares with its siblings, by design: the hash seed and numpy's unseeded global generator
(no stage draws from either: every draw is seeded from params), the warning filters the
preloaded libraries install, and the threads they start at import (OpenBLAS's, pyarrow's
jemalloc thread), which their own fork handlers rebuild in the child.

Protocol: one message each way on a SOCK_SEQPACKET connection. The client sends its request
(JSON, :func:`_request`) with its standard streams' file descriptors attached; the starter
answers ``no: WHY`` or ``pid N``, then, when the child ends, its wait status in decimal. A
client that goes away has its stage stopped with SIGTERM. SIGTERM stops the starter taking
stages; it ends once its running stages have ended and their clients have their status.
Standard library only, but for what it preloads; Linux (``os.pidfd_open``). Not a code
dependency of the stages in dvc.yaml: it decides how soon a stage starts, never what it writes
(tests/pipeline/test_warm.py compares a training stage's bytes warm and cold).
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import resource
import runpy
import selectors
import signal
import socket
import sys
import threading
import traceback
from pathlib import Path
from typing import NoReturn

#: The variable naming the socket of the starter the stages run under (stages/run.py and
#: tms.pipeline.warm read the same name).
STARTER = "TMS_STAGE_STARTER"
#: What the starter imports once for every stage it starts: the libraries the stages spend their
#: start-up importing (torch alone 1.1–1.5 s on two cores). One that is missing is skipped.
PRELOAD = ("torch", "pandas", "pyarrow.parquet", "scipy.stats", "scipy.optimize",
           "scipy.integrate", "matplotlib.pyplot", "papermill", "nbconvert", "ruamel.yaml",
           "pydantic")
#: Variables a stage's environment may have that its starter's lacks (or has otherwise): those DVC
#: sets for each stage (DVC_ROOT, DVC_STAGE, ...) and those the shell running its command sets.
DVC_PREFIX, SHELL_VARIABLES = "DVC_", ("PWD", "OLDPWD", "SHLVL", "_")
#: The one file of the working folder that a library of PRELOAD reads as it is imported
#: (matplotlib's settings): a stage in another folder runs warm unless one of the two has it.
FOLDER_FILES = ("matplotlibrc",)
#: Signals the client passes on to its stage.
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
LIMITS = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_DATA", "RLIMIT_FSIZE", "RLIMIT_NOFILE",
          "RLIMIT_STACK")
MESSAGE = 1 << 20
#: Seconds a client may take to send its request once connected.
PATIENCE = 10.0


def _process() -> dict:
    """What the starter and a client must share for a stage to run warm (:func:`_declines`)."""
    umask = os.umask(0)
    os.umask(umask)
    return {"prefix": sys.prefix, "version": sys.version, "flags": list(sys.flags),
            "warnoptions": sys.warnoptions, "xoptions": {k: str(v) for k, v in
                                                         sys._xoptions.items()},
            "path": sys.path[1:], "sid": os.getsid(0), "umask": umask, "nice": os.nice(0),
            "affinity": sorted(os.sched_getaffinity(0)),
            "limits": [resource.getrlimit(getattr(resource, name)) for name in LIMITS]}


def _request(run: str, argv: list[str]) -> dict:
    """A client's request: its process (:func:`_process`), working folder, environment, process
    group and SIGINT disposition, and the ``stages/run.py`` to run with ``argv``."""
    return {**_process(), "run": run, "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ),
            "pgid": os.getpgrp(),
            "sigint_ignored": signal.getsignal(signal.SIGINT) is signal.SIG_IGN}


def hand_over(path: str, run: str, argv: list[str]) -> int | None:
    """The client's side: hand the stage ``run`` ``argv`` to the starter at ``path``; its exit
    status (a stage killed by a signal ends this process by the same signal), or None where no
    starter answers or it declines: then the caller runs the stage itself."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
        try:
            conn.connect(path)
            socket.send_fds(conn, [json.dumps(_request(run, argv)).encode()], [0, 1, 2])
            answer = conn.recv(64).split()
        except OSError:                              # gone, or a standard stream closed
            return None
        if answer[:1] != [b"pid"]:
            return None
        child = int(answer[1])
        handlers = {s: signal.signal(s, lambda signum, _: _send(child, signum))
                    for s in FORWARDED}
        try:
            reply = conn.recv(64)
        except OSError:
            reply = b""
        for s, handler in handlers.items():
            signal.signal(s, handler)
    if not reply:
        print(f"error: the stage starter {path} ended before the stage {argv[0]} did",
              file=sys.stderr)
        return 1
    status = int(reply)
    if os.WIFSIGNALED(status):
        _die(os.WTERMSIG(status))
    return os.waitstatus_to_exitcode(status)


def _send(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:                       # it ended meanwhile
        pass


def _die(signum: int) -> NoReturn:
    """End this process by ``signum`` (as the stage ended)."""
    try:
        signal.signal(signum, signal.SIG_DFL)
    except (OSError, ValueError):                    # SIGKILL, SIGSTOP: already the default
        pass
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)


class _Child:
    """A stage running in a child: its pid, pidfd, and its client's connection (None once the
    client is gone or has its status)."""

    def __init__(self, pid: int, conn: socket.socket):
        self.pid, self.conn, self.pidfd = pid, conn, os.pidfd_open(pid)


def serve(path: str) -> NoReturn:
    """The starter: listen at ``path``, import :data:`PRELOAD` (declining the stages that ask
    meanwhile), then start each stage asked for in a child (:func:`_start`), send each client
    its child's wait status when the child ends, and stop a child (SIGTERM) whose client is
    gone. Ignores SIGINT (a Ctrl-C reaches the stages in their own process groups); SIGTERM
    stops it as the module says."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    listener.setblocking(False)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
        while _start(listener, None):
            pass
    listener.setblocking(True)
    sys.stdout.flush()
    sys.stderr.flush()
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ)
    while True:
        if stopping.is_set() and listener.fileno() >= 0:
            events.unregister(listener)
            listener.close()
        if stopping.is_set() and not events.get_map():
            os._exit(0)
        for key, _ in events.select(timeout=0.5):
            if key.fileobj is listener:
                _start(listener, events)
            elif key.fileobj == key.data.pidfd:
                _ended(events, key.data)
            elif key.data.conn is not None and not _receive(key.data.conn):
                _send(key.data.pid, signal.SIGTERM)      # its client is gone: stop the stage
                _drop(events, key.data)


def _start(listener: socket.socket, events: selectors.BaseSelector | None) -> bool:
    """Take the next client's request and fork its stage's child (:func:`_as_client`), or
    decline it; ``events`` None: still importing, decline. False if no client was waiting (a
    listener that does not block)."""
    try:
        conn, _ = listener.accept()
    except BlockingIOError:
        return False
    conn.settimeout(PATIENCE)                        # a client stopped before it sent
    fds: list[int] = []
    try:
        message, fds, _, _ = socket.recv_fds(conn, MESSAGE, 3)
        request = json.loads(message)
        why = "still importing" if events is None else _declines(request)
        pid = -1 if why else os.fork()
    except (OSError, ValueError, KeyError, TypeError) as err:
        why = f"cannot ({err})"
    if not why and pid == 0:
        _as_client(request, fds, [listener, conn, events])
    _close(*fds)
    if why:
        _reply(conn, f"no: {why}")
        conn.close()
        return True
    try:
        child = _Child(pid, conn)
    except OSError as err:                           # no pidfd (EMFILE): cannot watch it
        _send(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        _reply(conn, f"no: cannot watch it ({err})")
        conn.close()
        return True
    events.register(conn, selectors.EVENT_READ, child)
    events.register(child.pidfd, selectors.EVENT_READ, child)
    _reply(conn, f"pid {pid}")                      # a client gone already: its EOF comes next
    return True


def _ended(events: selectors.BaseSelector, child: _Child) -> None:
    """The stage ended: reap it and send its wait status to its client."""
    status = os.waitpid(child.pid, 0)[1]
    events.unregister(child.pidfd)
    os.close(child.pidfd)
    if child.conn is not None:
        _reply(child.conn, str(status))
        _drop(events, child)


def _receive(conn: socket.socket) -> bool:
    """Whether the client is still there (it sends nothing after its request)."""
    try:
        return bool(conn.recv(64))
    except OSError:
        return False


def _reply(conn: socket.socket, message: str) -> None:
    try:
        conn.send(message.encode())
    except OSError:                                  # the client is gone
        pass


def _drop(events: selectors.BaseSelector, child: _Child) -> None:
    events.unregister(child.conn)
    child.conn.close()
    child.conn = None


def _declines(request: dict) -> str:
    """Why the stage of ``request`` cannot run in a child of this starter ('' if it can): a
    library imported here could differ from the one the stage would import itself."""
    def steady(env: dict) -> dict:
        return {k: v for k, v in env.items()
                if not k.startswith(DVC_PREFIX) and k not in SHELL_VARIABLES}
    ours = json.loads(json.dumps(_process()))
    if differ := [key for key, value in ours.items() if request[key] != value]:
        return "another " + ", ".join(differ)
    if request["cwd"] != os.getcwd() and any(Path(folder, name).exists() for name in FOLDER_FILES
                                             for folder in (request["cwd"], os.getcwd())):
        return "another working folder, with its own " + " or ".join(FOLDER_FILES)
    return "" if steady(request["env"]) == steady(os.environ) else "another environment"


def _as_client(request: dict, fds: list[int], inherited: list) -> NoReturn:
    """In the child: close what is the starter's (``inherited``: the listener, the connection,
    the selector and every other child's), become the client's process (its standard streams,
    process group, SIGINT disposition, working folder, environment but the starter's socket),
    run its ``stages/run.py`` as ``python`` would, and end as Python ends (:func:`_end`)."""
    try:
        listener, conn, events = inherited
        _close(listener, conn, *(key.fileobj for key in events.get_map().values()))
        events.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        _close(*(fd for fd in fds if fd > 2))
        sys.stdout.reconfigure(line_buffering=os.isatty(1))
        try:
            os.setpgid(0, request["pgid"])
        except OSError:                              # the group is gone with its client
            pass
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN if request["sigint_ignored"]
                      else signal.default_int_handler)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update({k: v for k, v in request["env"].items() if k != STARTER})
        sys.argv = [request["run"], *request["argv"]]
        sys.path[0] = str(Path(request["run"]).parent)
    except BaseException:
        traceback.print_exc()
        os._exit(1)
    try:
        runpy.run_path(request["run"], run_name="__main__")
        _end(0)
    except SystemExit as end:
        _end(end.code)
    except BaseException as err:                     # KeyboardInterrupt too: printed, as Python
        sys.excepthook(type(err), err, err.__traceback__)
        _end(1, signal.SIGINT if isinstance(err, KeyboardInterrupt) else None)
    finally:
        os._exit(1)                                  # never back into the starter's loop


def _end(code: object, signum: int | None = None) -> NoReturn:
    """End the child as Python ends a process with ``sys.exit(code)`` (or killed by ``signum``,
    as after an uncaught KeyboardInterrupt), but for the teardown of its modules, about a second
    with torch, pandas and scipy loaded: the wait for its threads, the atexit functions
    (logging's flush among them), the standard streams flushed (status 120 if they cannot be, as
    Python), then ``os._exit``."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    threading._shutdown()                            # what the interpreter's exit does first
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = 120
    if signum is not None:
        _die(signum)
    os._exit(code or 0)


def _close(*items) -> None:
    for item in items:
        if isinstance(item, int):
            os.close(item)
        elif item is not None:
            item.close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python stages/starter.py SOCKET (tms.pipeline.warm runs it)")
    serve(sys.argv[1])
