"""Late materialization: max_materialize and max_idle keep a big cluster's queue small; the
procs still to come are as durable as the rest, and removing the cluster removes them too."""

from __future__ import annotations

import os
import signal

from pooltools import wait_for


def _ids(pool) -> list[str]:
    return pool.job_ids()


def test_max_materialize_runs_everything_a_few_at_a_time(make_pool) -> None:
    pool = make_pool(knobs={"NUM_CPUS": "2"})
    (pool.jobs_dir / "t.sh").write_text("#!/bin/sh\necho $1\n")
    os.chmod(pool.jobs_dir / "t.sh", 0o755)
    cid = pool.submit("executable = t.sh\narguments = $(Process)\noutput = out.$(Process)\nlog = m.log\n"
                      "max_materialize = 2\nqueue 7\n")
    seen: list[int] = []

    def all_done() -> bool:
        seen.append(len(_ids(pool)))
        return (pool.jobs_dir / "m.log").exists() and (pool.jobs_dir / "m.log").read_text().count("005 (") == 7

    wait_for(all_done, 120, "all 7 jobs to finish")
    assert max(seen) <= 2, f"never more than 2 procs in the queue, saw {max(seen)}"
    assert [(pool.jobs_dir / f"out.{p}").read_text() for p in range(7)] == [f"{p}\n" for p in range(7)]
    text = (pool.jobs_dir / "m.log").read_text()
    assert text.count("000 (") == 7 and f"({cid:03d}.006.000)" in text
    wait_for(lambda: _ids(pool) == [], 30, "the queue to empty")


def test_max_idle_survives_restarts_and_rm_takes_the_rest(make_pool) -> None:
    pool = make_pool()
    cid = pool.submit("executable = /bin/true\nrequirements = false\nmax_idle = 2\nqueue 5\n")
    assert _ids(pool) == [f"{cid}.0", f"{cid}.1"]
    assert pool.job_attr(f"{cid}.0", "TotalSubmitProcs") == "5"
    os.kill(pool.daemon_pids()["SCHEDD"], signal.SIGKILL)  # the procs to come are on disk
    wait_for(lambda: pool.htcd("q", check=False).returncode == 0, 30, "a new schedd")
    assert _ids(pool) == [f"{cid}.0", f"{cid}.1"]
    pool.htcd("hold", f"{cid}.0")  # a held job is not running: it still counts against max_idle (HTCondor)
    assert pool.job_attr(f"{cid}.0", "JobStatus") == "5" and _ids(pool) == [f"{cid}.0", f"{cid}.1"]
    pool.htcd("rm", f"{cid}.0")  # one fewer: one more proc comes
    wait_for(lambda: _ids(pool) == [f"{cid}.1", f"{cid}.2"], 30, "proc 2 to materialize")
    pool.htcd("rm", str(cid))
    wait_for(lambda: _ids(pool) == [], 30, "the cluster to go")
    pool.stop()
    pool.start()
    assert _ids(pool) == [], "removed with the cluster, the unmaterialized procs never come back"
