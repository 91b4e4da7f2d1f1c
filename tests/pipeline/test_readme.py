"""The README is a front door (at most 150 lines, its answer table the snapshots' claims) and the
guide states the pipeline as it is: its table of stages ("Stages and the files they write")
names every stage of dvc.yaml and, for each, every file it writes; its example of a bad value's
message is the message."""

import re
from pathlib import Path

import pytest
import yaml

from tms.core.schema import ParamsError
from tms.pipeline import params, verdicts


def test_the_readme_is_short_and_its_answer_is_the_snapshots(root):
    readme = (root / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    assert verdicts.with_answer(readme, verdicts.answer(root / "results")) == readme
    for page in ("guide", "claims", "performance", "troubleshooting"):
        assert f"(docs/{page}.md)" in readme and (root / "docs" / f"{page}.md").is_file()


def _table(readme: str) -> dict[str, str]:
    """Stage cell → writes cell, from the README's stages table."""
    rows, inside = {}, False
    for line in readme.splitlines():
        inside = inside or line.startswith("## Stages and the files they write")
        if inside and line.startswith("| `"):
            stage, writes = [c.strip() for c in line.strip("|").split("|")][:2]
            rows[stage] = writes
        elif inside and rows and not line.startswith("|"):
            break
    return rows


def test_the_readme_names_every_stage_and_what_it_writes(root):
    stages = yaml.safe_load((root / "dvc.yaml").read_text())["stages"]
    table = _table((root / "docs/guide.md").read_text())
    for name, stage in stages.items():
        rows = [writes for cell, writes in table.items()
                if cell.startswith(f"`{name}`") or cell.startswith(f"`{name}@")]
        assert rows, f"stage {name} is not in the README's stages table"
        for out in [o for kind in ("outs", "metrics", "plots") for o in stage.get(kind, [])]:
            path = next(iter(out)) if isinstance(out, dict) else out
            base = Path(path).name                 # a foreach item's key, written {key} or <key>
            forms = {re.sub(r"\$\{item\.(\w+)\}", f, base) for f in (r"{\1}", r"<\1>")}
            assert any(form in writes for form in forms for writes in rows), (name, path)
    named = {cell.strip("`").split("@")[0].split("`")[0] for cell in table}
    assert named <= set(stages), named - set(stages)


def test_the_readme_example_of_a_bad_value_is_the_message(root, load_profile):
    readme = (root / "docs/guide.md").read_text()
    stated = next(line.strip() for line in readme.splitlines()
                  if line.strip().startswith("persian_rug.rug.n_s = 1000:"))
    bad = load_profile("default")
    bad["persian_rug"]["rug"]["n_s"] = 1000
    with pytest.raises(ParamsError) as err:
        params.SECTION.parse(bad, "params.yaml")
    assert stated in [line.strip() for line in str(err.value).splitlines()]
