"""JOBSTATE_LOG lines: the manual's example and the lines HTCondor's job_dagman_jobstate_log test expects."""

from __future__ import annotations

import re

import pytest

from htcd.dagman import jobstate
from htcd.dagman.jobstate import JobstateEntry, line, parse_line

# docs/automated-workflows/dagman-information-files.rst, "Example jobstate log contents".
MANUAL = """\
1292620511 INTERNAL *** DAGMAN_STARTED 4972.0 ***
1292620523 NodeA PRE_SCRIPT_STARTED - local - 1
1292620523 NodeA PRE_SCRIPT_SUCCESS - local - 1
1292620525 NodeA SUBMIT 4973.0 local - 1
1292620525 NodeA EXECUTE 4973.0 local - 1
1292620526 NodeA JOB_TERMINATED 4973.0 local - 1
1292620526 NodeA JOB_SUCCESS 0 local - 1
1292620526 NodeA POST_SCRIPT_STARTED 4973.0 local - 1
1292620531 NodeA POST_SCRIPT_TERMINATED 4973.0 local - 1
1292620531 NodeA POST_SCRIPT_SUCCESS 4973.0 local - 1
1292620535 INTERNAL *** DAGMAN_FINISHED 0 ***
"""


def test_the_manuals_example_line_by_line() -> None:
    made = [
        jobstate.started_line("4972.0", now=1292620511),
        jobstate.script_line("PRE", "started", "NodeA", now=1292620523, sequence=1, tag="local"),
        jobstate.script_line("PRE", "ended", "NodeA", now=1292620523, sequence=1, tag="local"),
        line("SUBMIT", "NodeA", "4973.0", now=1292620525, sequence=1, extra="local"),
        line(jobstate.ULOG_EVENT_NAMES[1], "NodeA", "4973.0", now=1292620525, sequence=1, extra="local"),
        line(jobstate.ULOG_EVENT_NAMES[5], "NodeA", "4973.0", now=1292620526.9, sequence=1, extra="local"),
        jobstate.job_result_line("NodeA", 0, now=1292620526, sequence=1, tag="local"),
        jobstate.script_line("POST", "started", "NodeA", now=1292620526, sequence=1, job_id="4973.0", tag="local"),
        line(jobstate.ULOG_EVENT_NAMES[16], "NodeA", "4973.0", now=1292620531, sequence=1, extra="local"),
        jobstate.script_line("POST", "ended", "NodeA", now=1292620531, sequence=1, job_id="4973.0", tag="local"),
        jobstate.finished_line(0, now=1292620535),
    ]
    assert "\n".join(made) + "\n" == MANUAL


def test_htcondors_jobstate_log_test_expectations() -> None:
    """Lines of src/condor_tests/job_dagman_jobstate_log.run (no job tag gives ``-``; a failed
    submit has no condorID, nor has the POST script run after it)."""
    cases = [
        (line("SUBMIT", "NodeC", "88.0", now=5, sequence=3), r"^\d+ NodeC SUBMIT \d+.0 - - 3$"),
        (jobstate.job_result_line("NodeA", 2, now=5, sequence=1, tag="local"), r"^\d+ NodeA JOB_FAILURE 2 local - 1$"),
        (jobstate.job_result_line("NodeD", 1, now=5, sequence=5), r"^\d+ NodeD JOB_FAILURE 1 - - 5$"),
        (jobstate.script_line("POST", "ended", "NodeC", now=5, sequence=3, job_id="88.0", success=False),
         r"^\d+ NodeC POST_SCRIPT_FAILURE \d+.0 - - 3$"),
        (line("SUBMIT_FAILURE", "NodeE", None, now=5, sequence=7), r"^\d+ NodeE SUBMIT_FAILURE - - - 7$"),
        (jobstate.script_line("POST", "started", "NodeE", now=5, sequence=7),
         r"^\d+ NodeE POST_SCRIPT_STARTED - - - 7$"),
        (jobstate.script_line("PRE", "started", "NodeB", now=5, sequence=2, job_id="9.0", tag="viz"),
         r"^\d+ NodeB PRE_SCRIPT_STARTED - viz - 2$"),
    ]
    for text, pattern in cases:
        assert re.match(pattern, text), (text, pattern)


def test_recovery_lines() -> None:
    assert jobstate.recovery_line("started", now=7) == "7 INTERNAL *** RECOVERY_STARTED ***"
    assert jobstate.recovery_line("finished", now=7) == "7 INTERNAL *** RECOVERY_FINISHED ***"
    assert jobstate.recovery_line("failure", now=7) == "7 INTERNAL *** RECOVERY_FAILURE ***"
    with pytest.raises(ValueError, match="not one of"):
        jobstate.recovery_line("halfway", now=7)


def test_lines_read_back() -> None:
    entries = [parse_line(t) for t in MANUAL.splitlines()]
    assert entries[0] == JobstateEntry(1292620511, None, "DAGMAN_STARTED", "4972.0", None, None)
    assert entries[1] == JobstateEntry(1292620523, "NodeA", "PRE_SCRIPT_STARTED", None, "local", 1)
    assert entries[6] == JobstateEntry(1292620526, "NodeA", "JOB_SUCCESS", "0", "local", 1)
    assert entries[-1] == JobstateEntry(1292620535, None, "DAGMAN_FINISHED", "0", None, None)
    for bad in ("", "abc NodeA SUBMIT 1.0 - - 1", "5 NodeA SUBMIT 1.0 - 1", "5 NodeA SUBMIT 1.0 - - x",
                "5 INTERNAL DAGMAN_STARTED"):
        with pytest.raises(ValueError):
            parse_line(bad)


def test_refusals() -> None:
    with pytest.raises(ValueError, match="cannot be written"):
        line("SUBMIT", "two words", "1.0", now=1, sequence=1)
    with pytest.raises(ValueError, match="only PRE and POST"):
        jobstate.script_line("HOLD", "started", "A", now=1, sequence=1)
