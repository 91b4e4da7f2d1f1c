"""Run one stage script in the project's environment: every dvc.yaml command goes through here.

    python stages/run.py stages/persian_rug/pr_train.py --n-s 128

DVC runs a stage's command with the ``python`` of the shell's PATH. Where that interpreter cannot
import the package (``.venv/bin/dvc repro`` without activating .venv, say), this script restarts
the command under the project's own ``.venv/bin/python`` when there is one; otherwise it says what
to do and exits with status 2 (nothing is written; DVC keeps the previous outputs in its cache,
``dvc checkout`` restores them). Standard library only: it must run where the package does not.

The package is always this checkout's own ``src/`` (first on the path): a copy of the checkout
whose ``.venv`` was installed elsewhere runs its own code, not the other checkout's, and says so
with the fix (``make env``). A stage that runs out of memory (a ``ulimit -v`` too low to load its
libraries, or to hold its arrays) ends in one line naming the limit, exit status 2.

**Warm starts.** Importing torch, pandas and scipy takes a stage 1–2.5 s, most of a short stage's
time. Where ``$TMS_STAGE_STARTER`` names a warm starter (``python stages/run.py --serve SOCKET``,
which ``make repro`` runs beside ``dvc repro``: tms.pipeline.warm), the starter, those libraries
imported once, forks a child that runs the stage as this process would (same script, arguments,
working folder, environment, standard streams, process group), and this process waits for it
and ends as it ends: with its exit status, or by the signal that ended it. Signals sent to this
process are passed on to it. The starter declines (and the stage runs here) while it is still
importing, and unless this process has its interpreter, its session (so that the stage is in this
process's group) and its environment but for DVC's and the shell's per-stage variables, and a
working folder that cannot change what those libraries read as they are imported.
"""

