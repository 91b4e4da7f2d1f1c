"""Stage: execute a paper's report notebook with papermill and render it to HTML.

    python stages/report.py persian_rug

runs reports/templates/persian_rug.ipynb (figures land in reports/figures/persian_rug/),
writes the executed notebook reports/persian_rug.ipynb and reports/persian_rug.html.
"""

import argparse
from pathlib import Path

from tms import report, stage


def main(params):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("paper")
    name = ap.parse_args().paper
    report.build(name, Path("reports/templates") / f"{name}.ipynb", Path("reports"))


if __name__ == "__main__":
    stage.run(main)
