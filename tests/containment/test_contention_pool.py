"""Two jobs on one 4-CPU partitionable slot, pinned to one CPU so that they compete: the kernel
shares that CPU in proportion to their cgroups' weights (request_cpus 1 and 3); a job that
allocates beyond its request_memory is held as HTCondor holds it; no job group outlives its job."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest
from containment.cgroup_tools import LAYOUT, groups_of, read_value
from pooltools import wait_for

pytestmark = pytest.mark.skipif(LAYOUT is None, reason="needs root and a usable cgroup hierarchy")

KNOBS = {"NUM_CPUS": "4", "NUM_SLOTS_TYPE_1": "1", "SLOT_TYPE_1": "100%", "SLOT_TYPE_1_PARTITIONABLE": "true",
         "STARTER_UPDATE_INTERVAL": "1", "STARTER_INITIAL_UPDATE_INTERVAL": "1", "POLLING_INTERVAL": "1",
         "CGROUP_MEMORY_LIMIT_POLICY": "hard"}
HOG = """#!/usr/bin/python3
import os, sys
os.sched_setaffinity(0, {0})  # both jobs on CPU 0: they compete for it
shared = sys.argv[1]
with open(f"{shared}/{sys.argv[2]}.new", "w") as f:
    f.write(str(os.getpid()))
os.rename(f"{shared}/{sys.argv[2]}.new", f"{shared}/{sys.argv[2]}")
while not os.path.exists(f"{shared}/stop"):
    sum(range(20000))
"""
ALLOC = ("#!/usr/bin/python3\nimport time\nx = bytearray(300 * 1024 * 1024)\n"
         "x[::4096] = b'1' * len(x[::4096])\ntime.sleep(120)\n")


def cpu_seconds(pid: int) -> float:
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def test_cpu_shares_follow_request_cpus_and_groups_go(make_pool, execute_dir: Path) -> None:
    pool = make_pool(knobs={**KNOBS, "EXECUTE": str(execute_dir)}, slots=1)
    shared = execute_dir / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    (pool.jobs_dir / "hog.py").write_text(HOG)
    os.chmod(pool.jobs_dir / "hog.py", 0o755)
    common = "executable = hog.py\nrequest_memory = 64M\nshould_transfer_files = YES\n"
    pool.submit(common + f"arguments = {shared} one\nrequest_cpus = 1\nqueue\n", "one.sub")
    pool.submit(common + f"arguments = {shared} three\nrequest_cpus = 3\nqueue\n", "three.sub")
    wait_for(lambda: (shared / "one").exists() and (shared / "three").exists(), 90, "both jobs to run")
    one, three = int((shared / "one").read_text()), int((shared / "three").read_text())
    groups = {"one": groups_of(one), "three": groups_of(three)}
    v2 = LAYOUT.version == 2
    for name, cpus in (("one", 1), ("three", 3)):
        g = groups[name]
        assert "/htcd/dir_" in g["" if v2 else "memory"], g
        weight = read_value(os.path.join(g["" if v2 else "cpu"], "cpu.weight" if v2 else "cpu.shares"))
        assert weight == 100 * cpus, (name, weight)
        limit = read_value(os.path.join(g["" if v2 else "memory"], "memory.max" if v2 else "memory.limit_in_bytes"))
        assert limit == 128 * 1024 * 1024, (name, limit)  # the dynamic slot's Memory: 64M rounded up to 128
    start = {"one": cpu_seconds(one), "three": cpu_seconds(three)}

    def used() -> dict[str, float]:
        return {"one": cpu_seconds(one) - start["one"], "three": cpu_seconds(three) - start["three"]}

    wait_for(lambda: sum(used().values()) >= 8.0, 120, lambda: f"8 s of CPU between the jobs: {used()}")
    got = used()
    (shared / "stop").write_text("")
    ratio = got["three"] / max(got["one"], 1e-3)
    assert 2.0 <= ratio <= 4.5, (got, ratio)  # the weights say 3
    wait_for(lambda: pool.job_ids() == [], 90, "the jobs to end")
    left = [p for g in groups.values() for p in g.values() if os.path.exists(p)]
    assert not left, f"job cgroups left after the jobs ended: {left}"


def test_over_request_memory_the_job_is_held(make_pool, execute_dir: Path) -> None:
    pool = make_pool(knobs={**KNOBS, "EXECUTE": str(execute_dir)}, slots=1)
    (pool.jobs_dir / "alloc.py").write_text(ALLOC)
    os.chmod(pool.jobs_dir / "alloc.py", 0o755)
    cluster = pool.submit("executable = alloc.py\nshould_transfer_files = YES\nrequest_memory = 128M\nlog = job.log\n"
                          "queue\n")
    job = f"{cluster}.0"
    wait_for(lambda: pool.job_attr(job, "JobStatus") == "5", 90, "the job to be held")
    assert pool.job_attr(job, "HoldReasonCode") == "34"
    assert pool.job_attr(job, "HoldReasonSubCode") == "102"  # JobOutOfResources: memory
    reason = pool.job_attr(job, "HoldReason")
    assert reason.startswith("Job has gone over cgroup memory limit of 128 megabytes."), reason
    log = (pool.jobs_dir / "job.log").read_text()
    assert "Job was held.\n" in log and "\tCode 34 Subcode 102\n" in log, log
