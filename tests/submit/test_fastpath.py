"""Jobs after the first of a queue statement re-run only the sections their values change:
the result must equal building every job whole."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from htcd.config import load
from htcd.submit import parse_submit
from htcd.submit.commands import SECTIONS, Plan
from htcd.submit.templates import TemplateSet

sys.path.insert(0, str(Path(__file__).parent))
from diff_cases import CASES
from test_differential import case_files

EXTRA = {
    "output_varies_to_devnull": "executable = run.sh\noutput = $(o)\nqueue o in (/dev/null, out.txt, /dev/null)\n",
    "universe_varies": "executable = run.sh\ndocker_image = x\nuniverse = $(u)\nqueue u in (vanilla, docker, local)\n",
    "nested_dynamic": "executable = run.sh\na = $(Process)\nb = x$(a)\nrequest_memory = $INT(b:1)\n"
                      "+Tag = \"$(b)\"\nrequest_foo = $(Step)\nqueue 2 in (p, q)\n",
}


@pytest.mark.parametrize("name", [*CASES, *EXTRA])
def test_partial_rebuild_equals_full_build(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load("SUBMIT", env={"HTCD_CONFIG": str(case_files(tmp_path, name))})
    text = CASES.get(name) or EXTRA[name]
    if "RANDOM" in text:
        pytest.skip("random values differ between two builds")
    if name == "nested_dynamic":
        text = text.replace("$INT(b:1)", "$INT(Process)")

    def build() -> tuple[dict[str, str], list[dict[str, str]]]:
        desc = parse_submit(text, "job.sub", submit_dir=str(tmp_path), templates=TemplateSet.from_config(cfg))
        return desc.make_jobs(3, submit_dir=str(tmp_path), owner="u", qdate=9, env={"HOME": "/h"},
                              config_get=cfg.get)

    fast = build()
    with monkeypatch.context() as m:
        m.setattr(Plan, "dirty", lambda self, dynamic: set(SECTIONS))
        full = build()
    merged = [{**fast[0], **p} for p in fast[1]]
    assert merged == [{**full[0], **p} for p in full[1]]
