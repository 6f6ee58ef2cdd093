"""CCB where it is needed: an execute point whose inbound TCP is dropped (nft) joins a pool on
another host and runs a job through the connection it opened to the central manager; without
CCB_ADDRESS the same pool cannot claim its slot.  Two hosts in network namespaces
(``netns_hosts``); marked ``netns``, ``slow``."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import ccb.netns_hosts as nh
import pytest
from pooltools import Pool, wait_for

pytestmark = [pytest.mark.netns, pytest.mark.slow,
              pytest.mark.skipif(nh.available() is not None, reason=f"{nh.available()} (needs root)")]

JOB = "executable = /bin/echo\narguments = behind the firewall\noutput = out.txt\nqueue\n"


@pytest.fixture
def two_hosts(pool_dir: Path) -> Iterator[Path]:
    """The hosts, for one test at a time on this machine (they have fixed names and addresses):
    a lock on this file, which always exists and leaves nothing behind, holds off parallel
    workers and other runs."""
    with open(__file__, "rb") as me:
        fcntl.flock(me, fcntl.LOCK_EX)
        try:
            with nh.hosts():
                yield pool_dir
        finally:
            fcntl.flock(me, fcntl.LOCK_UN)


def _pools(root: Path, ccb: bool) -> tuple[Pool, Pool]:
    """The central manager and access point on ``ap``; an execute point on ``ep`` behind its
    firewall, with the pool's CA, a host certificate and a daemon token issued on ``ap`` (as
    roles/htcd installs them)."""
    ap = Pool(root / "ap", config_text=nh.host_config("ap", "MASTER COLLECTOR NEGOTIATOR SCHEDD", root))
    nh.start(ap, "ap")
    wait_for(lambda: (ap.local / "ssl" / "trust_domain_ca.pem").exists() and ap.collector_ads("Collector"), 60,
             lambda: f"the central manager on ap\n{ap.log('MasterLog')}\n{ap.log('CollectorLog')}")
    ep = Pool(root / "ep", config_text=nh.host_config("ep", "MASTER STARTD", root))
    creds = ep.dir / "creds"
    (creds / "tokens.d").mkdir(parents=True, mode=0o700)
    os.chmod(creds, 0o700)
    ap.htcd("token", "create", "-identity", "condor@ccbpool", "-token", str(creds / "tokens.d" / "condor"))
    ap.htcd("ca", "issue", "-host", nh.ns("ep"), "-name", nh.ip("ep"), "-cert", str(creds / "hostcert.pem"),
            "-key", str(creds / "hostkey.pem"))
    public, ca = ap.htcd("config_val", "SEC_TOKEN_POOL_PUBLIC_KEY_FILE", "TRUST_DOMAIN_CAFILE").stdout.split()
    with ep.config_file.open("a") as f:
        f.write(f"SEC_TOKEN_SYSTEM_DIRECTORY = {creds / 'tokens.d'}\nSEC_TOKEN_POOL_PUBLIC_KEY_FILE = {public}\n"
                f"TRUST_DOMAIN_CAFILE = {ca}\nAUTH_SSL_SERVER_CERTFILE = {creds / 'hostcert.pem'}\n"
                f"AUTH_SSL_SERVER_KEYFILE = {creds / 'hostkey.pem'}\n")
        if ccb:
            f.write("CCB_ADDRESS = $(COLLECTOR_HOST)\nCCB_HEARTBEAT_INTERVAL = 5\n")
    nh.block_inbound_tcp("ep")
    nh.start(ep, "ep")
    return ap, ep


def _slot_address(ap: Pool, ep: Pool) -> str:
    ads = wait_for(lambda: ap.collector_ads("Machine", ["MyAddress"]), 60,
                   lambda: f"the execute point's slot at the collector\n{ep.log('StartLog')}\n"
                           f"{ap.log('MasterLog')[-1500:]}\n{ap.log('CollectorLog')[-3000:]}")
    return str(ads[0]["MyAddress"]).strip('"')


def _stop(*pools: Pool) -> None:
    for pool in reversed(pools):
        if pool.master is not None:
            pool.stop()


def test_an_execute_point_behind_a_firewall_runs_a_job_through_ccb(two_hosts: Path) -> None:
    ap, ep = _pools(two_hosts, ccb=True)
    try:
        assert f"<{nh.ip('ep')}:" in _slot_address(ap, ep)
        wait_for(lambda: "CCBID=" in _slot_address(ap, ep), 30, "a CCBID in the slot's address")
        cluster = int(nh.htcd(ap, "ap", "submit", "-terse", "job.sub" if (ap.jobs_dir / "job.sub").write_text(JOB)
                              else "").stdout.split(".")[0])
        wait_for(lambda: nh.htcd(ap, "ap", "history", "-af", "ClusterId", check=False).stdout.split()
                 == [str(cluster)], 120, lambda: f"the job to finish\n{ap.log('SchedLog')[-3000:]}\n"
                 f"{ep.log('StartLog')[-3000:]}")
        assert (ap.jobs_dir / "out.txt").read_text() == "behind the firewall\n"
        assert "CCB: connected back to" in ep.log("StartLog")
        assert "CCB: registered startd" in ap.log("CollectorLog")
    finally:
        _stop(ap, ep)


def test_without_ccb_the_firewall_keeps_the_schedd_out(two_hosts: Path) -> None:
    ap, ep = _pools(two_hosts, ccb=False)
    try:
        assert "CCBID=" not in _slot_address(ap, ep)  # the execute point joined: its ads reach the collector
        (ap.jobs_dir / "job.sub").write_text(JOB)
        nh.htcd(ap, "ap", "submit", "job.sub")
        wait_for(lambda: "was REFUSED" in ap.log("ShadowLog"), 90,
                 lambda: f"the schedd's failed claim\n{ap.log('ShadowLog')[-3000:]}")
        assert "timed out" in ap.log("ShadowLog").split("was REFUSED", 1)[1].splitlines()[0]
        assert nh.htcd(ap, "ap", "q", "-af", "JobStatus").stdout.split() == ["1"]  # still idle
    finally:
        _stop(ap, ep)
