"""RemoteWallClockTime is cumulative over a job's runs, as HTCondor's ("cumulative number of
seconds the job has been allocated a machine"): an evicted run counts, and so does the run of a
job removed while running."""

from __future__ import annotations

import time

from pooltools import Pool, wait_for

WAIT = "#!/bin/sh\nif [ -e {dir}/ran ]; then exit 0; fi\ntouch {dir}/ran\nwhile true; do sleep 0.1; done\n"


def _running_for(pool: Pool, job: str, seconds: float) -> None:
    wait_for(lambda: pool.job_attr(job, "JobStatus") == "2", 60, f"job {job} to run")
    start = int(pool.job_attr(job, "JobCurrentStartDate"))
    wait_for(lambda: time.time() - start >= seconds, seconds + 30, f"job {job} to have run {seconds} s")


def test_an_evicted_run_counts_in_the_wall_clock_time(make_pool) -> None:
    pool = make_pool(slots=1)
    (pool.jobs_dir / "w.sh").write_text(WAIT.format(dir=pool.jobs_dir))
    (pool.jobs_dir / "w.sh").chmod(0o755)
    cluster = pool.submit("executable = w.sh\nlog = w.log\nqueue\n")
    job = f"{cluster}.0"
    _running_for(pool, job, 3)
    pool.htcd("vacate_job", job)  # the first run ends evicted; the second exits at once
    wait_for(lambda: pool.job_ids() == [], 90, "the job's second run to finish")
    out = pool.htcd("history", job, "-af", "RemoteWallClockTime", "NumShadowStarts").stdout.split()
    assert float(out[0]) >= 3, f"the evicted run's seconds are in it: {out}"
    assert out[1] == "2", f"two runs: {out}"


def test_a_removed_running_job_keeps_its_wall_clock_time(make_pool) -> None:
    pool = make_pool(slots=1)
    (pool.jobs_dir / "w.sh").write_text(WAIT.format(dir=pool.jobs_dir))
    (pool.jobs_dir / "w.sh").chmod(0o755)
    cluster = pool.submit("executable = w.sh\nqueue\n")
    job = f"{cluster}.0"
    _running_for(pool, job, 2)
    pool.htcd("rm", job)
    wait_for(lambda: pool.job_ids() == [], 60, "the removal")
    wall = pool.htcd("history", job, "-af", "RemoteWallClockTime").stdout.strip()
    assert float(wall) >= 2, wall
