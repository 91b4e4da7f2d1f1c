"""Stage: the report site, reports/index.html, and the claims as DVC metrics.

Reads every paper's reports/claims/<paper>.json (written by its report stage), params.yaml,
`dvc dag --mermaid` and the git revision checked out; writes reports/index.html and
reports/claims.json (tms.reporting.site.metrics), atomically.
"""

from pathlib import Path

from tms.pipeline import io, stage
from tms.reporting import dag, site


def main(params):
    papers = site.load_claims("reports/claims")
    html = site.render(papers, Path(stage.PARAMS_FILE).read_text(), site.git_revision(),
                       dag.mermaid(), site.stage_table())
    with io.atomic_path("reports/index.html") as tmp:
        tmp.write_text(html)
    io.write_json(site.metrics(papers), "reports/claims.json")


if __name__ == "__main__":
    stage.run(main, __doc__)
