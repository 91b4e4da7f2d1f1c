"""Stage: fig. 6 of Incidental polysemanticity (section 4): single instances under small noise.

Trains the candidates of incidental_polysemanticity.single in one stack. Writes
data/incidental_polysemanticity/single_stuck.parquet (the stuck encodings found,
tms.incidental.stats.STUCK_COLUMNS) and data/incidental_polysemanticity/single/ (steps.npy (T,),
fourth.npy (C, T, n) per-encoding ‖W_i‖₄⁴, W.npy (C, n, m) final weights).
"""

from tms.incidental import training
from tms.pipeline import io, stage
from tms.pipeline.params import resolve_device

OUT = "data/incidental_polysemanticity"


def main(params):
    ip = params.incidental_polysemanticity
    stuck, arrays = training.single(ip.single, resolve_device(ip.device))
    io.write_arrays(arrays, f"{OUT}/single")
    io.write_parquet(stuck, f"{OUT}/single_stuck.parquet")


if __name__ == "__main__":
    stage.run(main, __doc__)
