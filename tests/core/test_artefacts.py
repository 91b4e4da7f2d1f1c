"""Each paper's artefact paths are named once (tms.<paper>.artefacts) and match dvc.yaml: every
data stage of the paper writes exactly what its artefacts module says, its report writes the
figures folder the claims link into, and its claims stage reads only the paper's artefacts."""

import pytest
from dvc.repo import Repo

from tms.incidental import artefacts as ip
from tms.notes import artefacts as notes
from tms.persian_rug import artefacts as pr
from tms.pipeline import params


@pytest.fixture(scope="module")
def stages(root) -> dict:
    """The stages of dvc.yaml as DVC resolves them for the committed params.yaml (matrix items
    expanded): name → (out paths, dep paths)."""
    with Repo(root) as repo:
        return {s.addressing: ([o.def_path for o in s.outs], [d.def_path for d in s.deps])
                for s in repo.index.stages}


def _papers(root):
    grid_n_s = params.SECTION.load(root / "params.yaml").persian_rug.grid.n_s
    return [("pr_", pr, pr.outs(grid_n_s), "persian_rug"),
            ("ip_", ip, ip.outs(), "incidental_polysemanticity"),
            ("notes_", notes, notes.outs(), "autoencoding_notes")]


@pytest.mark.parametrize("k", range(3), ids=["persian_rug", "incidental", "notes"])
def test_the_artefacts_module_of_a_paper_is_what_its_stages_write(root, stages, k):
    prefix, module, outs, paper = _papers(root)[k]
    written = {name: out for name, (out, _) in stages.items()
               if name.startswith(prefix) and name != f"{prefix}report"}
    assert written == outs
    report_outs, report_deps = stages[f"{prefix}report"]
    assert module.FIGURES in report_outs and module.CLAIMS in report_deps
    assert module.CLAIMS == f"reports/claims/{paper}.json"
    produced = {p for paths in outs.values() for p in paths}
    _, claims_deps = stages[f"{prefix}claims"]
    data = [d for d in claims_deps if d.startswith("data/")]
    assert data and all(d in produced or any(p.startswith(d + "/") for p in produced)
                        for d in data)
