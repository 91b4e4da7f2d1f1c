"""Stage: the convergence check beyond the stopping rule (tms.persian_rug.converge) of one
trained grid (``--of N_S``: data/persian_rug/train/n{N_S}.parquet) or of the fig. 3 models
(``--of fig3``: data/persian_rug/fig3.parquet): per (n_s, p), the model the rule stopped last
(with persian_rug.converge.capped, the model with the most steps, capped or stopped) trained
again persian_rug.converge.factor times its steps (at least converge.min_steps) with the rule
off, on from where it stopped (the training state its training stage kept: data/persian_rug/
train/n{N_S}_ends/, data/persian_rug/fig3_ends/).

Writes data/persian_rug/converge/n{N_S}.parquet or data/persian_rug/converge/fig3.parquet
(columns tms.persian_rug.converge.COLUMNS).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
import pandas as pd

from tms.core import io
from tms.core.device import resolve_device
from tms.core.schema import ParamsError
from tms.engine import checkpoint
from tms.engine.grid import Schedule
from tms.persian_rug import converge, ends, params, trained_artefacts, training
from tms.pipeline import stage

OF = ("--of", {"required": True, "metavar": "N_S|fig3", "dest": "of",
               "help": "one of persian_rug.grid.n_s, or fig3"})


def main(pr, of):
    if of == "fig3":
        n_s, source = pr.fig3.n_s, "fig3"
        table, states, out = (trained_artefacts.FIG3, trained_artefacts.FIG3_ENDS,
                              trained_artefacts.CONVERGE_FIG3)
    elif of.isdigit() and int(of) in pr.grid.n_s:
        n_s, source = int(of), "grid"
        table, states, out = (trained_artefacts.trained(n_s), trained_artefacts.trained_ends(n_s),
                              trained_artefacts.converge(n_s))
    else:
        raise ParamsError(f"--of {of}: one of persian_rug.grid.n_s = {pr.grid.n_s}, or fig3")
    device = resolve_device(pr.device)
    ckpt = checkpoint.for_stage(f"pr_converge@{of}", pr.train.checkpoint_every, device, pr.eval,
                                pr.train, pr.converge.factor, pr.converge.min_steps,
                                pr.converge.capped)
    spec = training.GridSpec(n_s, pr.train.seed, pr.train.lr_for(n_s), Schedule.of(pr.train),
                             pr.eval.seed, pr.eval.n_vectors, device, pr.compute)
    checks = converge.rerun(spec, pd.read_parquet(table), pr.converge.factor, source, ckpt,
                            pr.converge.min_steps, pr.converge.capped, ends.read(states))
    io.write_parquet(checks, out)
    if ckpt:
        ckpt.clear()


if __name__ == "__main__":
    stage.run(main, __doc__, OF, params=params.SECTION)
