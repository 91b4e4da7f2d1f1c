"""Stage: train the Persian Rug (p, ratio) grid of one n_s (fig. 2's trained models).

Writes data/persian_rug/train/n{n_s}.parquet (columns: tms.persian_rug.training.TRAIN_COLUMNS) and
data/persian_rug/train/n{n_s}_weights/ (W_in, W_out, b as .npy, see
tms.persian_rug.training.pack_weights).
"""

import pandas as pd

from tms.engine import checkpoint
from tms.engine.train import Schedule
from tms.persian_rug import training
from tms.pipeline import io, stage
from tms.pipeline.params import resolve_device, schedule_warnings


def main(params, n_s):
    stage.check_n_s(params, n_s)
    pr = params.persian_rug
    device = resolve_device(pr.device)
    stage.warn(schedule_warnings("persian_rug.train", pr.train, pr.train.max_steps))
    ckpt = checkpoint.for_stage(f"pr_train@{n_s}", pr.train.checkpoint_every, device, pr.eval,
                                pr.grid, pr.train, n_s)
    points = training.expand(n_s, pr.grid.p_values(), pr.grid.ratio_values(), pr.grid.seeds)
    tables, results = [], []
    for model in pr.grid.models:
        table, res = training.train_and_score(
            n_s, points, pr.train.seed, pr.train.lr_for(n_s), Schedule.of(pr.train),
            model == "relu", pr.eval.seed, pr.eval.n_vectors, device,
            compute=pr.compute, ckpt=ckpt)
        tables.append(table)
        results += res
    io.write_arrays(training.pack_weights(results), f"data/persian_rug/train/n{n_s}_weights")
    io.write_parquet(pd.concat(tables, ignore_index=True), f"data/persian_rug/train/n{n_s}.parquet")
    if ckpt:
        ckpt.clear()


if __name__ == "__main__":
    stage.run(main, __doc__, stage.N_S)
