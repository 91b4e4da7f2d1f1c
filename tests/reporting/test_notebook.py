"""Report notebooks: two runs of the same template give the same bytes (notebook and HTML)."""

import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tms.core import papers
from tms.reporting import notebook


def _template(path):
    params = new_code_cell('label = "x"\nfigures_dir = ""')
    params.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[
        params,
        new_code_cell("import pandas as pd\n"
                      "df = pd.DataFrame({label: [1.0, 2.5]})\n"
                      "display(df.style.format('{:.2f}'))\n"
                      "df.style.set_properties(**{'text-align': 'left'})"),
        new_code_cell("object()"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}})
    nbformat.write(nb, path)


@pytest.mark.integration
def test_same_template_gives_same_bytes(tmp_path):
    _template(tmp_path / "t.ipynb")
    outs = []
    for _ in range(2):
        html = notebook.build("t", tmp_path / "t.ipynb", tmp_path / "out", {"label": "y"})
        outs.append((html.read_bytes(), (tmp_path / "out" / "t.ipynb").read_bytes()))
    assert outs[0] == outs[1]
    text = outs[0][1].decode()
    # the two Styler tables keep distinct ids (their CSS must not collide) and no address is left
    assert len(set(re.findall(r'<table id=\\"(T_\w+)\\"', text))) == 2
    assert "at 0x" not in text
    assert '"id": "injected-parameters"' in text


@pytest.mark.integration
def test_a_failed_report_leaves_the_previous_figures_folder_whole(tmp_path):
    _template(tmp_path / "t.ipynb")
    nb = nbformat.read(tmp_path / "t.ipynb", as_version=4)
    nb.cells.insert(1, new_code_cell(
        "from pathlib import Path\n(Path(figures_dir) / 'a.png').write_text('new')"))
    nbformat.write(nb, tmp_path / "t.ipynb")
    notebook.build("t", tmp_path / "t.ipynb", tmp_path / "out")
    figures = tmp_path / "out/figures/t"
    assert sorted(p.name for p in figures.iterdir()) == ["a.png"]
    text = (tmp_path / "out/t.ipynb").read_text()
    assert "out/figures/t" in text and ".tmp" not in text         # the final name only
    nb.cells.insert(2, new_code_cell(
        "(Path(figures_dir) / 'b.png').write_text('half')\nraise RuntimeError('killed')"))
    nbformat.write(nb, tmp_path / "t.ipynb")
    with pytest.raises(Exception, match="killed"):
        notebook.build("t", tmp_path / "t.ipynb", tmp_path / "out")
    assert sorted(p.name for p in figures.iterdir()) == ["a.png"]   # as the last good run left it
    assert sorted(p.name for p in (tmp_path / "out/figures").iterdir()) == ["t"]   # no litter


@pytest.mark.integration
def test_a_report_whose_kernel_dies_says_so_in_one_line_and_writes_nothing(tmp_path):
    # a kernel killed (the OOM killer's SIGKILL) was once papermill's DeadKernelError traceback
    from tms.core.machine import MachineError

    _template(tmp_path / "t.ipynb")
    nb = nbformat.read(tmp_path / "t.ipynb", as_version=4)
    nb.cells.insert(1, new_code_cell("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"))
    nbformat.write(nb, tmp_path / "t.ipynb")
    with pytest.raises(MachineError) as err:
        notebook.build("t", tmp_path / "t.ipynb", tmp_path / "out")
    assert str(err.value) == ("report t: its notebook's kernel died (killed by a signal; most "
                              "often for memory): nothing was written; run again with more "
                              "memory free")
    assert [p.name for p in (tmp_path / "out").rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("name", papers.KEYS)
def test_a_templates_cell_ids_are_fixed_and_unique(root, name):
    """A cell id that repeats another is replaced by a random one on every run, and the report
    then differs byte for byte between two runs of the same inputs."""
    nb = nbformat.read(root / "reports/templates" / f"{name}.ipynb", as_version=4)
    ids = [cell.get("id") for cell in nb.cells]
    assert None not in ids and len(set(ids)) == len(ids), ids
