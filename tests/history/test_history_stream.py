"""A history of 50,000 records streams from the schedd (QUERY_SCHEDD_HISTORY) while ``htcd q``
keeps getting answers: the schedd reads the file in blocks and gives its loop a turn."""

from __future__ import annotations

import threading
import time

import pytest
from pooltools import Pool

from htcd.classad import ClassAd
from htcd.schedd import history
from htcd.wire import locate
from htcd.wire.authn import ClientSecurity

RECORDS = 50_000


def write_history(path: str, n: int) -> None:
    """n job records as the schedd writes them (oldest first: ClusterId 1 is the oldest)."""
    ads = []
    for i in range(1, n + 1):
        ad = ClassAd()
        for k, v in (("ClusterId", i), ("ProcId", 0), ("Owner", "alice"), ("JobStatus", 4), ("QDate", 1_700_000_000 + i),
                     ("CompletionDate", 1_700_000_100 + i), ("EnteredCurrentStatus", 1_700_000_100 + i),
                     ("Cmd", "/bin/true"), ("Arguments", f"run {i}"), ("RequestCpus", 1), ("RequestMemory", 128),
                     ("RemoteWallClockTime", 1.0), ("ExitCode", 0), ("Iwd", "/tmp/jobs"), ("Universe", 5),
                     ("GlobalJobId", f"host#{i}.0#1700000000"), ("ClaimId", f"<127.0.0.1:1>#{i}#secret")):
            ad[k] = v
        ads.append(ad)
    history.append(path, ads)


@pytest.mark.slow
def test_large_history_streams_while_q_answers(make_pool) -> None:
    pool: Pool = make_pool({"NUM_CPUS": "1"}, start=False)
    path = pool.tool_config().get("HISTORY")
    assert path
    write_history(path, RECORDS)
    pool.start(slots=0)
    from htcd.client.schedd import ScheddClient

    cfg = pool.tool_config()
    address = locate.local_daemon(cfg, "SCHEDD")
    assert address is not None
    security = ClientSecurity.from_config(cfg, "CLIENT")
    got: list[int] = []
    chunks = [0]
    done = threading.Event()

    def stream() -> None:
        try:
            with ScheddClient(address, timeout=300, security=security) as schedd:
                for chunk in schedd.history(None, ["ClusterId", "ClaimId"]):
                    chunks[0] += 1
                    got.extend(int(w["ClusterId"]) for w in chunk)
                    assert all("ClaimId" not in w for w in chunk)
        finally:
            done.set()

    start = time.monotonic()
    reader = threading.Thread(target=stream)
    reader.start()
    latencies = []
    while not done.is_set():
        t = time.monotonic()
        pool.schedd_jobs(None, ["ClusterId"])  # what `htcd q` asks
        if not done.is_set():
            latencies.append(time.monotonic() - t)
    reader.join()
    elapsed = time.monotonic() - start
    print(f"\n{RECORDS} history records streamed in {elapsed:.1f} s ({chunks[0]} chunks); "
          f"{len(latencies)} queries answered meanwhile, slowest {max(latencies or [0]):.3f} s")
    assert got == list(range(RECORDS, 0, -1))  # every record, newest first
    assert len(latencies) >= 3, "the queries were not answered while the history streamed"
    assert max(latencies) < 3.0, latencies
