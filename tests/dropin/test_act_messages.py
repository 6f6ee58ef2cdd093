"""condor_rm/hold/release's words, as src/condor_rm.V6/rm.cpp and JobActionResults build them:
the one constraint from clusters, users, -constraint and -all, and its summary words."""

from __future__ import annotations

import pytest

from htcd.cli.act import job_message, summary_constraint
from htcd.errors import UserError


def test_summary_constraint_words() -> None:
    assert summary_constraint(["12"], None, False) == ("ClusterId == 12", " in cluster 12")
    assert summary_constraint(["bob"], None, False) == ('Owner == "bob"', ' of user "bob"')
    assert summary_constraint(["12", "13"], None, False) == (
        "ClusterId == 12 || ClusterId == 13", " matching constraint (ClusterId == 12 || ClusterId == 13)")
    assert summary_constraint([], "JobPrio > 0", False) == ("JobPrio > 0", " matching constraint (JobPrio > 0)")
    assert summary_constraint(["12"], "JobPrio > 0", False) == (
        "(JobPrio > 0) && (ClusterId == 12)", " matching constraint ((JobPrio > 0) && (ClusterId == 12))")
    assert summary_constraint([], None, True) == ("ClusterId >= 0", "")
    assert summary_constraint(["12.0"], None, False) == (None, "")  # a job id has its own line
    with pytest.raises(UserError, match="can't mix -all with other constraints"):
        summary_constraint(["12"], None, True)


@pytest.mark.parametrize(("tool", "outcome", "ok", "line"), [
    ("rm", "removed", True, "Job 3.1 marked for removal"),
    ("rm", "removing", True, "Job 3.1 marked for removal"),
    ("rm", "already removed", False, "Job 3.1 already marked for removal"),
    ("rm", "denied: nobody is not the owner (bob) or a queue superuser", False, "Permission denied to remove job 3.1"),
    ("hold", "held", True, "Job 3.1 held"),
    ("hold", "not held: status 5", False, "Job 3.1 already held"),
    ("release", "released", True, "Job 3.1 released"),
    ("release", "not held", False, "Job 3.1 not held to be released"),
])
def test_job_lines(tool: str, outcome: str, ok: bool, line: str) -> None:
    assert job_message(tool, "3.1", outcome) == (ok, line)
