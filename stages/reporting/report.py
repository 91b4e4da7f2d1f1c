"""Stage: execute a paper's report notebook with papermill and render it to HTML.

    python stages/run.py stages/reporting/report.py persian_rug

runs reports/templates/persian_rug.ipynb (figures land in reports/figures/persian_rug/),
writes the executed notebook reports/persian_rug.ipynb and reports/persian_rug.html.
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from pathlib import Path

from tms.core import papers
from tms.pipeline import params, stage
from tms.reporting import notebook

TEMPLATES = Path("reports/templates")
PAPER = ("paper", {"choices": list(papers.KEYS),
                   "help": "the paper whose report notebook (reports/templates/PAPER.ipynb) runs"})


def main(params, paper):
    notebook.build(paper, TEMPLATES / f"{paper}.ipynb", Path("reports"))


if __name__ == "__main__":
    stage.run(main, __doc__, PAPER, params=params.SECTION)
