"""Stage: the closed forms of Incidental polysemanticity (section 2.1, appendix C) against Monte
Carlo or exact computations (tms.incidental.theory.checks, settings of
incidental_polysemanticity.checks). Writes data/incidental_polysemanticity/checks.parquet
(columns tms.incidental.theory.CHECK_COLUMNS).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.incidental import artefacts, params, theory
from tms.pipeline import stage


def main(ip):
    c = ip.checks
    io.write_parquet(theory.checks(c.n, c.m, c.sigma, c.samples, c.seed, c.m_exact),
                     artefacts.CHECKS)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
