"""Stage: fig. 4 of Incidental polysemanticity (section 4): fourth norms under hidden noise.

One stack over the noise kinds × σ × repeats of incidental_polysemanticity.noise. Writes
data/incidental_polysemanticity/noise.parquet (tms.incidental.training.NOISE_COLUMNS) and
data/incidental_polysemanticity/noise_fourth/ (steps.npy (T,), fourth.npy (I, T): mean over
features of ‖W_i‖₄⁴ at the recorded steps, rows in table order).
"""

from tms.core import io
from tms.core.device import resolve_device
from tms.incidental import params, training
from tms.pipeline import stage

OUT = "data/incidental_polysemanticity"


def main(ip):
    table, arrays = training.noise_runs(ip.noise, resolve_device(ip.device),
                                        ip.compute.precision)
    io.write_arrays(arrays, f"{OUT}/noise_fourth")
    io.write_parquet(table, f"{OUT}/noise.parquet")


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
