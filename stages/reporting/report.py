"""Stage: execute a paper's report notebook with papermill and render it to HTML.

    python stages/reporting/report.py persian_rug

runs reports/templates/persian_rug.ipynb (figures land in reports/figures/persian_rug/),
writes the executed notebook reports/persian_rug.ipynb and reports/persian_rug.html.
"""

import argparse
from pathlib import Path

from tms.pipeline import stage
from tms.reporting import notebook


def main(params):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("paper")
    name = ap.parse_args().paper
    notebook.build(name, Path("reports/templates") / f"{name}.ipynb", Path("reports"))


if __name__ == "__main__":
    stage.run(main)
