"""Stage: Proposition 1 / Corollary 2 of the notes on toy autoencoding, trained by the engine.

Bias-free linear autoencoders x ↦ ABx on the grid d × S, on the sparse data and on it scaled
by distinct factors, once per step cap. Writes data/autoencoding_notes/linear.parquet
(columns tms.notes_train.LINEAR_COLUMNS).
"""

from tms import io, notes_train, stage
from tms.params import resolve_device
from tms.train import Schedule


def main(params):
    an = params.autoencoding_notes
    lin = an.linear
    table = notes_train.linear_table(
        lin.D, lin.d, lin.S, lin.steps, an.scale_min, lin.train.seed, lin.train.lr,
        Schedule.of(lin.train, max(lin.steps)), an.eval.seed, an.eval.n_vectors,
        resolve_device(an.device))
    io.write_parquet(table, "data/autoencoding_notes/linear.parquet")


if __name__ == "__main__":
    stage.run(main)
