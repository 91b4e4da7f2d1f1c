"""Stage: gradients and flows of the notes on toy autoencoding (eqs. 19–28).

Writes data/autoencoding_notes/gradients.parquet (closed forms against autograd and each
other, tms.notes.flows.gradient_checks), flows.parquet (the tied flow of eq. 22 against
gradient descent on the tied loss for Σ = I, the sparse Σ and the scaled Σ,
tms.notes.flows.flows_table) and energy.parquet (eq. 28's energy along the flow with Σ = I,
tms.notes.flows.energy_along_flow).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.notes import artefacts, flows, params
from tms.pipeline import stage


def main(an):
    f = an.flows
    io.write_parquet(flows.gradient_checks(f.S, f.D, f.d, f.T, f.seed, an.scale_min),
                     artefacts.GRADIENTS)
    io.write_parquet(flows.flows_table(f, an.scale_min), artefacts.FLOWS)
    io.write_parquet(flows.energy_along_flow(f.D, f.d, f.init_std, f.seed, f.t_max, f.n_t),
                     artefacts.ENERGY)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
