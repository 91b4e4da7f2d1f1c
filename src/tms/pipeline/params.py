"""The params schema of the whole file: one section per paper, each the paper's own schema
(tms.persian_rug.params, tms.incidental.params, tms.notes.params), every profile merged onto it
(tms.pipeline.profiles). ``make repro`` validates the whole file before DVC starts a stage, and so
does the first stage of a plain ``dvc repro`` (stages/validate.py, writing :data:`VALID`, on which
every other stage depends); each stage validates its own section again (tms.pipeline.stage).
"""

from __future__ import annotations

from tms.core.params_file import Section
from tms.core.schema import Strict
from tms.incidental.params import Incidental
from tms.notes.params import Notes
from tms.persian_rug.params import PersianRug


class Params(Strict):
    """The whole params file: one section per paper."""

    persian_rug: PersianRug
    incidental_polysemanticity: Incidental
    autoencoding_notes: Notes


#: The whole params file and its schema.
SECTION = Section(None, Params)
#: The output of the validation stage (stages/validate.py): the same bytes whenever params.yaml is
#: valid; every stage that reads no other stage's output depends on it, so it runs first.
VALID = "data/params.valid"
#: The papers, by their params keys, in the schema's order (the order of the site, the README and
#: the reports: tms.reporting.metrics.PAPERS, which the tests hold to this).
PAPERS = tuple(Params.model_fields)
