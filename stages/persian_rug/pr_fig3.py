"""Stage: train the fig. 3 model(s) of the Persian Rug paper (n_s 512, n_d 130, p 0.044).

Writes data/persian_rug/fig3.parquet (one row per seed, columns
tms.persian_rug.training.TRAIN_COLUMNS), data/persian_rug/fig3_weights/
(tms.persian_rug.weights) and data/persian_rug/fig3_ends/ (the training state where the model
the convergence check retrains stopped, tms.persian_rug.ends).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.core.device import resolve_device
from tms.core.schema import schedule_warnings
from tms.engine import checkpoint
from tms.engine.grid import Schedule
from tms.persian_rug import params, trained_artefacts, training
from tms.pipeline import stage


def main(pr):
    f3 = pr.fig3
    sched = Schedule.of(pr.train, f3.max_steps)   # fig3.max_steps None: train.max_steps
    stage.warn(schedule_warnings("persian_rug.train", pr.train, sched.max_steps))
    lr = f3.lr if f3.lr is not None else pr.train.lr_for(f3.n_s)
    device = resolve_device(pr.device)
    ckpt = checkpoint.for_stage("pr_fig3", pr.train.checkpoint_every, device, pr.eval, f3,
                                sched, lr)
    spec = training.GridSpec(f3.n_s, pr.train.seed, lr, sched, pr.eval.seed, pr.eval.n_vectors,
                             device, pr.compute, label="fig. 3 ")
    points = [training.Point(k, f3.p, f3.n_d / f3.n_s, f3.n_d, k) for k in range(f3.seeds)]
    table = training.train_models(spec, points, ["relu"], trained_artefacts.FIG3_WEIGHTS, ckpt,
                                  ends_dir=trained_artefacts.FIG3_ENDS)
    io.write_parquet(table, trained_artefacts.FIG3)
    if ckpt:
        ckpt.clear()


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
