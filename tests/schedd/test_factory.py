"""Late materialization as HTCondor's job factory: ``queue N`` with max_idle / max_materialize
sends the cluster ad, a submit digest and the item data; the schedd builds the procs itself, keeps
the factory in the queue file (a restart goes on at JobMaterializeNextProcId), and removing the
cluster removes the factory."""

from __future__ import annotations

import os
import pwd
import signal

from pooltools import wait_for

from htcd.submit import parse_submit

SUB = ("executable = /bin/echo\narguments = $(Process) $(name) $(size)\noutput = out.$(Cluster).$(Process)\n"
       "log = f.log\nrequirements = false\n+Tag = \"t-$(name)\"\nrequest_memory = 10 + $(size)\nmax_idle = 3\n"
       "queue name, size from (\n" + "".join(f"  n{i} {i * 10}\n" for i in range(40)) + ")\n")
SCHEDD_SET = {"QDate", "EnteredCurrentStatus", "GlobalJobId", "User", "Owner", "JobMaterializeNextProcId",
              "TotalSubmitProcs", "LastJobStatus", "ServerTime", "AutoClusterId", "AutoClusterAttrs"}


def _ads(pool, cid: int) -> dict[int, dict[str, str]]:
    return {int(ad["ProcId"]): ad for ad in pool.schedd_jobs(f"ClusterId == {cid}", [])}


def _plain(pool, cid: int, qdate: int) -> list[dict[str, str]]:
    """The full ads a plain submit of SUB builds for cluster ``cid``, here, as the client would."""
    desc = parse_submit(SUB, "job.sub", submit_dir=str(pool.jobs_dir), env=pool.env)
    common, procs = desc.make_jobs(cid, submit_dir=str(pool.jobs_dir), owner=pwd.getpwuid(os.geteuid()).pw_name,
                                   qdate=qdate, config_get=pool.tool_config().get, env=pool.env,
                                   submit_file="job.sub", plugin_universes=None)
    return [{**common, **p} for p in procs]


def _same(got: dict[str, str], want: dict[str, str]) -> None:
    keys = (got.keys() | want.keys()) - SCHEDD_SET
    diff = {k: (got.get(k), want.get(k)) for k in keys if got.get(k) != want.get(k)}
    assert not diff, f"proc {got.get('ProcId')}: schedd vs plain build: {diff}"


def test_factory_builds_what_a_plain_submit_would_and_survives_restarts(make_pool) -> None:
    pool = make_pool(knobs={"START": "false"}, slots=0)
    cid = pool.submit(SUB)
    assert pool.job_ids() == [f"{cid}.{p}" for p in range(3)], "max_idle = 3: three procs materialized"
    assert pool.job_attr(f"{cid}.0", "TotalSubmitProcs") == "40"
    assert pool.job_attr(f"{cid}.0", "JobMaterializeNextProcId") == "3"
    assert "to be materialized later" in pool.log("SchedLog")
    ads = _ads(pool, cid)
    plain = _plain(pool, cid, int(ads[0]["QDate"]))
    for p in range(3):
        _same(ads[p], plain[p])
    pool.htcd("rm", f"{cid}.0", f"{cid}.1")  # room for two more: procs 3 and 4
    wait_for(lambda: pool.job_ids() == [f"{cid}.{p}" for p in (2, 3, 4)], 30, "procs 3 and 4")
    os.kill(pool.daemon_pids()["SCHEDD"], signal.SIGKILL)  # mid-materialization
    wait_for(lambda: pool.htcd("q", check=False).returncode == 0, 60, "a new schedd")
    assert pool.job_ids() == [f"{cid}.{p}" for p in (2, 3, 4)]
    assert pool.job_attr(f"{cid}.2", "JobMaterializeNextProcId") == "5"
    pool.htcd("rm", f"{cid}.2", f"{cid}.3")
    wait_for(lambda: pool.job_ids() == [f"{cid}.{p}" for p in (4, 5, 6)], 30, "procs 5 and 6, after the restart")
    ads = _ads(pool, cid)
    for p in (4, 5, 6):
        _same(ads[p], plain[p])
    pool.htcd("rm", str(cid))
    wait_for(lambda: pool.job_ids() == [], 30, "the cluster and its factory to go")

    def history() -> list[int]:
        return sorted(int(p) for p in pool.htcd("history", str(cid), "-af", "ProcId").stdout.split())

    wait_for(lambda: history() == list(range(7)), 30, "the 7 materialized procs, and only them, in the history")
    pool.stop()
    pool.start(slots=0)
    assert pool.job_ids() == [], "a removed factory never materializes again"


