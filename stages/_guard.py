"""Imported first by every stage script (each folder of stages/ links this file): a stage run
bare, ``python3 stages/<paper>/<stage>.py``, by an interpreter that cannot import the package
exits with what to do instead of a ModuleNotFoundError. Standard library only."""

import importlib.util
import sys

if importlib.util.find_spec("tms") is None:
    sys.exit(f"error: {sys.executable} cannot import the tms package, so {sys.argv[0]} cannot "
             "run.\n  Run a stage through `python stages/run.py <its path> [arguments]` (as DVC "
             "does: it finds .venv), or the pipeline with `make repro`; or activate the "
             "environment first: `. .venv/bin/activate`.")
