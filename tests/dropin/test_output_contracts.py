"""What scripts parse, byte for byte, through the condor_* names on a real pool: condor_submit's
normal and -terse lines, condor_rm/hold/release's messages and exit statuses (HTCondor's
src/condor_rm.V6/rm.cpp and JobActionResults wording), condor_q/condor_history -af/-format/-long/
-json, condor_status -af, condor_version, condor_wait's messages and exit codes."""

from __future__ import annotations

import json
from typing import Any

CondorPool = Any  # the condor_pool fixture's (tests/dropin/conftest.py)

IDLE = "executable = /bin/true\nrequirements = false\nlog = idle.log\nqueue {n}\n"


def _submit(cp: CondorPool, n: int, name: str) -> tuple[int, str]:
    (cp.pool.jobs_dir / name).write_text(IDLE.format(n=n))
    r = cp.run("condor_submit", name)
    assert r.returncode == 0, r.stderr
    cluster = int(r.stdout.rsplit("cluster ", 1)[1].rstrip(".\n"))
    return cluster, r.stdout


def test_submit_normal_and_terse(condor_pool: CondorPool) -> None:
    cluster, out = _submit(condor_pool, 3, "three.sub")
    assert out == f"Submitting job(s)...\n3 job(s) submitted to cluster {cluster}.\n"
    terse = condor_pool.run("condor_submit", "-terse", "three.sub")
    assert terse.returncode == 0
    c2 = cluster + 1
    assert terse.stdout == f"{c2}.0 - {c2}.2\n"
    assert condor_pool.run("condor_rm", str(c2)).returncode == 0


def test_rm_hold_release_messages(condor_pool: CondorPool) -> None:
    cp = condor_pool
    cluster, _ = _submit(cp, 2, "two.sub")
    r = cp.run("condor_hold", f"{cluster}.0")
    assert (r.returncode, r.stdout, r.stderr) == (0, f"Job {cluster}.0 held\n", "")
    r = cp.run("condor_hold", f"{cluster}.0")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", f"Job {cluster}.0 already held\n")
    r = cp.run("condor_release", f"{cluster}.1")
    assert (r.returncode, r.stderr) == (1, f"Job {cluster}.1 not held to be released\n")
    r = cp.run("condor_release", str(cluster))
    assert (r.returncode, r.stdout) == (0, f"All jobs in cluster {cluster} have been released\n")
    r = cp.run("condor_rm", f"{cluster}.1")
    assert (r.returncode, r.stdout) == (0, f"Job {cluster}.1 marked for removal\n")
    r = cp.run("condor_rm", str(cluster))
    assert (r.returncode, r.stdout) == (0, f"All jobs in cluster {cluster} have been marked for removal\n")
    r = cp.run("condor_rm", "99999.0")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "Job 99999.0 not found\n")
    r = cp.run("condor_rm", "99999")
    assert (r.returncode, r.stderr) == (1, "Couldn't find/remove all jobs in cluster 99999\n")
    r = cp.run("condor_rm", "nosuchuser")
    assert (r.returncode, r.stderr) == (1, 'Couldn\'t find/remove all jobs of user "nosuchuser"\n')
    r = cp.run("condor_hold", "-constraint", "ClusterId == 99999")
    assert (r.returncode, r.stderr) == (1, "Couldn't find/hold all jobs matching constraint (ClusterId == 99999)\n")
    r = cp.run("condor_rm")
    assert r.returncode == 1 and "You did not specify any jobs" in r.stderr and "Traceback" not in r.stderr


