"""Stage: the report site, reports/index.html, and the claims as DVC metrics.

Reads every paper's reports/claims/<paper>.json (written by its claims stage) and errata (its
package's errata.ERRATA), params.yaml, `dvc dag --mermaid` and the git revision of the code the
pipeline runs; writes reports/index.html,
reports/claims.json (the DVC metrics: counts per verdict, tms.reporting.metrics.metrics) and
reports/claim_values.json (every claim's numbers by id, tms.reporting.metrics.claim_values),
atomically.
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from pathlib import Path

from tms.core import errata, io
from tms.pipeline import params, stage
from tms.reporting import dag, metrics, revision, site


def main(params):
    claims = metrics.load_claims("reports/claims")
    html = site.render(claims, errata.every(), Path(stage.PARAMS_FILE).read_text(),
                       revision.git_revision(), dag.mermaid(), site.stage_table())
    with io.atomic_path("reports/index.html") as tmp:
        tmp.write_text(html)
    io.write_json(metrics.metrics(claims), "reports/claims.json")
    io.write_json(metrics.claim_values(claims), "reports/claim_values.json")


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
