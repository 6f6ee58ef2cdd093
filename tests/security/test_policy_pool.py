"""The policy in real pools: `use SECURITY : Recommended` runs jobs and keeps other users out of
the daemon levels and of others' jobs; DENY after a reconfig; ClaimIds stay secret; Host_Based
warns in every daemon's log.  Another user is played by ``nobody`` (needs root)."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import pwd
import re
import sqlite3
import sys
from pathlib import Path

import pytest
from pooltools import Pool, run_as, wait_for

from htcd.wire.client import Connection
from htcd.wire.locate import read_address_file

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
NOBODY = pwd.getpwnam("nobody").pw_uid
RECOMMENDED = {"SCHEDD_DEBUG": "D_SECURITY", "COLLECTOR_DEBUG": "D_SECURITY"}


def open_to_others(pool: Pool, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, str], Path]:
    """Let nobody reach the pool's config, address files and sockets; a folder nobody may write
    to for its submit files; every module loaded here first (the child cannot read them all)."""
    for d in [pool.dir, *pool.dir.parents]:
        if str(d) in ("/", "/tmp"):
            break
        d.chmod(d.stat().st_mode | 0o011)
    work = pool.dir / "nobody"
    work.mkdir()
    os.chown(work, NOBODY, NOBODY)
    from htcd.cli import main as cli

    env = {**pool.env, "HOME": "/"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(sys, "argv", ["htcd"])
    for argv in (["ping", "-verbose", "ALL"], ["q"], ["status"]):
        cli.main(argv)
    import htcd.cli

    for m in pkgutil.iter_modules(htcd.cli.__path__):
        importlib.import_module(f"htcd.cli.{m.name}")
    import htcd.submit.commands
    return env, work


def job_ids(pool: Pool, constraint: str) -> list[str]:
    out = pool.htcd("q", "-constraint", constraint, "-af", "ClusterId", "ProcId").stdout
    return [".".join(line.split()) for line in out.splitlines() if line.strip()]


def test_recommended_pool(make_pool, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    pool = make_pool(RECOMMENDED, config_text="use SECURITY : Recommended\n")
    env, work = open_to_others(pool, monkeypatch)
    capsys.readouterr()

    # the daemons hold the daemon levels (FS as the pool's own account is condor@...): jobs run
    pool.submit("executable = /bin/sh\narguments = \"-c 'stat -c %a:%U .'\"\noutput = done.out\n"
                "should_transfer_files = YES\nqueue\n")
    wait_for(lambda: (pool.jobs_dir / "done.out").exists() and (pool.jobs_dir / "done.out").read_text(), 90,
             f"the job's output\n{pool.log('SchedLog')[-3000:]}")
    assert (pool.jobs_dir / "done.out").read_text().strip() == "700:nobody"  # root's job: as nobody, private

    # another user: READ and WRITE, not ADMINISTRATOR, with the rule that refused it
    code, out, err = run_as(NOBODY, ["ping", "READ", "WRITE", "ADMINISTRATOR"], env)
    assert code == 1
    assert "READ command" in out and "succeeded as nobody@" in out
    assert re.search(r"ADMINISTRATOR: nobody@\S+ \(authenticated by FS\) does not hold ADMINISTRATOR: "
                     r"not in ALLOW_ADMINISTRATOR = condor@\*, condor@password, root@\*", err), err
    code, out, err = run_as(NOBODY, ["off"], env)
    assert code != 0 and "not in ALLOW_ADMINISTRATOR" in out + err

    # nobody's job is nobody's, whatever its submit file claims
    (work / "mine.sub").write_text('executable = /bin/sleep\narguments = 600\n+Owner = "root"\n'
                                   'My.User = "root@elsewhere"\nhold = true\nqueue\n')
    code, out, err = run_as(NOBODY, ["submit", "mine.sub"], env, cwd=str(work))
    assert code == 0, out + err
    mine = job_ids(pool, 'Owner == "nobody"')
    assert len(mine) == 1 and pool.job_attr(mine[0], "User").startswith("nobody@")
    pool.submit("executable = /bin/sleep\narguments = 600\nhold = true\nqueue\n", "roots.sub")
    roots = job_ids(pool, 'Owner == "root" && JobStatus == 5')
    assert roots

    # ... and nobody cannot touch root's jobs, nor give its own job away
    for argv in (["rm", roots[0]], ["release", roots[0]], ["qedit", roots[0], "JobPrio", "5"]):
        code, out, err = run_as(NOBODY, argv, env)
        assert code != 0 and re.search(r"not the owner|may not edit|Permission denied to (remove|release) job", out + err), (argv, out, err)
    code, out, err = run_as(NOBODY, ["qedit", mine[0], "Owner", '"root"'], env)
    assert code != 0 and "Owner cannot be changed" in out + err
    code, out, err = run_as(NOBODY, ["qedit", mine[0], "JobPrio", "5"], env)
    assert code == 0, out + err
    assert pool.job_attr(roots[0], "JobStatus") == "5"
    pool.htcd("rm", mine[0])  # root is a queue superuser

    # DENY after a reconfig: the refusal names the rule, and the schedd logs it at D_SECURITY
    with open(pool.config_file, "a") as f:
        f.write("DENY_WRITE = nobody@*\n")
    pool.htcd("reconfig")
    code, out, err = run_as(NOBODY, ["submit", "mine.sub"], env, cwd=str(work))
    assert code != 0 and "DENY_WRITE = nobody@* matched" in out + err, out + err
    wait_for(lambda: "PERMISSION DENIED to nobody@" in pool.log("SchedLog"), 30, "the denial in the SchedLog")

    # a malformed entry: the reconfig is refused with the knob, file and line; the policy stays
    with open(pool.config_file, "a") as f:
        f.write("ALLOW_READ = *, */10.0.0.0/99\n")
    proc = pool.htcd("reconfig", check=False)
    assert proc.returncode != 0
    assert re.search(r"ALLOW_READ \(\S+htcd_config, line \d+\).*is not a network", proc.stdout + proc.stderr), proc
    code, out, err = run_as(NOBODY, ["ping", "READ"], env)
    assert code == 0 and "succeeded as nobody@" in out, out + err


def test_claim_ids_stay_secret(make_pool, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    pool = make_pool({"NUM_CPUS": "1", "ALL_DEBUG": "D_FULLDEBUG D_SECURITY D_COMMAND"},
                     config_text="use SECURITY : Recommended\n", slots=1)
    env, _work = open_to_others(pool, monkeypatch)
    capsys.readouterr()
    pool.submit("executable = /bin/sleep\narguments = 600\nqueue\n")
    wait_for(lambda: pool.htcd("q", "-af", "JobStatus").stdout.strip() == "2", 90, "the job running")
    db = sqlite3.connect(str(pool.local / "spool" / "job_queue.log"))
    try:
        ads = [json.loads(a) for (a,) in db.execute("SELECT ad FROM procs")]
    finally:
        db.close()
    claim = next(v.strip('"') for ad in ads for k, v in ad.items() if k.lower() == "claimid")
    secret = claim.split("#")[-1]
    assert len(secret) >= 16, claim
    collector = read_address_file(str(pool.local / "log" / ".collector_address"))
    with Connection(collector) as conn:
        offers = [p["private"]["ClaimId"] for p in conn.call("QUERY_PRIVATE_ADS", ad_type="Machine")]
    secrets = [secret, *(o.split("#")[-1] for o in offers)]

    shown = [pool.htcd("status", "-l").stdout, pool.htcd("q", "-l").stdout,
             pool.htcd("status", "-any", "-l").stdout]
    for argv in (["status", "-l"], ["q", "-l"]):
        code, out, err = run_as(NOBODY, argv, env)
        assert code == 0, err
        shown.append(out)
    assert "PublicClaimId" in shown[0]
    for text in shown:
        assert "ClaimId =" not in text.replace("PublicClaimId =", "")
        assert not any(s in text for s in secrets)
    logs = {p.name: p.read_text(errors="replace") for p in (pool.local / "log").iterdir()
            if p.is_file() and "Log" in p.name}
    assert "SchedLog" in logs and "StartLog" in logs
    for name, text in logs.items():
        for s in secrets:
            assert s not in text, f"a claim id's secret is in {name}"
    # nobody may not read the private ads
    code, out, err = run_as(NOBODY, ["ping", "-type", "collector", "NEGOTIATOR"], env)
    assert code == 1 and "not in ALLOW_NEGOTIATOR = condor@*, condor@password" in err, out + err


def test_host_based_warns_in_every_daemon_log(make_pool, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    pool = make_pool(config_text="use SECURITY : Host_Based\n")
    env, _work = open_to_others(pool, monkeypatch)
    capsys.readouterr()
    for log in ("MasterLog", "CollectorLog", "NegotiatorLog", "SchedLog", "StartLog"):
        wait_for(lambda log=log: "SECURITY WARNING: ALLOW_WRITE" in pool.log(log), 30, f"the warning in {log}")
        assert "by host alone" in pool.log(log)
    # the risk, shown: any account on an allowed host holds the host's levels
    code, out, err = run_as(NOBODY, ["ping", "ADMINISTRATOR"], env)
    assert code == 0 and "succeeded as nobody@" in out, out + err


def test_a_tokens_scopes_limit_it_over_tcp(make_pool, pool_dir: Path) -> None:
    """A READ-only token (e.g. for monitoring) reads the queue but cannot submit, and the refusal
    says so; the same policy holds over TCP as on the Unix socket."""
    knobs = {"PREFER_UNIX_SOCKET": "false", "SEC_TOKEN_DIRECTORY": str(pool_dir / "usertokens"),
             "SCHEDD_DEBUG": "D_SECURITY"}
    pool = make_pool(knobs, config_text="use SECURITY : Recommended\n")
    pool.htcd("token", "create", "-identity", "root", "-scope", "READ", "-token", "monitor")
    assert pool.htcd("q").returncode == 0
    (pool.jobs_dir / "job.sub").write_text("executable = /bin/true\nqueue\n")
    proc = pool.htcd("submit", "job.sub", check=False)
    assert proc.returncode != 0
    err = proc.stdout + proc.stderr
    # (the handshake's check of the token, htcd/wire/authn.py, refuses first; authz.Policy holds the
    # same rule for any identity with scopes)
    assert "RESERVE_CLUSTER refused" in err and "root@" in err and re.search(r"scopes? READ\b", err), err
    assert "WRITE" in err.split("refused", 1)[1], err
    assert re.search(r"denied RESERVE_CLUSTER to root@\S+: .*READ", pool.log("SchedLog"))
