"""Stage: train the Persian Rug (p, ratio) grid of one n_s (fig. 2's trained models) and measure
every model as its chunk finishes: the statistics of figs. 4–7 and eq. 6 are computed where the
weights are, so no step holds more than one chunk's weights.

Writes data/persian_rug/train/n{n_s}.parquet (columns tms.persian_rug.training.TRAIN_COLUMNS),
data/persian_rug/stats/n{n_s}.parquet (tms.persian_rug.stats.KEY_COLUMNS + STAT_COLUMNS, one row
per model) and data/persian_rug/train/n{n_s}_weights/ (the weights that
persian_rug.grid.keep_weights keeps, tms.persian_rug.weights).
"""

import pandas as pd

from tms.core import io
from tms.core.device import resolve_device
from tms.core.schema import schedule_warnings
from tms.engine import checkpoint
from tms.engine.grid import Schedule
from tms.persian_rug import params, training, weights
from tms.pipeline import stage


def main(pr, n_s):
    stage.check_n_s(pr, n_s)
    grid = pr.grid.at(n_s)
    device = resolve_device(pr.device)
    stage.warn(schedule_warnings("persian_rug.train", pr.train, pr.train.max_steps))
    ckpt = checkpoint.for_stage(f"pr_train@{n_s}", pr.train.checkpoint_every, device, pr.eval,
                                grid, pr.train)
    points = training.expand(n_s, grid.p, grid.ratio, grid.seeds)
    lr, sched = pr.train.lr_for(n_s), Schedule.of(pr.train)
    plan = training.plan_grid(n_s, points, pr.train.seed, lr, sched, device, pr.compute, ckpt,
                              lambda pt: grid.keeps(pt.p, pt.ratio_target), len(grid.models))
    index = [(model, pt.instance, pt.n_d) for model in grid.models for pt in points
             if pr.train.seed + pt.instance in plan.kept]
    tables, measured = [], []
    with io.atomic_path(f"data/persian_rug/train/n{n_s}_weights", directory=True) as tmp, \
            weights.Writer(tmp, n_s, index) as kept:
        for model in grid.models:
            table, statistics = training.train_and_score(
                n_s, points, pr.train.seed, lr, sched, model == "relu", pr.eval.seed,
                pr.eval.n_vectors, device, compute=pr.compute, ckpt=ckpt, statistics=True,
                sink=lambda pt, *w, model=model: kept.put(model, pt.instance, *w), plan=plan)
            tables.append(table)
            measured.append(statistics)
    io.write_parquet(pd.concat(measured, ignore_index=True),
                     f"data/persian_rug/stats/n{n_s}.parquet")
    io.write_parquet(pd.concat(tables, ignore_index=True), f"data/persian_rug/train/n{n_s}.parquet")
    if ckpt:
        ckpt.clear()


if __name__ == "__main__":
    stage.run(main, __doc__, stage.N_S, params=params.SECTION)
