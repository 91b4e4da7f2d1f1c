"""Stage: the sparse data of the notes on toy autoencoding (sections 2.1 and 3.1).

Writes data/autoencoding_notes/moments.parquet (Σ exactly and by Monte Carlo on the grid
S × D, tms.notes.data.moments_table) and data/autoencoding_notes/skeletons.parquet (the mass
of ∪_{l≥2} Q_l exactly and by Monte Carlo, tms.notes.data.skeletons_table).
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io, machine
from tms.notes import artefacts, data, params
from tms.pipeline import stage


def main(an):
    m, s = an.moments, an.skeletons
    for key, section in (("moments", m), ("skeletons", s)):
        machine.check_fits(data.sample_bytes(section.n_vectors, max(section.D)), "cpu",
                           f"sampling autoencoding_notes.{key} (n_vectors = {section.n_vectors}, "
                           f"D up to {max(section.D)})", "lower n_vectors or the largest D")
    io.write_parquet(data.moments_table(m.S, m.D, m.n_vectors, m.seed),
                     artefacts.MOMENTS)
    io.write_parquet(data.skeletons_table(s.S, s.D, s.n_vectors, s.seed),
                     artefacts.SKELETONS)


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
