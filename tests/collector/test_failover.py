"""Several collectors in COLLECTOR_HOST, and forwarding to CONDOR_VIEW_HOST, on real processes:
daemons update every collector, the view collector gets every update forwarded, and when the
first collector dies (killed by PID) the tools, the negotiator and the schedd fail over to the
next one and jobs still run."""

from __future__ import annotations

import subprocess
import sys

from collectortools import call, collector_address, free_ports
from pooltools import Pool, wait_for

from htcd.wire.address import Address


def slot_names(addr: Address) -> set[str]:
    return {w["Name"].strip('"') for w in call(addr, "QUERY_ADS", ad_type="Machine", projection=["Name"])}


def start_collector(pool: Pool, local_name: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "htcd", "collector", "-f", "-local-name", local_name],
                            env=pool.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def test_a_pool_with_two_collectors_and_a_view_survives_the_first_collectors_death(make_pool) -> None:
    first, second, view = free_ports(3)
    # COLLECTOR_HOST lists C2 (started here, by PID) before the master's own collector
    config = "\n".join([
        f"COLLECTOR_HOST = 127.0.0.1:{second}, 127.0.0.1:{first}",
        f"COLLECTOR_PORT = {first}",
        f"CONDOR_VIEW_HOST = 127.0.0.1:{view}",
        "C2.COLLECTOR_PORT = " + str(second),
        "C2.COLLECTOR_ADDRESS_FILE = $(LOG)/.collector2_address",
        "C2.COLLECTOR_LOG = $(LOG)/Collector2Log",
        "VIEW.COLLECTOR_PORT = " + str(view),
        "VIEW.COLLECTOR_ADDRESS_FILE = $(LOG)/.view_address",
        "VIEW.COLLECTOR_LOG = $(LOG)/ViewLog",
        "VIEW.CONDOR_VIEW_HOST =",
    ])
    pool = make_pool(config_text=config, start=False)
    extra = [start_collector(pool, "VIEW"), start_collector(pool, "C2")]
    try:
        c2 = wait_for(lambda: collector_address(pool, ".collector2_address"), 60, "the second collector")
        v = wait_for(lambda: collector_address(pool, ".view_address"), 60, "the view collector")
        assert c2.port == second and c2.unix and c2.unix.endswith(f"collector-{second}.sock")
        pool.start()
        c1 = collector_address(pool)
        assert c1 is not None and c1.port == first and c1.unix.endswith(f"collector-{first}.sock")
        slots = wait_for(lambda: (s := slot_names(c1)) == slot_names(c2) and len(s) == 2 and s, 60,
                         "both collectors to hold the slots")
        # every update either collector accepts reaches the view collector (over UDP, by default)
        wait_for(lambda: slot_names(v) == slots, 60, "the slots to be forwarded to the view collector")
        # the schedd and negotiator advertise on their own timers: their ads may follow the slots'
        wanted = {'"Machine"', '"Scheduler"', '"Negotiator"'}
        wait_for(lambda: wanted <= {w["MyType"] for w in call(v, "QUERY_ADS", ad_type="Any", projection=["MyType"])},
                 60, "the schedd's and negotiator's ads to be forwarded to the view collector")
        view_self = call(v, "DC_QUERY_SELF")[0]
        assert int(view_self["DatagramsReceived"]) > 0  # forwarded as datagrams
        assert int(call(c1, "DC_QUERY_SELF")[0]["UpdatesForwarded"]) > 0

        extra[1].kill()  # the first collector of COLLECTOR_HOST dies
        extra[1].wait(30)
        assert pool.htcd("status", "-af", "Name").stdout.split() == sorted(slots)  # tools fail over
        seq_before = {w["Name"]: int(w["UpdateSequenceNumber"])
                      for w in call(c1, "QUERY_ADS", ad_type="Machine", projection=["Name", "UpdateSequenceNumber"])}
        wait_for(lambda: all(int(w["UpdateSequenceNumber"]) > seq_before[w["Name"]]
                             for w in call(c1, "QUERY_ADS", ad_type="Machine",
                                           projection=["Name", "UpdateSequenceNumber"])),
                 60, "the startd to keep updating the surviving collector")
        cluster = pool.submit("executable = /bin/echo\narguments = still here\noutput = out.txt\nqueue\n")
        wait_for(lambda: not pool.job_ids(), 90, f"job {cluster}.0 to run and leave the queue")
        assert (pool.jobs_dir / "out.txt").read_text() == "still here\n"
    finally:
        for proc in extra:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
