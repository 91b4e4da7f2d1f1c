"""Stage: fig. 3 of Incidental polysemanticity (section 2.1): polysemantic neurons against m.

For every m of incidental_polysemanticity.collisions, `instances` tied autoencoders with l1 and
no noise, trained in one stack. Writes data/incidental_polysemanticity/collisions.parquet
(columns tms.incidental.training.COLLISION_COLUMNS, one row per model). Each m's rows are kept in
.checkpoints/ip_collisions/ as soon as its stack is trained (removed once the table is written),
so a killed run resumes at the next m: at the authors' 16 m the stage takes hours on a CPU.
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.core.device import resolve_device
from tms.engine import checkpoint
from tms.incidental import artefacts, params, training
from tms.pipeline import stage


def main(ip):
    device = resolve_device(ip.device)
    ckpt = checkpoint.for_stage("ip_collisions", 1, device, ip.compute.precision, ip.collisions)
    io.write_parquet(training.collisions(ip.collisions, device, ip.compute.precision, ckpt),
                     artefacts.COLLISIONS)
    ckpt.clear()


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
