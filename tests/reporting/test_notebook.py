"""Report notebooks: two runs of the same template give the same bytes (notebook and HTML)."""

import re

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

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
