"""Re-hash every output of the pipeline against ``dvc.lock`` and name those that differ.

``dvc status`` trusts its record of each file's size and modification time and does not read
a file whose both are unchanged, so a byte changed in place (by a disk error, or a tool that
restores times) goes unseen. This check runs DVC's status with a fresh, empty record
(``core.site_cache_dir`` in a temporary folder), so DVC hashes every output anew.

    python -m tms.pipeline.verify        # `make verify`; exit status 1 if an output differs
"""

from __future__ import annotations

import argparse
import sys
import tempfile

from dvc.repo import Repo


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
    changed = changed_outputs()
    for path, how in changed.items():
        print(f"{path}: {how} (its content is not what dvc.lock records)")
    if not changed:
        print("every output matches dvc.lock")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
