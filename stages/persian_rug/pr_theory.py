"""Stage: thermodynamic-limit theory of section 4 for fig. 2.

Optimal symmetric loss (quadrature, minimised over a and b) and exact optimal linear loss on
the p values of persian_rug.fig2 and the ratio points of persian_rug.theory.
Writes data/persian_rug/theory.parquet (columns p, ratio, sigma2, a, b, loss, loss_linear).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.persian_rug import artefacts, params, theory
from tms.pipeline import stage


def main(pr):
    io.write_parquet(theory.theory_table(pr.fig2.p, pr.theory.ratio_values()),
                     artefacts.THEORY)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
