"""docs/reliability.md lists the bad inputs and the faults the tests try, and nothing else: its
bad-input table is written from the tables of test_bad_params.py (each row there is a test that
fails if the input is accepted, hangs or ends in a traceback), and every test its faults table
names exists.

    python tests/pipeline/test_reliability_doc.py     # rewrite the bad-input table
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"
BEGIN = "<!-- bad inputs: written by tests/pipeline/test_reliability_doc.py -->"
END = "<!-- /bad inputs -->"

sys.path.insert(0, str(Path(__file__).parent))
import test_bad_params as bad  # noqa: E402

from tms.core import params_file  # noqa: E402


def _short(value) -> str:
    """``value`` as the table shows it: as a params error shows it (tms.core.params_file.shown),
    escaped for a Markdown table."""
    text = "(removed)" if value is bad.DELETE else params_file.shown(value)
    return text.replace("|", "\\|").replace("\n", "\\n")


def rows() -> list[tuple[str, str, str]]:
    """(input, outcome, test) of every bad input the tests try."""
    out = [(f"`{k} = {_short(v)}`", f"refused before any work, naming the key: “{a}”",
            "test_bad_params_name_key_value_and_rule") for k, v, _, a in bad.BAD]
    out += [(f"`{bad.IP}.{k} = {_short(v)}`", f"refused, naming the key: “{e}”",
             "test_bad_incidental_params_name_key_value_and_rule") for k, v, e in bad.IP_BAD]
    out += [(f"`{k} = {_short(v)}`", f"refused, naming the key: “{e}”",
             "test_bad_notes_params_name_the_key") for k, v, e in bad.AN_BAD]
    out += [("`" + "`, `".join(f"{k} = {_short(v)}" for k, v in edits.items()) + "`",
             f"refused before any work: “{says}”", "test_products_of_sizes_are_bounded_before_"
             "any_work") for edits, _, says in bad.TOO_MUCH]
    out += [(f"`{k} = {_short(v)}` for `{' '.join(argv)}`",
             f"the stage exits 2 and writes nothing: “{shown}”",
             "test_a_stage_with_bad_params_exits_2_and_touches_nothing")
            for argv, k, v, shown in bad.STAGE_BAD]
    out += [(f"`device = {name!r}` with {count} CUDA device(s)",
             f"refused, naming the key: “{allowed}”", "test_missing_device_is_a_params_error")
            for count, name, allowed in bad.DEVICE_BAD]
    out += [(f"a params file with {case}", f"refused, naming the line: “{shown}”",
             "test_a_file_yaml_cannot_hold_safely_is_refused_naming_the_line")
            for _, shown, case in bad.FILE_BAD]
    out += [(f"`params.yaml` {case}", f"refused at once: “{shown}”",
             "test_a_params_path_that_is_not_a_file_is_named_at_once")
            for case, (_, shown) in zip(["a folder", "a named pipe (FIFO)",
                                         "a link to /dev/zero"], bad.NOT_A_FILE)]
    out += [(f"a profile overlay with `extends: {_short(name)}`",
             "refused, naming the overlay and its folder's profiles",
             "test_an_overlay_extending_no_profile_is_named") for name in bad.EXTENDS_BAD]
    return out


def table() -> str:
    lines = ["| # | bad input | outcome | test |", "|---|---|---|---|"]
    lines += [f"| {k} | {i} | {o} | `{t}` |" for k, (i, o, t) in enumerate(rows(), 1)]
    return "\n".join(lines)


def _written() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()


def test_the_bad_input_table_is_the_tests_own():
    assert _written() == table(), "run `python tests/pipeline/test_reliability_doc.py`"
    assert len(rows()) >= 200


def test_every_fault_names_a_test_that_exists():
    text = DOC.read_text(encoding="utf-8")
    faults = text[text.index("## Faults"):text.index("## Bad inputs")]
    named = re.findall(r"^\| [^|]+ \| [^|]+ \| (.+) \|$", faults, re.M)[1:]   # after the header
    tests = {m for f in (ROOT / "tests").rglob("test_*.py")
             for m in re.findall(r"^def (test_\w+)", f.read_text(encoding="utf-8"), re.M)}
    names = [n for cell in named for n in re.findall(r"`(test_\w+)`", cell)]
    assert len(named) >= 15 and all(re.findall(r"`(test_\w+)`", c) for c in named)
    assert set(names) <= tests, set(names) - tests


if __name__ == "__main__":
    text = DOC.read_text(encoding="utf-8")
    DOC.write_text(text[:text.index(BEGIN) + len(BEGIN)] + "\n\n" + table() + "\n\n"
                   + text[text.index(END):], encoding="utf-8")
    print(f"{DOC.relative_to(ROOT)}: {len(rows())} bad inputs")
