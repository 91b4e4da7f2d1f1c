"""Stage: Proposition 1 / Corollary 2 of the notes on toy autoencoding, trained by the engine.

Bias-free linear autoencoders x ↦ ABx on the grid d × S, on the sparse data and on it scaled
by distinct factors, once per step cap. Writes data/autoencoding_notes/linear.parquet
(columns tms.notes.training.LINEAR_COLUMNS).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.core.device import resolve_device
from tms.engine.grid import Schedule
from tms.notes import artefacts, params, training
from tms.pipeline import stage


def main(an):
    lin = an.linear
    run = training.Run(lin.train.seed, lin.train.lr, Schedule.of(lin.train, max(lin.steps)),
                       an.eval.seed, an.eval.n_vectors, resolve_device(an.device),
                       an.compute.precision)
    table = training.linear_table(lin.D, lin.d, lin.S, lin.steps, an.scale_min, run)
    io.write_parquet(table, artefacts.LINEAR)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
