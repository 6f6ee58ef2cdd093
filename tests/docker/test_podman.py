"""The docker universe against Podman's Docker-compatible service instead of dockerd: the same
plugin, unchanged; Podman never reports OOMKilled, so the OOM hold comes from exit 137 under the
memory limit."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pooltools import wait_for

sys.path.insert(0, str(Path(__file__).parent))
from dockertools import IMAGE

UNIVERSE = f"universe = docker\ndocker_image = {IMAGE}\nshould_transfer_files = YES\n"


def test_jobs_on_podman(make_pool, podman_engine) -> None:
    pool = make_pool({**podman_engine.knobs(), "MEMORY": "1024", "NUM_SLOTS_TYPE_1": "1", "SLOT_TYPE_1": "100%",
                      "SLOT_TYPE_1_PARTITIONABLE": "true"}, slots=1)
    ads = pool.htcd("status", "-af", "HasDocker", "StarterAbilityList", "DockerVersion").stdout
    assert ads.startswith("true docker,vanilla Podman Engine version "), ads

    (pool.jobs_dir / "job.sh").write_text("#!/bin/sh\necho \"args: $1\"\necho \"id: $(id -u)\"\ncat in.txt\n"
                                          "echo to-stderr >&2\necho made > result.txt\nexit 3\n")
    os.chmod(pool.jobs_dir / "job.sh", 0o755)
    (pool.jobs_dir / "in.txt").write_text("input-file\n")
    pool.submit(UNIVERSE + "executable = job.sh\narguments = hello\noutput = out\nerror = err\nlog = job.log\n"
                "transfer_input_files = in.txt\nrequest_memory = 100\nqueue\n")
    pool.submit(UNIVERSE + "executable = /bin/dd\ntransfer_executable = false\n"
                "arguments = if=/dev/zero of=/dev/null bs=400M count=1\nrequest_memory = 100\nqueue\n",
                name="oom.sub")

    log = pool.jobs_dir / "job.log"
    wait_for(lambda: log.exists() and "005 (" in log.read_text(), 120, "the podman job's terminated event")
    assert "Normal termination (return value 3)" in log.read_text(), "the container's exit code is the job's"
    out = (pool.jobs_dir / "out").read_text()
    assert "args: hello" in out and "input-file" in out
    assert int(out.split("id: ")[1].split()[0]) != 0, "the job does not run as root"
    assert (pool.jobs_dir / "err").read_text() == "to-stderr\n"
    assert (pool.jobs_dir / "result.txt").read_text() == "made\n", "output files come back"

    wait_for(lambda: pool.job_attr("2.0", "JobStatus") == "5", 120, "the over-memory job to be held")
    assert "memory limit of 128 megabytes" in pool.job_attr("2.0", "HoldReason")
    assert pool.job_attr("2.0", "HoldReasonCode") == "34"
    wait_for(lambda: podman_engine.containers(**{"htcd.execute": str(pool.local / "execute")}) == [], 60,
             "both containers' removal")