import atexit
import importlib
import importlib.metadata
import importlib.util
import json
import os
import resource
import runpy
import selectors
import signal
import socket
import sys
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
#: Set on the restart, so that an environment that still lacks the package cannot loop.
RESTARTED = "TMS_STAGE_RESTARTED"
#: The socket of the warm starter the stages run under, where one runs (tms.pipeline.warm).
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
#: Signals passed on to a stage a starter runs; the stage's exit status travels in one message.
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
MESSAGE = 1 << 20


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--serve":
        return serve(argv[1])
    if not argv or not argv[0].endswith(".py") or not (ROOT / argv[0]).is_file():
        print("usage: python stages/run.py stages/<paper>/<stage>.py [arguments] (the script's "
              "path from the repository root)", file=sys.stderr)
        return 2
    if (status := _warm_start(argv)) is not None:
        return status
    if not _is_environment():
        if VENV_PYTHON.is_file() and not os.environ.get(RESTARTED):
            os.environ[RESTARTED] = "1"
            os.execv(VENV_PYTHON, [str(VENV_PYTHON), __file__, *argv])
        print(f"error: {sys.executable} cannot import the tms package, so the stage "
              f"{argv[0]} cannot run.\n"
              "  Run the pipeline with `make repro` (it creates .venv and runs DVC in it), or\n"
              "  activate the environment first: `. .venv/bin/activate && dvc repro`.\n"
              "  Outputs DVC removed before the stage are in its cache: `dvc checkout` "
              "restores them.", file=sys.stderr)
        return 2
    os.environ.pop(RESTARTED, None)          # not inherited by what the stage starts
    installed = importlib.util.find_spec("tms")
    if installed is None or not Path(installed.origin).resolve().is_relative_to(SRC):
        where = Path(installed.origin).parent if installed else "a folder that is gone"
        print(f"warning: this environment's tms package is installed from {where}, not from "
              f"this checkout (it was moved or copied): running {SRC / 'tms'}; `make env` "
              f"installs this checkout's", file=sys.stderr)
    sys.path.insert(0, str(SRC))
    os.environ["PYTHONPATH"] = os.pathsep.join(      # and the processes it starts (a report's kernel)
        [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])
    script = ROOT / argv[0]
    sys.argv = [str(script), *argv[1:]]
    sys.path.insert(0, str(script.parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except (MemoryError, ImportError) as err:
        if isinstance(err, ImportError) and "failed to map segment" not in str(err):
            raise
        print(f"error: {argv[0]} ran out of memory ({type(err).__name__}: {err or 'no more'}); "
              f"this shell limits a process's address space to {_address_limit()} "
              f"(`ulimit -v`): raise the limit (loading torch and scipy alone takes about 600 "
              f"MiB) or run on a machine with more memory", file=sys.stderr)
        return 2
    return 0


def _warm_start(argv: list[str]) -> int | None:
    """Run the stage in a child of the starter at ``$TMS_STAGE_STARTER``: its exit status (a
    child ended by a signal ends this process by the same signal). None, to run it here, where
    no starter is named, none answers, or it declines."""
    path = os.environ.get(STARTER)
    if not path:
        return None
    request = {"run": str(Path(__file__).resolve()), "argv": argv, "cwd": os.getcwd(),
               "env": dict(os.environ), "prefix": sys.prefix, "sid": os.getsid(0),
               "pgid": os.getpgrp()}
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
        try:
            conn.connect(path)
            socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
            answer = conn.recv(64).split()
        except OSError:                              # gone, or a standard stream closed
            return None
        if answer[:1] != [b"pid"]:
            return None                              # declined
        child = int(answer[1])
        for signum in FORWARDED:
            signal.signal(signum, lambda signum, _: _send(child, signum))
        reply = conn.recv(64)
    if not reply:
        print(f"error: the stage starter {path} ended before the stage {argv[0]} did",
              file=sys.stderr)
        return 1
    status = int(reply)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    return os.waitstatus_to_exitcode(status)


def _send(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:                       # it ended meanwhile
        pass


def serve(path: str) -> int:
    """The warm starter: listen at ``path`` (a Unix socket), import :data:`PRELOAD`, then fork a
    child for each stage a client (:func:`_warm_start`) asks for, to run it (:func:`_as_client`);
    send each client its child's wait status when the child ends, and stop a child (SIGTERM)
    whose client is gone. Runs until it is killed; ignores SIGINT (a Ctrl-C reaches the stages
    in their own process group). Linux (``os.pidfd_open``)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    listener.setblocking(False)
    for name in PRELOAD:                             # a stage asking meanwhile starts cold
        try:
            importlib.import_module(name)
        except ImportError:
            pass
        while _start(listener, None):
            pass
    listener.setblocking(True)
    sys.stdout.flush()
    sys.stderr.flush()
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ)
    while True:
        for key, _ in events.select():
            child = key.data
            if key.fileobj is listener:
                _start(listener, events)
            elif key.fileobj is child["pidfd"]:    # the stage ended: its status to its client
                status = os.waitpid(child["pid"], 0)[1]
                events.unregister(child["pidfd"])
                os.close(child["pidfd"])
                if child["conn"] is not None:
                    _reply(child["conn"], str(status))
                    _drop(events, child)
            elif child["conn"] is not None and not child["conn"].recv(64):
                _send(child["pid"], signal.SIGTERM)  # its client is gone: stop the stage
                _drop(events, child)


def _start(listener: socket.socket, events: selectors.BaseSelector | None) -> bool:
    """Take the next client's request (the client may be gone already) and fork its stage's
    child, or decline it; ``events`` None: still importing, decline it. False if no client was
    waiting (a listener that does not block)."""
    try:
        conn, _ = listener.accept()
    except BlockingIOError:
        return False
    conn.setblocking(True)
    try:
        message, fds, _, _ = socket.recv_fds(conn, MESSAGE, 3)
        request = json.loads(message)
    except (OSError, ValueError):
        conn.close()
        return True
    if why := "still importing" if events is None else _declines(request):
        _reply(conn, f"no: {why}")
        _close(conn, *fds)
        return True
    pid = os.fork()
    if pid == 0:
        _close(*(key.fileobj for key in events.get_map().values()), conn)
        events.close()
        _as_client(request, fds)
    _close(*fds)
    _reply(conn, f"pid {pid}")
    child = {"pid": pid, "conn": conn, "pidfd": os.pidfd_open(pid)}
    events.register(conn, selectors.EVENT_READ, child)
    events.register(child["pidfd"], selectors.EVENT_READ, child)
    return True


def _reply(conn: socket.socket, message: str) -> None:
    try:
        conn.send(message.encode())
    except OSError:                                  # the client is gone: its EOF comes next
        pass


def _drop(events: selectors.BaseSelector, child: dict) -> None:
    events.unregister(child["conn"])
    child["conn"].close()
    child["conn"] = None


def _declines(request: dict) -> str:
    """Why the stage of ``request`` cannot run in a child of this starter ('' if it can): a
    library imported here could differ from the one the stage would import itself."""
    def steady(env: dict) -> dict:
        return {k: v for k, v in env.items()
                if not k.startswith(DVC_PREFIX) and k not in SHELL_VARIABLES}
    if request["prefix"] != sys.prefix:
        return "another Python environment"
    if request["sid"] != os.getsid(0):
        return "another session"
    if request["cwd"] != os.getcwd() and any(Path(folder, name).exists() for name in FOLDER_FILES
                                             for folder in (request["cwd"], os.getcwd())):
        return "another working folder, with its own " + " or ".join(FOLDER_FILES)
    return "" if steady(request["env"]) == steady(os.environ) else "another environment"


def _as_client(request: dict, fds: list[int]) -> NoReturn:
    """In the child: become the client's process (its standard streams, process group, working
    folder, environment but the starter's socket), run its
    ``stages/run.py`` as ``python`` would, and end as Python ends (:func:`_end`)."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    _close(*(fd for fd in fds if fd > 2))
    sys.stdout.reconfigure(line_buffering=os.isatty(1))
    try:
        os.setpgid(0, request["pgid"])
    except OSError:                                  # the group is gone with its client
        pass
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update({k: v for k, v in request["env"].items() if k != STARTER})
    sys.argv = [request["run"], *request["argv"]]
    sys.path[0] = str(Path(request["run"]).parent)
    try:
        runpy.run_path(request["run"], run_name="__main__")
    except SystemExit as end:
        _end(end.code)
    except KeyboardInterrupt:
        _end(-signal.SIGINT)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        _end(1)
    _end(0)


def _end(code: object) -> NoReturn:
    """End the child as Python ends a process with ``sys.exit(code)`` (a negative code: by that
    signal, as after an uncaught KeyboardInterrupt), but for the teardown of its modules, about a
    second with torch, pandas and scipy loaded: the atexit functions (logging's flush among
    them), then the standard streams, then ``os._exit``."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    if isinstance(code, int) and code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


def _close(*items) -> None:
    for item in items:
        if isinstance(item, int):
            os.close(item)
        elif item is not None:
            item.close()


def _is_environment() -> bool:
    """Whether this interpreter has the project installed (its distribution's record, which a
    moved checkout's .venv keeps although the path it points at is gone)."""
    try:
        importlib.metadata.distribution("tms")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _address_limit() -> str:
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return "no limit" if soft == resource.RLIM_INFINITY else f"{soft // 1024} KiB"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
