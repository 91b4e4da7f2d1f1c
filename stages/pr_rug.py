"""Stage: the Persian rug model's loss for fig. 2 (section 4.2.2).

For every ratio of persian_rug.rug and every p of persian_rug.fig2: Hadamard rows, a and b
fitted on a fit sample, per-feature MSE on the fixed held-out sample.
Writes data/persian_rug/rug.parquet (columns n_s, n_d, ratio, p, a, b, loss).
"""

from tms import grid, io, rug, stage
from tms.params import resolve_device


def main(params):
    pr = params.persian_rug
    n_s = pr.rug.n_s
    n_ds = sorted({grid.n_d_of(n_s, r) for r in pr.rug.ratio_values()})
    table = rug.rug_losses(n_s, n_ds, pr.fig2.p, seed=pr.rug.seed, fit_seed=pr.rug.fit_seed,
                           eval_seed=pr.eval.seed, n_fit=pr.rug.n_fit,
                           n_eval=pr.eval.n_vectors, device=resolve_device(pr.device))
    io.write_parquet(table, "data/persian_rug/rug.parquet")


if __name__ == "__main__":
    stage.run(main)
