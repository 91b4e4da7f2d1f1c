"""Stage: section 3 of the notes on toy autoencoding: how much of a trained ReLU-output
model's loss comes from inputs with at least two active features.

Writes data/autoencoding_notes/relu.parquet (columns tms.notes.training.RELU_COLUMNS) and
data/autoencoding_notes/relu_strata.parquet (the loss on each skeleton Q_l).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.core.device import resolve_device
from tms.core.schema import schedule_warnings
from tms.engine.grid import Schedule
from tms.notes import artefacts, params, training
from tms.pipeline import stage


def main(an):
    r = an.relu
    stage.warn(schedule_warnings("autoencoding_notes.relu.train", r.train, r.max_steps))
    run = training.Run(r.train.seed, r.train.lr, Schedule.of(r.train, r.max_steps),
                       an.eval.seed, an.eval.n_vectors, resolve_device(an.device),
                       an.compute.precision)
    table, strata = training.relu_tables(r.D, r.d, r.S, r.seeds, run, r.n_per_stratum,
                                         r.strata_seed)
    io.write_parquet(table, artefacts.RELU)
    io.write_parquet(strata, artefacts.RELU_STRATA)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
