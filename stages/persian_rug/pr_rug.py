"""Stage: the Persian rug model's loss for fig. 2 (section 4.2.2) and its interference variance.

For every ratio of persian_rug.rug and every p of persian_rug.fig2: Hadamard rows, a and b
fitted on a fit sample, per-feature MSE on the fixed held-out sample, and the eq. 6 statistics
of the rug W (tms.persian_rug.rows.row_sums once per n_d, then per p: var_nu_normalised,
variance_bound, bound_ratio).
Writes data/persian_rug/rug.parquet (columns n_s, n_d, ratio, p, a, b, loss and those three).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
import numpy as np

from tms.core import io, machine
from tms.core.device import resolve_device
from tms.persian_rug import artefacts, params, rows, rug, stats, training
from tms.pipeline import stage

BOUND_COLUMNS = ["var_nu_normalised", "variance_bound", "bound_ratio"]


def main(pr):
    n_s = pr.rug.n_s
    device = resolve_device(pr.device)
    n_ds = sorted({training.n_d_of(n_s, r) for r in pr.rug.ratio_values()})
    for where, need in rug.memory_bytes(n_s, max(n_ds), pr.rug.n_fit, device).items():
        machine.check_fits(need, where, f"the rug (n_s = {n_s}, n_fit = {pr.rug.n_fit})",
                           "lower persian_rug.rug.n_s or n_fit")
    samples = rug.RugSamples(fit_seed=pr.rug.fit_seed, n_fit=pr.rug.n_fit,
                             eval_seed=pr.eval.seed, n_eval=pr.eval.n_vectors)
    table = rug.rug_losses(n_s, n_ds, pr.fig2.p, pr.rug.seed, samples, device=device)
    sums = {n_d: rows.row_sums(*rug.rug_weights(n_s, rug.rows_for(n_s, n_d, pr.rug.seed)),
                               device=device) for n_d in n_ds}      # W once per n_d, every p
    bound = [stats.statistics_from_rows(*sums[n_d], np.zeros(n_s), p, n_d)
             for n_d, p in zip(table.n_d, table.p)]
    for col in BOUND_COLUMNS:
        table[col] = [s[col] for s in bound]
    io.write_parquet(table, artefacts.RUG)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
