"""Execute a report notebook (papermill) and render it to self-contained HTML (nbconvert).

Volatile notebook content is stripped or pinned so an unchanged stage gives the same bytes:
execution times, papermill timings and kernel versions are dropped; the injected-parameters
cell, pandas Styler tables (random ``T_xxxxx`` ids) and object reprs (``at 0x7f...``) get
names that depend on the notebook alone. The page itself (hidden code, contents, maths as
MathML, nothing loaded from the network) is tms.reporting.page.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import papermill
from nbclient.exceptions import DeadKernelError

from tms.core.io import atomic_path
from tms.core.machine import MachineError
from tms.core.progress import heartbeat
from tms.reporting import page

# The kernel's own log (its start-up notices, e.g. that it talks to this process over local TCP)
# is not the report's business: errors only.
_QUIET_KERNEL = ["--IPKernelApp.log_level=ERROR"]

_STYLER_ID = re.compile(r'<table id="T_([0-9a-f]+)"')
_ADDRESS = re.compile(r" at 0x[0-9a-f]+>")


def _pin_html(html: str, tables: itertools.count) -> str:
    """Each Styler table's random uuid in ``html`` replaced by the next of ``tables``."""
    for uuid in dict.fromkeys(_STYLER_ID.findall(html)):
        html = html.replace(f"T_{uuid}", f"T_table{next(tables)}")
    return html


def _strip(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb.metadata.pop("papermill", None)
    nb.metadata.pop("widgets", None)
    nb.metadata.get("language_info", {}).pop("version", None)
    tables = itertools.count()
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell.id = "injected-parameters"
        for out in cell.get("outputs", []):
            out.get("metadata", {}).pop("execution", None)
            data = out.get("data", {})
            if "text/html" in data:
                data["text/html"] = _pin_html(data["text/html"], tables)
            if "text/plain" in data:
                data["text/plain"] = _ADDRESS.sub(">", data["text/plain"])
    return nb


#: The private temporary folders of report runs: this prefix, the pid of the run, a random tail.
_PREFIX = "tms-report-"


@contextlib.contextmanager
def _kernel_files() -> Iterator[None]:
    """Temporary files made in this process (the kernel's connection file) go to a private
    folder, removed on the way out whatever happens: a stage stopped while its kernel starts or
    runs (SIGINT, SIGTERM) leaves no file in the system's temporary folder. The folders of runs
    killed outright (SIGKILL, where nothing runs on the way out) are removed by the next run
    (:func:`_sweep`)."""
    saved = tempfile.tempdir
    _sweep(Path(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory(prefix=f"{_PREFIX}{os.getpid()}-") as folder:
        tempfile.tempdir = folder
        try:
            yield
        finally:
            tempfile.tempdir = saved


def _sweep(temp: Path) -> None:
    """Remove the private folders in ``temp`` of report runs whose process is gone."""
    for folder in temp.glob(f"{_PREFIX}*-*"):
        pid = folder.name.removeprefix(_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)) and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:             # another user's process
        return True
    return True


def build(name: str, template: Path, out_dir: Path, parameters: dict | None = None) -> Path:
    """Run ``template`` with ``parameters`` (cwd: the repository root, where ``dvc repro`` runs)
    and write ``out_dir/name.ipynb``, ``out_dir/name.html`` and the figures folder
    ``out_dir/figures/name`` atomically: the figures are drawn into a temporary folder beside it,
    which replaces it whole once the notebook and its page are written (its name in the notebook
    made the final one's), so a failed or killed report leaves the previous folder, never a
    partial one. Returns the HTML path.

    Raises papermill.PapermillExecutionError if a cell fails (nothing is written then),
    tms.core.machine.MachineError if the notebook's kernel dies (killed: nothing is written), and
    latex2mathml's exceptions for TeX in markdown that it cannot convert.
    """
    with atomic_path(out_dir / "figures" / name, directory=True) as tmp_figures, \
            atomic_path(out_dir / f"{name}.ipynb") as tmp_nb:
        params = {"figures_dir": f"{out_dir}/figures/{tmp_figures.name}", **(parameters or {})}
        with _kernel_files(), heartbeat(f"report {name}"):
            try:
                papermill.execute_notebook(str(template), str(tmp_nb), parameters=params,
                                           cwd=str(Path.cwd()), kernel_name="python3",
                                           log_output=False, extra_arguments=_QUIET_KERNEL,
                                           progress_bar=sys.stderr.isatty() and  # off terminals
                                           {"desc": f"report {name}", "leave": False})
            except DeadKernelError:
                raise MachineError(f"report {name}: its notebook's kernel died (killed by a "
                                   "signal; most often for memory): nothing was written; run "
                                   "again with more memory free") from None
        text = tmp_nb.read_text(encoding="utf-8").replace(tmp_figures.name, name)
        nb = _strip(nbformat.reads(text, as_version=4))
        nbformat.write(nb, tmp_nb)
        with atomic_path(out_dir / f"{name}.html") as tmp_html:
            tmp_html.write_text(page.render(nb))
    return out_dir / f"{name}.html"