def test_without_late_materialize_the_client_sends_every_proc(make_pool) -> None:
    pool = make_pool(knobs={"START": "false", "SCHEDD_ALLOW_LATE_MATERIALIZE": "false"}, slots=0)
    cid = pool.submit(SUB)
    assert pool.job_ids() == [f"{cid}.{p}" for p in range(3)]
    assert pool.job_attr(f"{cid}.0", "JobMaterializeNextProcId") == "undefined", "no factory: the procs wait as rows"


def test_hold_of_the_cluster_pauses_the_factory(make_pool) -> None:
    pool = make_pool(knobs={"START": "false"}, slots=0)
    cid = pool.submit(SUB.replace("max_idle = 3", "max_materialize = 2"))
    assert pool.job_ids() == [f"{cid}.0", f"{cid}.1"]
    # the batch line: TOTAL is TotalSubmitProcs, as condor_q
    row = next(ln for ln in pool.htcd("q").stdout.splitlines() if ln.endswith(f" {cid}.0-1")).split()
    assert row[-2] == "40" and row[-4] == "2", row
    line = next(ln for ln in pool.htcd("q", "-factory").stdout.splitlines() if ln.startswith(f"{cid}. "))
    assert line.split()[4:10] == ["2", "2", "0", "2", "0", "2"], line  # LIMIT PRESNT RUN IDLE HOLD NEXTID
    pool.htcd("hold", str(cid))
    assert pool.job_attr(f"{cid}.0", "JobMaterializePaused") == "1"
    pool.htcd("rm", f"{cid}.0")  # room for one more, but the factory is paused
    wait_for(lambda: pool.job_ids() == [f"{cid}.1"], 30, "proc 0 to go")
    assert pool.job_attr(f"{cid}.1", "JobMaterializeNextProcId") == "2", "nothing materialized while paused"
    assert pool.job_ids() == [f"{cid}.1"]
    pool.htcd("release", str(cid))
    assert pool.job_attr(f"{cid}.1", "JobMaterializePaused") == "0"
    wait_for(lambda: pool.job_ids() == [f"{cid}.1", f"{cid}.2"], 30, "proc 2 once released")


def test_limits_count_materialized_procs_only(make_pool) -> None:
    """MAX_JOBS_PER_SUBMISSION and MAX_JOBS_PER_OWNER bound what a factory materializes, not its
    TotalSubmitProcs (HTCondor's manual: late materialization submits millions without hitting them)."""
    pool = make_pool(knobs={"START": "false", "MAX_JOBS_PER_SUBMISSION": "4", "MAX_JOBS_PER_OWNER": "6"}, slots=0)
    cid = pool.submit("executable = /bin/true\nmax_materialize = 100\nqueue 1000\n")
    assert pool.job_ids() == [f"{cid}.{p}" for p in range(4)], "MAX_JOBS_PER_SUBMISSION = 4 materialized"
    assert pool.job_attr(f"{cid}.0", "TotalSubmitProcs") == "1000"
    other = pool.submit("executable = /bin/true\nmax_idle = 10\nqueue 50\n")
    assert [j for j in pool.job_ids() if j.startswith(f"{other}.")] == [f"{other}.0", f"{other}.1"], \
        "MAX_JOBS_PER_OWNER = 6: two more"
    (pool.jobs_dir / "plain.sub").write_text("executable = /bin/true\nqueue 5\n")
    refused = pool.htcd("submit", "plain.sub", check=False)
    assert refused.returncode != 0 and "MAX_JOBS_PER_SUBMISSION" in refused.stderr, "a plain submit is refused whole"
    pool.htcd("rm", f"{cid}.0")
    want = {f"{cid}.{p}" for p in (1, 2, 3, 4)} | {f"{other}.0", f"{other}.1"}
    wait_for(lambda: set(pool.job_ids()) == want, 30, "proc 4 of the first factory, and no more")


def test_a_bad_digest_is_refused_with_the_reason(make_pool) -> None:
    from htcd.client.schedd import ScheddClient
    from htcd.wire import locate
    from htcd.wire.errors import RemoteError

    pool = make_pool(knobs={"START": "false"}, slots=0)
    cfg = pool.tool_config()
    addr = locate.local_daemon(cfg, "SCHEDD")
    assert addr is not None
    with ScheddClient(addr, timeout=30) as schedd:
        for digest, items, total, why in (({"count": 1}, [{}], 1, "cannot build"),
                                          ({"count": 2}, [{}], 5, "is not the digest's count"),
                                          ("text", [{}], 1, "a factory needs")):
            cid = int(schedd.conn.call("RESERVE_CLUSTER")["cluster_id"])
            try:
                schedd.conn.call("SUBMIT", cluster_id=cid, cluster_ad={"Cmd": '"/bin/true"'}, digest=digest,
                             items=items, total=total)
            except RemoteError as exc:
                assert why in str(exc), exc
            else:
                raise AssertionError(f"a bad digest {digest!r} was accepted")
    assert pool.job_ids() == []
