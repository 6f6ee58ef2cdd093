"""SUBMIT_CLUSTERS: several clusters committed in one transaction, each checked as SUBMIT checks
one; a refused one does not stop the others; the accepted ones' submit events in their log."""

from __future__ import annotations

from pooltools import Pool

from htcd.client.schedd import ScheddClient, Submitted
from htcd.errors import UserError
from htcd.eventlog import SUBMIT, read_events
from htcd.wire import locate
from htcd.wire.authn import ClientSecurity


def _ads(cid: int, cmd: str = '"/bin/true"', procs: int = 1, log: str = "") -> tuple[dict[str, str], list[dict[str, str]]]:
    cluster = {"Cmd": cmd, "Iwd": '"/tmp"', "JobUniverse": "5", "Requirements": "false", "DAGNodeName": '"X"'}
    if log:
        cluster["UserLog"] = f'"{log}"'
    return cluster, [{"ProcId": str(p)} for p in range(procs)]


def test_several_clusters_in_one_call(dag_pool: Pool) -> None:
    cfg = dag_pool.tool_config()
    address = locate.local_daemon(cfg, "SCHEDD")
    assert address is not None
    with ScheddClient(address, timeout=30, security=ClientSecurity.from_config(cfg, "CLIENT")) as schedd:
        def broken(cid: int) -> tuple[dict[str, str], list[dict[str, str]]]:
            raise ValueError("a bad submit description")
        log = dag_pool.dir / "batch.log"
        results = schedd.submit_clusters([lambda cid: _ads(cid, procs=2, log=str(log)),
                                          lambda cid: _ads(cid, cmd="((", log=str(log)),
                                          broken, lambda cid: _ads(cid, log=str(log))])
        assert isinstance(results[0], Submitted) and results[0].procs == 2
        assert isinstance(results[1], UserError) and "attribute Cmd" in str(results[1])
        assert isinstance(results[2], ValueError)
        assert isinstance(results[3], Submitted) and results[3].procs == 1
        ok = [r.cluster_id for r in results if isinstance(r, Submitted)]
        queued = dag_pool.job_ids()
        assert {f"{ok[0]}.0", f"{ok[0]}.1", f"{ok[1]}.0"} <= set(queued)
        assert not any(j.startswith(f"{ok[0] + 1}.") for j in queued), "the refused cluster is not queued"
        # each accepted proc's submit event, once (the call's events go to the log in one write)
        submitted = [(ev.cluster, ev.proc) for ev in read_events(str(log)) if ev.type == SUBMIT]
        assert submitted == [(ok[0], 0), (ok[0], 1), (ok[1], 0)]
        # an id not reserved by this client is refused
        reply = schedd.conn.call("SUBMIT_CLUSTERS", clusters=[{"cluster_id": 99999, "cluster_ad": _ads(0)[0],
                                                              "proc_ads": _ads(0)[1]}])
        assert reply["results"][0]["code"] == "BAD_CLUSTER"
        schedd.act("remove", [str(c) for c in ok], None, "test done")
    assert "with SUBMIT_CLUSTERS" in dag_pool.log("SchedLog")
