"""Docker-universe jobs through a real personal pool and a real Docker engine (tests/docker/conftest.py)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from pooltools import wait_for

sys.path.insert(0, str(Path(__file__).parent))
from dockertools import IMAGE, container_state

UNIVERSE = f"universe = docker\ndocker_image = {IMAGE}\nlog = job.log\nshould_transfer_files = YES\n"


def _log(pool) -> str:
    path = pool.jobs_dir / "job.log"
    return path.read_text() if path.exists() else ""


def _docker_pool(make_pool, engine, **knobs: str):
    """One partitionable slot of 2 CPUs and 1 GB: a job's dynamic slot gets its request_memory
    rounded up to 128 MB, which is then its container's memory limit."""
    return make_pool({**engine.knobs(), "STARTER_INITIAL_UPDATE_INTERVAL": "1", "MEMORY": "1024",
                      "NUM_SLOTS_TYPE_1": "1", "SLOT_TYPE_1": "100%", "SLOT_TYPE_1_PARTITIONABLE": "true",
                      **knobs}, slots=1)


def test_success_output_user_limits_and_cleanup(make_pool, docker_engine) -> None:
    pool = _docker_pool(make_pool, docker_engine)
    (pool.jobs_dir / "job.sh").write_text(
        "#!/bin/sh\necho \"args: $1|$2\"\necho \"pwd: $(pwd)\"\necho \"id: $(id -u):$(id -g)\"\n"
        "echo \"greeting: $GREETING\"\ncat in.txt\necho to-stderr >&2\necho made > result.txt\n"
        "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null | head -1\n"
        "echo \"cid: $(cat /proc/self/cgroup | head -1)\"\nexit 0\n")
    os.chmod(pool.jobs_dir / "job.sh", 0o755)
    (pool.jobs_dir / "in.txt").write_text("input-file\n")
    pool.submit(UNIVERSE + "executable = job.sh\narguments = \"one 'two three'\"\noutput = out\nerror = err\n"
                "environment = \"GREETING=hello\"\ntransfer_input_files = in.txt\nrequest_cpus = 1\n"
                "request_memory = 100\nqueue\n")
    wait_for(lambda: "005 (" in _log(pool), 90, "the docker job's terminated event")
    assert "Normal termination (return value 0)" in _log(pool)
    out = (pool.jobs_dir / "out").read_text()
    assert "args: one|two three" in out
    pwd = out.split("pwd: ")[1].split()[0]
    assert pwd.startswith(str(pool.local / "execute")), "the sandbox is the container's working directory"
    uid, gid = out.split("id: ")[1].split()[0].split(":")
    assert int(uid) != 0 and int(gid) != 0, "the job runs as the slot's user, not root"
    assert "greeting: hello" in out and "input-file" in out
    assert str(128 << 20) in out, "the slot's memory (request_memory quantized to 128 MB) is the hard limit"
    assert (pool.jobs_dir / "err").read_text() == "to-stderr\n"
    assert (pool.jobs_dir / "result.txt").read_text() == "made\n", "output files come back"
    wait_for(lambda: pool.job_ids() == [], 30, "the job to leave the queue")
    assert docker_engine.containers(**{"htcd.execute": str(pool.local / "execute")}) == [], "container removed"
    assert not os.path.exists(pwd)


def test_nonzero_exit_and_image_entrypoint(make_pool, docker_engine) -> None:
    pool = _docker_pool(make_pool, docker_engine)
    # no executable: the image's own command (/bin/sh) with the job's arguments
    pool.submit(UNIVERSE + "arguments = \"/bin/sh -c 'echo from-image; exit 7'\"\noutput = out\nqueue\n")
    wait_for(lambda: "005 (" in _log(pool), 90, "the terminated event")
    assert "Normal termination (return value 7)" in _log(pool)
    assert (pool.jobs_dir / "out").read_text() == "from-image\n"


