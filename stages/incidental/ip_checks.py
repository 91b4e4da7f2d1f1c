"""Stage: the closed forms of Incidental polysemanticity (section 2.1, appendix C) against Monte
Carlo or exact computations (tms.incidental.theory.checks, settings of
incidental_polysemanticity.checks). Writes data/incidental_polysemanticity/checks.parquet
(columns tms.incidental.theory.CHECK_COLUMNS).
"""

from tms.incidental import theory
from tms.pipeline import io, stage


def main(params):
    c = params.incidental_polysemanticity.checks
    io.write_parquet(theory.checks(c.n, c.m, c.sigma, c.samples, c.seed, c.m_exact),
                     "data/incidental_polysemanticity/checks.parquet")


if __name__ == "__main__":
    stage.run(main, __doc__)
