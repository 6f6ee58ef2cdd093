"""The param table stays complete (every knob the code reads) and docs/knobs.md stays in step with it."""

from __future__ import annotations

import re
from pathlib import Path

from htcd.config import table
from htcd.config._table import COMPUTED
from htcd.config.knobdoc import render
from htcd.config.knobscan import knob_reads

ROOT = Path(__file__).resolve().parents[2]


def _family(name: str) -> re.Pattern[str]:
    """A table name as a pattern: ``<SUBSYS>_LOG`` matches SCHEDD_LOG."""
    return re.compile(".+".join(re.escape(part) for part in re.split(r"<[^>]*>", name)), re.IGNORECASE)


def known(name: str) -> bool:
    """In the table, computed, or matching a family row (``<SUBSYS>_LOG``); an f-string's ``{}``
    stands for any text."""
    names = [p.name for p in table().values()] + [n for n, _ in COMPUTED.values()] + ["SUBSYSTEM"]
    want = re.compile(".+".join(re.escape(part) for part in name.split("{}")), re.IGNORECASE)
    sample = name.replace("{}", "X")
    return any(want.fullmatch(re.sub(r"<[^>]*>", "X", n)) or _family(n).fullmatch(sample) for n in names)


def test_the_scan_finds_knob_reads() -> None:
    reads = {name for _, name in knob_reads()}
    assert {"START", "MAX_JOBS_RUNNING", "ENABLE_RUNTIME_CONFIG", "{}_LOG"} <= reads


def test_every_knob_the_code_reads_is_in_the_param_table() -> None:
    missing = sorted({f"{name} ({where})" for where, name in knob_reads() if not known(name.split(".")[-1])})
    assert not missing, ("knobs read by the code but missing from htcd/config/param_table.tsv (add a row; "
                         "a knob family is a row like <SUBSYS>_LOG): " + ", ".join(missing))


def test_pattern_rows_and_f_strings_match() -> None:
    assert known("{}_LOG") and known("MAX_{}_LOG") and known("SCHEDD_ADDRESS_FILE")
    assert known("{}_{}_IS_WARNING") and known("SUBMIT_REQUIREMENT_{}") and known("STARTD_SETTABLE_ATTRS_CONFIG")
    assert not known("NO_SUCH_KNOB_AT_ALL") and not known("{}_NO_SUCH_SUFFIX")


def test_knobs_md_is_up_to_date() -> None:
    current = (ROOT / "docs" / "knobs.md").read_text(encoding="utf-8")
    assert current == render(), "docs/knobs.md is out of date: run python -m htcd.config.knobdoc > docs/knobs.md"


def test_knobs_md_lists_every_row_with_its_section() -> None:
    text = render()
    for p in table().values():
        assert f"`{p.name}`" in text
    sections = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert len(sections) == len(set(sections)) >= 5
    assert all(p.section for p in table().values()), "every row sits under a '# == Section' line"
