"""Re-hash every output of the pipeline against ``dvc.lock`` and name those that differ.

``dvc status`` trusts its record of each file's size and modification time and does not read
a file whose both are unchanged, so a byte changed in place (by a disk error, or a tool that
restores times) goes unseen. This check runs DVC's status with a fresh, empty record
(``core.site_cache_dir`` in a temporary folder), so DVC hashes every output anew.

    python -m tms.pipeline.verify        # `make verify`

Exit status 0: every output matches; 1: an output differs or is missing (each named, with what
to do); 2: the check could not run (not a DVC repository, DVC busy with another command, a
broken dvc.yaml), said in one line.
"""

from __future__ import annotations

import argparse
import sys
import tempfile

from dvc.exceptions import DvcException
from dvc.repo import Repo

#: What to do about an output, by DVC's word for it.
ADVICE = {"deleted": "missing: `dvc checkout` restores it from the cache, or `make repro` "
                      "rebuilds it"}


def changed_outputs(repo: str = ".") -> dict[str, str]:
    """{output path: DVC's word for it ('modified', 'deleted', …)} for every output of every
    stage whose content, hashed anew, is not what ``dvc.lock`` records. Changed dependencies
    are not reported here (``dvc status`` does that)."""
    with tempfile.TemporaryDirectory() as tmp, \
            Repo(repo, config={"core": {"site_cache_dir": tmp}}) as dvc:
        status = dvc.status()
    changed: dict[str, str] = {}
    for entries in status.values():
        for entry in entries:
            if isinstance(entry, dict):
                changed.update(entry.get("changed outs", {}))
    return dict(sorted(changed.items()))


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    try:
        changed = changed_outputs()
    except DvcException as err:
        print(f"verify: cannot check the outputs: {err} (exit status 2)", file=sys.stderr)
        return 2
    for path, how in changed.items():
        print(f"{path}: {ADVICE.get(how, f'{how} (its content is not what dvc.lock records)')}")
    if not changed:
        print("every output matches dvc.lock")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
