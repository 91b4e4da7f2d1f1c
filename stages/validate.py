"""Stage: the whole params.yaml checked before any other stage runs.

Every stage that starts the pipeline depends on this stage's output, so under a plain
`dvc repro` a bad value or a misspelt key stops here, named, before DVC removes any other stage's
outputs (`make repro` checks the same before DVC starts). It tracks the whole file, so any edit
reruns it (under a second), and writes data/params.valid, the same bytes whenever the file is
valid: a valid edit reruns only the stages whose params it touches. The output is persistent, so
DVC keeps it while a refused file is fixed.
"""

if __name__ == "__main__":         # first: says what to do where the package is missing
    import _guard  # noqa: F401
from tms.core import io
from tms.pipeline import params, stage


def main(_whole):
    with io.atomic_path(params.VALID) as tmp:
        tmp.write_text("params.yaml is valid under the schema of tms.pipeline.params\n")


if __name__ == "__main__":
    stage.run(main, __doc__, params=params.SECTION)
