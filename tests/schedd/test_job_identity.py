"""The schedd's own job attributes HTCondor users read: GlobalJobId (``schedd#cluster.proc#qdate``)
and the shadow-start counters NumShadowStarts / JobRunCount."""

from __future__ import annotations

import re

from pooltools import wait_for

from htcd.schedd.jobs import Cluster, Job


def test_global_job_id_is_derived_per_proc_without_being_stored() -> None:
    cluster = Cluster(7, {"Owner": '"u"', "QDate": "1700000000"})
    jobs = [Job(cluster, p, {}) for p in range(2)]
    try:
        Job.schedd_name = "ap.example.org"
        assert jobs[1].text("GlobalJobId") == '"ap.example.org#7.1#1700000000"'
        assert jobs[0].get("GlobalJobId") == "ap.example.org#7.0#1700000000"
        assert jobs[0].wire()["GlobalJobId"] == '"ap.example.org#7.0#1700000000"'
        assert jobs[0].project(["GlobalJobId"]) == {"GlobalJobId": '"ap.example.org#7.0#1700000000"'}
        assert "GlobalJobId" not in jobs[0].proc  # nothing stored per queued job
        own = Job(cluster, 2, {"GlobalJobId": '"kept#7.2#1"'})  # a value the ad already has wins
        assert own.get("GlobalJobId") == "kept#7.2#1"
    finally:
        Job.schedd_name = ""
    assert jobs[0].text("GlobalJobId") is None  # no schedd name: not invented


def test_a_finished_job_carries_its_global_job_id_and_shadow_starts(make_pool) -> None:
    pool = make_pool(slots=1)
    cluster = pool.submit("executable = /bin/true\nqueue 2\n")
    queued = pool.job_attr(f"{cluster}.1", "GlobalJobId")
    assert re.fullmatch(rf"[^#]+#{cluster}\.1#\d+", queued), queued
    wait_for(lambda: pool.job_ids() == [], 90, "both jobs to finish")
    out = pool.htcd("history", str(cluster), "-af", "ProcId", "GlobalJobId", "NumShadowStarts", "JobRunCount").stdout
    rows = sorted(line.split() for line in out.splitlines() if line.strip())
    assert [r[0] for r in rows] == ["0", "1"], out
    for proc, gid, shadow_starts, run_count in rows:
        assert re.fullmatch(rf"[^#]+#{cluster}\.{proc}#\d+", gid), out
        assert (shadow_starts, run_count) == ("1", "1"), out
    assert rows[1][1] == queued, "the id a queued job showed is the one its history keeps"
