"""Stage: fig. 3 of Incidental polysemanticity (section 2.1): polysemantic neurons against m.

For every m of incidental_polysemanticity.collisions, `instances` tied autoencoders with l1 and
no noise, trained in one stack. Writes data/incidental_polysemanticity/collisions.parquet
(columns tms.incidental.training.COLLISION_COLUMNS, one row per model).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.core.device import resolve_device
from tms.incidental import artefacts, params, training
from tms.pipeline import stage


def main(ip):
    io.write_parquet(training.collisions(ip.collisions, resolve_device(ip.device),
                                         ip.compute.precision),
                     artefacts.COLLISIONS)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
