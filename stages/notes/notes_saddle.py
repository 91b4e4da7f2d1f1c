"""Stage: Propositions 1 and 3 of the notes on toy autoencoding, on a Σ with distinct eigenvalues.

Σ of the sparse data scaled by distinct factors. Writes data/autoencoding_notes/
critical_points.parquet (every size-d index set: loss, gradient, Hessian inertia;
tms.notes.theory.critical_points_table), saddle.parquet (the proof's perturbation against ε) and
saddle.json (its summary; tms.notes.theory.saddle_table).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.notes import artefacts, params, theory
from tms.pipeline import stage


def main(an):
    sd = an.saddle
    sigma = theory.sparse_sigma(sd.S, sd.D, theory.scale_factors(sd.D, an.scale_min))
    C = theory.invertible_c(sd.d, sd.seed)
    table, summary = theory.saddle_table(sigma, sd.I, C, sd.epsilon.values())
    io.write_parquet(theory.critical_points_table(sigma, sd.d, C),
                     artefacts.CRITICAL_POINTS)
    io.write_parquet(table, artefacts.SADDLE)
    io.write_json(summary, artefacts.SADDLE_SUMMARY)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
