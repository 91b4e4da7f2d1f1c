"""Stage: fig. 4 of Incidental polysemanticity (section 4): fourth norms under hidden noise.

One stack over the noise kinds × σ × repeats of incidental_polysemanticity.noise. Writes
data/incidental_polysemanticity/noise.parquet (tms.incidental.training.NOISE_COLUMNS) and
data/incidental_polysemanticity/noise_fourth/ (steps.npy (T,), fourth.npy (I, T): mean over
features of ‖W_i‖₄⁴ at the recorded steps, rows in table order).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.core.device import resolve_device
from tms.incidental import artefacts, params, training
from tms.pipeline import stage


def main(ip):
    table, arrays = training.noise_runs(ip.noise, resolve_device(ip.device),
                                        ip.compute.precision)
    io.write_arrays(arrays, artefacts.NOISE_FOURTH)
    io.write_parquet(table, artefacts.NOISE)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
