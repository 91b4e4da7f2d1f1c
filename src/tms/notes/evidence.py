"""The evidence the claims of the notes on toy autoencoding are judged on (tms.notes.claims): the
stage outputs read once (:class:`Outputs`, :meth:`Outputs.load` from the paths of
tms.notes.artefacts), with the values several checks share derived once.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tms.core import divergence
from tms.core.claim_rows import span
from tms.notes import artefacts, theory
from tms.notes.params import Notes


@dataclass(frozen=True)
class Outputs:
    """What the checks read: the stage tables under data/autoencoding_notes/
    (tms.notes.artefacts).

    moments and skeletons: Monte Carlo against the closed forms, one row per (S, D) point
    (tms.notes.data); linear and relu: the trained linear and ReLU-output autoencoders, one row
    per model, those that diverged left out (tms.notes.training, tms.core.divergence.split);
    critical, saddle and saddle_summary (tms.notes.theory); gradients, flows and energy
    (tms.notes.flows); spectrum: the eigenvalues of Σ of the notes' own data, shape (D,), in
    decreasing order (tms.notes.theory.spectrum).
    """

    moments: pd.DataFrame
    skeletons: pd.DataFrame
    linear: pd.DataFrame
    critical: pd.DataFrame
    saddle: pd.DataFrame
    saddle_summary: dict
    gradients: pd.DataFrame
    flows: pd.DataFrame
    energy: pd.DataFrame
    relu: pd.DataFrame
    spectrum: np.ndarray

    @classmethod
    def load(cls, an: Notes) -> Outputs:
        """Read the outputs from the paths of tms.notes.artefacts (relative to the working
        directory, the repository root), leaving out the linear and ReLU-output models that
        diverged; the spectrum is that of Σ of the sparse data at the smallest S of
        ``an.linear`` and D ``an.linear.D`` (tms.notes.theory.sparse_sigma). Raises
        FileNotFoundError if a stage has not run."""
        a, read = artefacts, pd.read_parquet
        return cls(
            moments=read(a.MOMENTS), skeletons=read(a.SKELETONS),
            linear=divergence.split(read(a.LINEAR))[0], critical=read(a.CRITICAL_POINTS),
            saddle=read(a.SADDLE), saddle_summary=json.loads(Path(a.SADDLE_SUMMARY).read_text()),
            gradients=read(a.GRADIENTS), flows=read(a.FLOWS), energy=read(a.ENERGY),
            relu=divergence.split(read(a.RELU))[0],
            spectrum=theory.spectrum(theory.sparse_sigma(min(an.linear.S), an.linear.D))[0])

    @functools.cached_property
    def moments_scale(self) -> str:
        """The scale of the Monte Carlo moments: points, S and D, vectors per point."""
        m = self.moments
        return (f"{len(m)} (S, D) points, S {span(m.S)}, D {span(m.D)}; "
                f"{m.n_vectors.iloc[0]} vectors each")

    @functools.cached_property
    def linear_final(self) -> pd.DataFrame:
        """The linear autoencoders trained to the largest step cap (empty if all diverged)."""
        return self.linear[self.linear.steps_cap == self.linear.steps_cap.max()]

    @functools.cached_property
    def linear_first(self) -> pd.DataFrame:
        """The linear autoencoders trained to the smallest step cap."""
        return self.linear[self.linear.steps_cap == self.linear.steps_cap.min()]

    @functools.cached_property
    def linear_sparse(self) -> pd.DataFrame:
        """:attr:`linear_final` on the sparse data (not scaled)."""
        return self.linear_final[self.linear_final.spectrum == "sparse"]

    @functools.cached_property
    def linear_scale(self) -> str:
        """The scale of :attr:`linear_final`: D, d, S, models, steps. Raises IndexError if it
        is empty."""
        final = self.linear_final
        return (f"D {span(final.D)}, d {span(final.d)}, S {span(final.S)}; {len(final)} models, "
                f"{int(final.steps_cap.iloc[0])} Adam steps")

    @functools.cached_property
    def critical_scale(self) -> str:
        """The scale of the critical points: how many index sets."""
        return f"all {len(self.critical)} index sets of the scaled data"

    @functools.cached_property
    def energy_moving(self) -> pd.DataFrame:
        """The energy along the flow at times t > 0 (where dE/dt is defined)."""
        return self.energy[self.energy.t > 0]