def test_cpu_shares_quota_and_memory_in_the_engine(make_pool, docker_engine) -> None:
    pool = _docker_pool(make_pool, docker_engine)
    pool.submit(UNIVERSE + "executable = /bin/sleep\ntransfer_executable = false\narguments = 300\n"
                "request_cpus = 2\nrequest_memory = 200\nqueue\n")
    execute = str(pool.local / "execute")
    def inspected() -> tuple[dict, dict] | None:
        # listed then inspected: a container may go between the two (seen once on a loaded machine)
        for c in docker_engine.containers(**{"htcd.execute": execute}):
            state = container_state(docker_engine, c["Id"])
            if state is not None:
                return c, state
        return None

    listed, state = wait_for(inspected, 90, "the job's container")
    found = [listed]
    host = state["HostConfig"]
    assert host["NanoCpus"] == 2_000_000_000 and host["CpuShares"] == 200
    assert host["Memory"] == 256 << 20 and host["MemorySwap"] == host["Memory"]
    assert host["Init"] is True
    assert found[0]["Labels"]["htcd.job"] == "1.0"
    # rm of a running job: its container goes
    pool.htcd("rm", "1")
    wait_for(lambda: docker_engine.containers(**{"htcd.execute": execute}) == [], 60, "the container's removal")
    wait_for(lambda: pool.job_ids() == [], 30, "the job to leave the queue")


def test_oom_kill_holds_with_reason(make_pool, docker_engine) -> None:
    pool = _docker_pool(make_pool, docker_engine)
    pool.submit(UNIVERSE + "executable = /bin/dd\ntransfer_executable = false\n"
                "arguments = if=/dev/zero of=/dev/null bs=400M count=1\nrequest_memory = 100\nqueue\n")
    wait_for(lambda: pool.job_attr("1.0", "JobStatus") == "5", 90, "the job to be held")
    reason = pool.job_attr("1.0", "HoldReason")
    assert "memory limit of 128 megabytes" in reason and "OOM" in reason
    assert pool.job_attr("1.0", "HoldReasonCode") == "34"


def test_missing_image_holds_with_engine_message(make_pool, docker_engine) -> None:
    pool = _docker_pool(make_pool, docker_engine)
    pool.submit("universe = docker\ndocker_image = localhost/no-such-image:1\ndocker_pull_policy = never\n"
                "arguments = true\nqueue\n")
    pool.submit("universe = docker\ndocker_image = localhost:1/no-such-image:1\narguments = true\nqueue\n",
                name="pull.sub")
    wait_for(lambda: pool.job_attr("1.0", "JobStatus") == "5" and pool.job_attr("2.0", "JobStatus") == "5",
             90, "both jobs to be held")
    never = pool.job_attr("1.0", "HoldReason")
    assert "localhost/no-such-image:1 is not on this execute point" in never and "never" in never
    assert pool.job_attr("1.0", "HoldReasonCode") == "35"
    pull = pool.job_attr("2.0", "HoldReason")
    assert "Cannot pull Docker image localhost:1/no-such-image:1" in pull
    assert "connection refused" in pull.lower() or "dial tcp" in pull.lower(), "the engine's own message"
    assert pool.job_attr("2.0", "HoldReasonCode") == "35"


def test_vacate_sends_the_kill_signal(make_pool, docker_engine) -> None:
    pool = _docker_pool(make_pool, docker_engine)
    (pool.jobs_dir / "trap.sh").write_text("#!/bin/sh\ntrap 'echo got-term; exit 5' TERM\n"
                                          "echo ready > ready.txt\nwhile true; do sleep 0.1; done\n")
    os.chmod(pool.jobs_dir / "trap.sh", 0o755)
    pool.submit(UNIVERSE + "executable = trap.sh\noutput = out\nwhen_to_transfer_output = ON_EXIT_OR_EVICT\n"
                "queue\n")
    execute = str(pool.local / "execute")

    def running() -> str | None:
        """The job's running container (one listed may be gone by the time it is inspected)."""
        for listed in docker_engine.containers(**{"htcd.execute": execute}):
            state = container_state(docker_engine, listed["Id"])
            if state is not None and state["State"]["Running"]:
                return listed["Id"]
        return None

    cid = wait_for(running, 90, "the job's container to run")
    proc = pool.htcd("vacate", check=False)
    assert proc.returncode == 0, proc.stderr
    wait_for(lambda: container_state(docker_engine, cid) is None, 60, "the vacated container's removal")

    def starter_logs() -> str:
        return "".join(p.read_text() for p in (pool.local / "log").glob("StarterLog*"))

    # the trap ran (exit 5): SIGTERM reached the job through tini, not only the container's PID 1
    wait_for(lambda: "job exited: status 5" in starter_logs(), 30, "the job to see its kill signal through the init")