def test_q_and_history_output_forms(condor_pool: CondorPool) -> None:
    cp = condor_pool
    cluster, _ = _submit(cp, 2, "q.sub")
    r = cp.run("condor_q", str(cluster), "-af", "ClusterId", "ProcId", "JobStatus")
    assert (r.returncode, r.stdout) == (0, f"{cluster} 0 1\n{cluster} 1 1\n")
    r = cp.run("condor_q", str(cluster), "-format", "%d.", "ClusterId", "-format", "%d\n", "ProcId")
    assert r.stdout == f"{cluster}.0\n{cluster}.1\n"
    r = cp.run("condor_q", f"{cluster}.1", "-l")
    assert r.stdout.endswith("\n\n") and f"ClusterId = {cluster}\n" in r.stdout and "ProcId = 1\n" in r.stdout
    r = cp.run("condor_q", str(cluster), "-json")
    ads = json.loads(r.stdout)
    assert [(a["ClusterId"], a["ProcId"]) for a in ads] == [(cluster, 0), (cluster, 1)]
    # HTCondor's prefixes and spellings reach the same options
    assert cp.run("condor_q", str(cluster), "-autof", "ProcId").stdout == "0\n1\n"
    assert cp.run("condor_q", str(cluster), "-const", "ProcId == 1", "-af", "ProcId").stdout == "1\n"
    assert cp.run("condor_rm", str(cluster)).returncode == 0
    r = cp.run("condor_history", str(cluster), "-af", "ClusterId", "ProcId", "JobStatus")
    assert sorted(r.stdout.splitlines()) == [f"{cluster} 0 3", f"{cluster} 1 3"]


def test_status_version_and_wait(condor_pool: CondorPool) -> None:
    cp = condor_pool
    names = cp.run("condor_status", "-af", "Name").stdout.split()
    assert names == sorted(cp.pool.slot_names()) and names
    v = cp.run("condor_version")
    lines = v.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("$CondorVersion: ") and lines[0].endswith(" $")
    assert lines[1].startswith("$CondorPlatform: ") and lines[1].endswith(" $")
    cluster, _ = _submit(cp, 1, "w.sub")
    r = cp.run("condor_wait", "-wait", "1", "idle.log", f"{cluster}.0")
    assert (r.returncode, r.stdout) == (1, "Time expired.\n")
    r = cp.run("condor_wait", "-wait", "1", "no-such.log")
    assert r.returncode == 1 and "Couldn't open" in r.stderr
    assert cp.run("condor_rm", str(cluster)).returncode == 0
    r = cp.run("condor_wait", "-wait", "30", "idle.log", f"{cluster}.0")
    assert (r.returncode, r.stdout) == (0, "All jobs done.\n")


def test_pool_option_reaches_the_named_collector(condor_pool: CondorPool) -> None:
    cp = condor_pool
    addr = (cp.pool.local / "log" / ".collector_address").read_text().split()[0]
    host_port = addr.strip("<>").split("?")[0]
    ads = cp.pool.collector_ads("Scheduler", ["Name"]) or []
    schedd = ads[0]["Name"].strip('"')
    ok = cp.run("condor_q", "-pool", host_port, "-name", schedd, "-af", "ClusterId")
    assert ok.returncode == 0, ok.stderr
    bad = cp.run("condor_q", "-pool", "127.0.0.1:1", "-name", schedd, "-af", "ClusterId")
    assert bad.returncode == 1 and "127.0.0.1:1" in bad.stderr and "Traceback" not in bad.stderr


def test_userprio_name_picks_the_negotiator(condor_pool: CondorPool) -> None:
    cp = condor_pool
    ads = cp.pool.collector_ads("Negotiator", ["Name"]) or []
    name = ads[0]["Name"].strip('"')
    ok = cp.run("condor_userprio", "-name", name, "-allusers")
    assert ok.returncode == 0, ok.stderr
    bad = cp.run("condor_userprio", "-name", "nosuch")
    assert (bad.returncode, bad.stderr) == (1, "condor_userprio: userprio: the collector knows no negotiator named nosuch\n")


def test_status_output_forms(condor_pool: CondorPool) -> None:
    cp = condor_pool
    names = sorted(cp.pool.slot_names())
    assert cp.run("condor_status", "-format", "%s\n", "Name").stdout.split() == names
    ads = json.loads(cp.run("condor_status", "-json").stdout)
    assert sorted(a["Name"] for a in ads) == names
    long = cp.run("condor_status", "-l").stdout
    blocks = [b for b in long.split("\n\n") if b.strip()]
    assert long.endswith("\n\n") and len(blocks) == len(names)
    assert all(f'Name = "{n}"' in long for n in names)
