"""Stage: fig. 6 of Incidental polysemanticity (section 4): single instances under small noise.

Trains the candidates of incidental_polysemanticity.<run> in one stack, <run> being `single` (our
σ) or `single_printed` (the paper's printed σ). Writes
data/incidental_polysemanticity/<run>_stuck.parquet (the stuck encodings found,
tms.incidental.stats.STUCK_COLUMNS) and data/incidental_polysemanticity/<run>/ (steps.npy (T,),
fourth.npy (C, T, n) per-encoding ‖W_i‖₄⁴, W.npy (C, n, m) final weights, diverged.npy (C,)).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.core.device import resolve_device
from tms.incidental import artefacts, params, training
from tms.pipeline import stage

RUN = ("--run", {"choices": list(artefacts.RUNS), "required": True,
                 "help": "which fig. 6 run: incidental_polysemanticity.single or .single_printed"})


def main(ip, run):
    stuck, arrays = training.single(getattr(ip, run), resolve_device(ip.device),
                                    f"{params.KEY}.{run}", ip.compute.precision)
    io.write_arrays(arrays, artefacts.single(run))
    io.write_parquet(stuck, artefacts.stuck(run))


if __name__ == "__main__":
    stage.run(main, __doc__, RUN, params=params.SECTION)
