"""Shadow exit codes htcd writes where HTCondor does, with the job ad and the events that follow:
103 (killed by a signal with a core file: JobCoreDumped, "Corefile in" in the terminated event),
114 (the deferral window missed: held with code 20); and a real eviction's 004 event with its
Partitionable Resources table.  One pool for the module."""

from __future__ import annotations

import re
import time

import pytest
from pooltools import wait_for
from startd.startd_tools import WAITER, job_pid, script

KNOBS = {"NUM_CPUS": "2", "POLLING_INTERVAL": "0.5", "PERIODIC_EXPR_INTERVAL": "1"}
CORE = """#!/bin/sh
exec /usr/bin/python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGQUIT)'
"""


@pytest.fixture(scope="module")
def pool(module_pool):
    return module_pool(KNOBS, slots=2)


def statuses(pool) -> list[int]:
    return [int(n) for n in re.findall(r"EXITING WITH STATUS (\d+)", pool.log("ShadowLog"))]


def event_text(pool, log: str, code: str) -> str:
    """The body of the first event ``code`` in the job's log ("" until it is there)."""
    text = (pool.jobs_dir / log).read_text() if (pool.jobs_dir / log).exists() else ""
    for block in text.split("...\n"):
        if block.lstrip("\n").startswith(code + " ("):
            return block
    return ""


def test_a_core_dump_exits_103_with_the_core_file(pool) -> None:
    script(pool, "core.sh", CORE)
    cluster = pool.submit("executable = core.sh\ncoresize = -1\nshould_transfer_files = YES\n"
                          "log = core.log\nqueue\n", name="core.sub")
    wait_for(lambda: event_text(pool, "core.log", "005"), 90, "the terminated event")
    body = event_text(pool, "core.log", "005")
    core = pool.jobs_dir / "core"
    assert "\t(0) Abnormal termination (signal 3)\n" in body, body
    assert f"\t(1) Corefile in: {core}\n" in body, body
    assert core.exists() and core.stat().st_size > 0
    wait_for(lambda: 103 in statuses(pool), 30, "EXITING WITH STATUS 103")
    hist = pool.htcd("history", f"{cluster}.0", "-af", "JobCoreDumped", "ExitBySignal", "ExitSignal").stdout.split()
    assert hist == ["true", "true", "3"], hist


def test_a_signal_without_core_is_no_103(pool) -> None:
    script(pool, "nocore.sh", CORE)
    before = statuses(pool).count(103)
    pool.submit("executable = nocore.sh\nshould_transfer_files = YES\nlog = nocore.log\nqueue\n", name="nocore.sub")
    wait_for(lambda: event_text(pool, "nocore.log", "005"), 90, "the terminated event")
    assert "\t(0) No core file\n" in event_text(pool, "nocore.log", "005")
    assert statuses(pool).count(103) == before


def test_a_missed_deferral_exits_114_and_holds(pool) -> None:
    script(pool, "quick.sh", "#!/bin/sh\necho ran\n")
    past = int(time.time()) - 3600  # set directly: deferral_time's Requirements would keep it from matching
    cluster = pool.submit(f"executable = quick.sh\n+DeferralTime = {past}\n+DeferralWindow = 10\n"
                          "log = defer.log\nqueue\n", name="defer.sub")
    job = f"{cluster}.0"
    wait_for(lambda: pool.job_attr(job, "JobStatus") == "5", 60, "the job to be held")
    assert pool.job_attr(job, "HoldReasonCode") == "20"
    wait_for(lambda: 114 in statuses(pool), 30, "EXITING WITH STATUS 114")
    assert "\tCode 20 Subcode 0\n" in event_text(pool, "defer.log", "012")
    pool.htcd("rm", job)


def test_an_eviction_writes_the_resources_table(pool) -> None:
    script(pool, "wait.sh", WAITER)
    cluster = pool.submit("executable = wait.sh\narguments = 7\nrequest_memory = 64M\nlog = evict.log\n"
                          "requirements = NumJobStarts =?= undefined || NumJobStarts == 0\nqueue\n", name="evict.sub")
    job = f"{cluster}.0"
    job_pid(pool, 7)
    wait_for(lambda: pool.job_attr(job, "JobStatus") == "2", 30, "the job to run")
    pool.htcd("vacate_job", job)
    wait_for(lambda: event_text(pool, "evict.log", "004"), 60, "the evicted event")
    body = event_text(pool, "evict.log", "004")
    assert "via htcd vacate_job" in body
    assert "\tPartitionable Resources :    Usage  Request Allocated \n" in body, body
    memory = re.search(r"\t   Memory \(MB\)          : +(\S*) +(\d+) +(\d+) \n", body)
    assert memory is not None and memory.group(2) == "64", body
    pool.htcd("rm", job)
