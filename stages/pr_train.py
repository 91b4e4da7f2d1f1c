"""Stage: train the Persian Rug (p, ratio) grid of one n_s (fig. 2's trained models).

Writes data/persian_rug/train/n{n_s}.parquet (columns: tms.grid.TRAIN_COLUMNS) and
data/persian_rug/train/n{n_s}_weights/ (W_in, W_out, b as .npy, see tms.grid.pack_weights).
"""

import pandas as pd

from tms import checkpoint, grid, io, stage
from tms.params import resolve_device
from tms.train import Schedule


def main(params):
    n_s = stage.grid_n_s(params, __doc__)
    pr = params.persian_rug
    device = resolve_device(pr.device)
    ckpt = checkpoint.for_stage(f"pr_train@{n_s}", pr.train.checkpoint_every, device, pr.eval,
                                pr.grid, pr.train, n_s)
    points = grid.expand(n_s, pr.grid.p_values(), pr.grid.ratio_values(), pr.grid.seeds)
    tables, results = [], []
    for model in pr.grid.models:
        table, res = grid.train_and_score(
            n_s, points, pr.train.seed, pr.train.lr_for(n_s), Schedule.of(pr.train),
            model == "relu", pr.eval.seed, pr.eval.n_vectors, device,
            compute=pr.compute, ckpt=ckpt)
        tables.append(table)
        results += res
    io.write_arrays(grid.pack_weights(results), f"data/persian_rug/train/n{n_s}_weights")
    io.write_parquet(pd.concat(tables, ignore_index=True), f"data/persian_rug/train/n{n_s}.parquet")
    if ckpt:
        ckpt.clear()


if __name__ == "__main__":
    stage.run(main)
