"""The params schema of the whole file: one section per paper of the registry (tms.core.papers),
each the paper's own schema (its package's ``params.SECTION``), every profile merged onto it
(tms.pipeline.profiles). ``make repro`` validates the whole file before DVC starts a stage, and so
does the first stage of a plain ``dvc repro`` (stages/validate.py, writing :data:`VALID`, on which
every other stage depends); each stage validates its own section again (tms.pipeline.stage).
"""

from __future__ import annotations

from pydantic import create_model

from tms.core import papers
from tms.core.params_file import Section
from tms.core.schema import Strict

#: The whole params file: one section per paper of the registry (tms.core.papers), in its order,
#: each the schema of the paper's own ``params.SECTION``.
Params = create_model("Params", __base__=Strict, __doc__="The whole params file: one section "
                      "per paper.", **{p.key: (p.module("params").SECTION.model, ...)
                                        for p in papers.PAPERS})
#: The whole params file and its schema.
SECTION = Section(None, Params)
#: The output of the validation stage (stages/validate.py): the same bytes whenever params.yaml is
#: valid; every stage that reads no other stage's output depends on it, so it runs first.
VALID = "data/params.valid"
