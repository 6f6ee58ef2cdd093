"""A pool where every connection goes over TCP (PREFER_UNIX_SOCKET = false): the master creates
the pool's keys, CA, host certificate and daemon token; daemons and tools authenticate with
tokens inside TLS; a job runs; UDP updates ride on sessions opened over those connections."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.pooltools import wait_for


def _knobs(pool_dir: Path) -> dict[str, str]:
    return {"PREFER_UNIX_SOCKET": "false", "SEC_TOKEN_DIRECTORY": str(pool_dir / "usertokens"),
            "UPDATE_COLLECTOR_WITH_TCP": "false", "ALL_DEBUG": "D_SECURITY"}


#: htcd's shipped default policy (config.d/00-htcd-default-security.conf): authentication and
#: encryption required, daemons as condor@*, administrators condor@* or root@*.
RECOMMENDED = "use SECURITY : Recommended\n"


def test_a_job_runs_through_a_pool_that_talks_only_tcp(make_pool, pool_dir: Path) -> None:
    pool = make_pool(_knobs(pool_dir), config_text=RECOMMENDED)
    local = pool.local
    # the central manager's bootstrap: secrets 0600, public parts readable
    for rel in ("passwords.d/POOL", "passwords.d/trust_domain_ca_privkey.pem", "ssl/hostkey.pem",
                "tokens.d/htcd-daemons"):
        mode = stat.S_IMODE(os.stat(local / rel).st_mode)
        assert mode == 0o600, f"{rel} has mode {oct(mode)}"
    assert (local / "passwords.d/POOL.pub").exists() and (local / "ssl/trust_domain_ca.pem").exists()

    # daemons reached the collector over TCP with their token (the collector records how)
    methods = pool.htcd("status", "-af", "AuthenticationMethod", "AuthenticatedIdentity").stdout.split("\n")
    assert methods and all(line.startswith("TOKEN condor@") for line in methods if line.strip()), methods

    # a user token for the tools, then a job through the TCP-only pool
    pool.htcd("token", "create", "-identity", "root", "-token", "root")
    listing = pool.htcd("token", "list").stdout
    assert "Subject: root@" in listing and "Id: " in listing
    assert "." not in listing.split("Id: ")[1].split()[0]  # the id, never the token text
    cluster = pool.submit("executable = /bin/echo\narguments = over tcp\noutput = out.txt\nqueue\n")
    wait_for(lambda: pool.htcd("history", "-af", "ClusterId", check=False).stdout.split() == [str(cluster)], 90,
             "the job to finish")
    assert (pool.jobs_dir / "out.txt").read_text() == "over tcp\n"

    schedd_log = pool.log("SchedLog")
    assert "authenticated root@" in schedd_log and "by TOKEN" in schedd_log
    assert "accepted a unix" not in schedd_log
    collector_log = pool.log("CollectorLog")
    assert "by TOKEN" in collector_log and ", TLS" in collector_log

    # ping shows identity, method, encryption and the levels
    out = pool.htcd("ping", "-type", "COLLECTOR", "-table", "READ", "DAEMON", check=False).stdout
    assert "TOKEN" in out and "root@" in out, out


ADVERTISE = r'''
import json, sys
from htcd.wire import locate
from htcd.config import load
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError

out = {}
with Connection(locate.collector(load("TOOL"))) as conn:
    out["identity"] = conn.identity
    for ad_type in ("Machine", "Scheduler"):
        ad = {"MyType": json.dumps(ad_type), "Name": '"ep-test@host"', "Machine": '"host"',
              "MyAddress": '"<127.0.0.1:1>"'}
        try:
            conn.call("UPDATE_AD", ad_type=ad_type, ad=ad)
            out[ad_type] = "ok"
        except RemoteError as exc:
            out[ad_type] = f"{exc.code}: {exc}"
print(json.dumps(out))
'''


def test_an_execute_point_token_advertises_slots_but_not_schedds(make_pool, pool_dir: Path) -> None:
    """A token scoped as an execute point's (ADVERTISE_STARTD, READ) may send Machine ads and
    nothing else: the collector checks each ad type's ADVERTISE_* level."""
    import json
    import subprocess
    import sys

    pool = make_pool(_knobs(pool_dir), config_text=RECOMMENDED)
    pool.htcd("token", "create", "-identity", "condor", "-scope", "ADVERTISE_STARTD", "-scope", "READ",
              "-token", "ep")
    empty = pool_dir / "no-system-tokens"
    empty.mkdir()
    env = {**pool.env, "_HTCD_SEC_TOKEN_SYSTEM_DIRECTORY": str(empty)}
    proc = subprocess.run([sys.executable, "-c", ADVERTISE], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["identity"].startswith("condor@"), got
    assert got["Machine"] == "ok", got
    assert got["Scheduler"].startswith("DENIED") and "ADVERTISE_SCHEDD" in got["Scheduler"], got
    assert "ep-test@host" in pool.htcd("status", "-af", "Name").stdout
    assert "ep-test@host" not in pool.htcd("status", "-schedd", "-af", "Name").stdout
    assert "denied UPDATE_AD of a Scheduler ad" in pool.log("CollectorLog")