def test_startd_kill_9_leaves_no_container(make_pool, docker_engine) -> None:
    pool = _docker_pool(make_pool, docker_engine)
    pool.submit(UNIVERSE + "executable = /bin/sleep\ntransfer_executable = false\narguments = 300\nqueue\n")
    execute = str(pool.local / "execute")
    cid = wait_for(lambda: docker_engine.containers(**{"htcd.execute": execute}), 90, "the container")[0]["Id"]
    old = pool.daemon_pids()["STARTD"]
    os.kill(old, signal.SIGKILL)
    wait_for(lambda: pool.daemon_pids().get("STARTD") not in (None, old), 60, "the master to restart the startd")
    wait_for(lambda: container_state(docker_engine, cid) is None, 60, "the restarted startd to remove the container")
    assert "removed 1 leftovers" in pool.log("StartLog")


def test_suspend_pauses_the_container_and_continue_resumes_it(make_pool, docker_engine) -> None:
    """The startd's SUSPEND pauses the container (the engine's freezer), CONTINUE unpauses it and
    the job then finishes normally."""
    pool = _docker_pool(make_pool, docker_engine, WANT_SUSPEND="True", SUSPEND="True", CONTINUE="False",
                        PREEMPT="False", POLLING_INTERVAL="1")
    (pool.jobs_dir / "slow.sh").write_text("#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.2; done\n"
                                           "echo finished\n")
    os.chmod(pool.jobs_dir / "slow.sh", 0o755)
    pool.submit(UNIVERSE + "executable = slow.sh\noutput = out\nqueue\n")
    execute = str(pool.local / "execute")
    cid = wait_for(lambda: docker_engine.containers(**{"htcd.execute": execute}), 90, "the container")[0]["Id"]
    wait_for(lambda: (container_state(docker_engine, cid) or {}).get("State", {}).get("Paused"), 60,
             "SUSPEND to pause the container")
    wait_for(lambda: "Suspended" in pool.htcd("status", "-af", "Activity").stdout, 30, "the slot to be Suspended")
    assert not (pool.jobs_dir / "out").exists()
    pool.config_file.write_text(pool.config_file.read_text() + "SUSPEND = False\nCONTINUE = True\n")
    pool.htcd("reconfig")
    wait_for(lambda: (pool.jobs_dir / "out").exists() and (pool.jobs_dir / "out").read_text() == "finished\n", 90,
             "the continued job to finish")
    assert "005 (" in _log(pool)
    wait_for(lambda: container_state(docker_engine, cid) is None, 30, "the container's removal")


def test_the_engine_reports_the_jobs_cpu_and_memory(make_pool, docker_engine) -> None:
    """The job is not in the starter's process tree: its usage comes from the engine's stats,
    into the job ad and the terminated event, as for a vanilla job."""
    pool = _docker_pool(make_pool, docker_engine)
    (pool.jobs_dir / "burn.sh").write_text(
        "#!/bin/sh\nend=$(( $(date +%s) + 3 ))\nwhile [ $(date +%s) -lt $end ]; do :; done\n"
        "dd if=/dev/zero bs=40000000 count=1 2>/dev/null | sleep 8\n")  # dd holds its 40 MB buffer meanwhile
    os.chmod(pool.jobs_dir / "burn.sh", 0o755)
    pool.submit(UNIVERSE + "executable = burn.sh\nrequest_memory = 100\nqueue\n")
    wait_for(lambda: pool.job_ids() == [], 120, f"the job to finish\n{_log(pool)}")
    user, sys_, mem, rss = pool.htcd("history", "1.0", "-af", "RemoteUserCpu", "RemoteSysCpu", "MemoryUsage",
                                     "ResidentSetSize").stdout.split()
    assert float(user) + float(sys_) >= 1.5, (user, sys_)
    assert 38 <= int(mem) <= 128, mem
    assert int(rss) >= 38 * 1024, rss
    assert "Normal termination (return value 0)" in _log(pool)
