"""Stage: train the Persian Rug (p, ratio) grid of one n_s (fig. 2's trained models), scoring each
model as its chunk finishes, so that no step holds more than one chunk's weights.

Writes data/persian_rug/train/n{n_s}.parquet (columns tms.persian_rug.training.TRAIN_COLUMNS) and
data/persian_rug/train/n{n_s}_weights/ (the weights that persian_rug.grid.keep_weights keeps,
tms.persian_rug.weights; the statistics of figs. 4–7 are computed from them downstream, by
pr_stats). A model whose weights are not kept is measured here instead, and its statistics go
into the folder (tms.persian_rug.unkept: the one exception). And data/persian_rug/train/
n{n_s}_ends/: the training states where the models the convergence check retrains stopped
(tms.persian_rug.ends), for pr_converge to train on from.
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.core.device import resolve_device
from tms.core.schema import schedule_warnings
from tms.engine import checkpoint
from tms.engine.grid import Schedule
from tms.persian_rug import params, trained_artefacts, training, unkept
from tms.pipeline import stage


def main(pr, n_s):
    stage.check_n_s(pr, n_s)
    grid = pr.grid.at(n_s)
    device = resolve_device(pr.device)
    stage.warn(schedule_warnings("persian_rug.train", pr.train, pr.train.max_steps))
    ckpt = checkpoint.for_stage(f"pr_train@{n_s}", pr.train.checkpoint_every, device, pr.eval,
                                grid, pr.train)
    spec = training.GridSpec(n_s, pr.train.seed, pr.train.lr_for(n_s), Schedule.of(pr.train),
                             pr.eval.seed, pr.eval.n_vectors, device, pr.compute)
    table = training.train_models(
        spec, training.expand(n_s, grid.p, grid.ratio, grid.seeds), grid.models,
        trained_artefacts.trained_weights(n_s), ckpt,
        lambda pt: grid.keeps(pt.p, pt.ratio_target), unkept.measure,
        trained_artefacts.trained_ends(n_s))
    io.write_parquet(table, trained_artefacts.trained(n_s))
    if ckpt:
        ckpt.clear()


if __name__ == "__main__":
    stage.run(main, __doc__, stage.N_S, params=params.SECTION)
