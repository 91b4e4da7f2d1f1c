"""Stage: fig. 5 of Incidental polysemanticity (section 4): final fourth norms against λ and σ.

One stack of baseline, λ-sweep and σ-sweep models of incidental_polysemanticity.sweep, the same
step budget for all. Writes data/incidental_polysemanticity/sweep.parquet
(tms.incidental.training.SWEEP_COLUMNS, one row per model).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.core.device import resolve_device
from tms.incidental import artefacts, params, training
from tms.pipeline import stage


def main(ip):
    io.write_parquet(training.sweep(ip.sweep, resolve_device(ip.device), ip.compute.precision),
                     artefacts.SWEEP)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
