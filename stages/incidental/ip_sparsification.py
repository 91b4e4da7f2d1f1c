"""Stage: figs. 2 and 7 of Incidental polysemanticity (section 2, appendix B).

The single-encoding sparsification ODE (interference off), integrated exactly by the common
affine map of appendix B for every m of incidental_polysemanticity.sparsification, and its
direct Euler reference at small m. Writes
data/incidental_polysemanticity/sparsification.parquet
(tms.incidental.sparsification.TRAJECTORY_COLUMNS) and data/incidental_polysemanticity/euler.parquet
(tms.incidental.sparsification.euler_comparison).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
import pandas as pd

from tms.core import io
from tms.incidental import artefacts, params, sparsification
from tms.pipeline import stage


def main(ip):
    cfg = ip.sparsification
    euler = sparsification.euler_comparison(cfg.euler.m, cfg.euler.lam, cfg.init_std, cfg.seed,
                                            cfg.euler.dt)     # its size checked first
    table = pd.concat([sparsification.trajectory(m, cfg.lam, cfg.init_std, cfg.seed, cfg.n_times)
                       for m in cfg.m], ignore_index=True)
    io.write_parquet(euler, artefacts.EULER)
    io.write_parquet(table, artefacts.SPARSIFICATION)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
