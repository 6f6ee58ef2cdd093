"""`htcd status` and `htcd ping` against one real personal pool (2 static slots)."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable

import pytest
from pooltools import Pool, run_as

from htcd.wire.locate import read_address_file

NOBODY = 65534


@pytest.fixture(scope="module")
def pool(module_pool: Callable[..., Pool]) -> Pool:
    return module_pool()


def lines(text: str) -> list[str]:
    return text.splitlines()


def slot_names(pool: Pool) -> list[str]:
    return pool.htcd("status", "-af", "Name").stdout.split()


def schedd_name(pool: Pool) -> str:
    return pool.htcd("status", "-schedd", "-af", "Name").stdout.strip()


def test_default_table_and_totals(pool: Pool) -> None:
    out = lines(pool.htcd("status").stdout)
    names = slot_names(pool)
    assert len(names) == 2 and names[0].startswith("slot1@") and names[1].startswith("slot2@")
    width = max(18, len(names[0]))
    assert re.fullmatch(r"Name +OpSys      Arch   State     Activity LoadAv Mem +ActvtyTime", out[0])
    assert out[0].index("OpSys") == width + 1, "the Name column is as wide as the longest name, at least 18"
    assert out[1] == ""
    for line, name in zip(out[2:4], names, strict=True):
        assert re.fullmatch(rf"{re.escape(name)} +LINUX +\S+ +Unclaimed Idle +0\.000 +\d+ +\d+\+\d\d:\d\d:\d\d", line)
    assert out[4:6] == ["", "               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle"]
    assert re.fullmatch(r" +\S+/LINUX     2     0       0         2       0          0      0        0      0", out[7])
    assert out[-1] == "         Total     2     0       0         2       0          0      0        0      0"


def test_total_compact_and_name_arguments(pool: Pool) -> None:
    total = pool.htcd("status", "-total").stdout
    assert total.startswith("\n               Total Owner") and "slot1@" not in total
    compact = lines(pool.htcd("status", "-compact").stdout)
    assert compact[0].split() == ["Machine", "Platform", "Slots", "Cpus", "Gpus", "TotalGb", "FreCpu", "FreeGb",
                                  "CpuLoad", "ST", "Jobs/Min", "MaxSlotGb"]
    row = compact[2].split()
    assert row[2] == "2S" and "Ui" in row, "two static slots folded into one machine row"
    first = slot_names(pool)[0]
    only = lines(pool.htcd("status", first).stdout)
    assert [line.split()[0] for line in only[2:] if line.startswith("slot")] == [first]


def test_af_format_long_json_and_limit(pool: Pool) -> None:
    names = slot_names(pool)
    assert pool.htcd("status", "-af", "Name", "State", "Cpus * 2").stdout == "".join(
        f"{n} Unclaimed 2\n" for n in names)
    assert pool.htcd("status", "-af:h", "SlotID").stdout == "SlotID\n1\n2\n"
    # Requirements = START: the attribute it refers to is fetched too, so it evaluates as in the whole ad
    assert pool.htcd("status", "-af", "Requirements").stdout == "true\ntrue\n"
    raw = pool.htcd("status", "-af:r", "Requirements").stdout.splitlines()
    assert len(raw) == 2 and all(r.startswith("START") for r in raw), "-af:r prints the expression itself"
    assert pool.htcd("status", "-format", "%s|", "Name", "-format", "%d\\n", "SlotID").stdout == "".join(
        f"{n}|{i}\n" for i, n in enumerate(names, 1))
    assert pool.htcd("status", "-af", "Name", "-limit", "1").stdout.count("\n") == 1
    long = pool.htcd("status", "-l", "-constraint", "SlotID == 2").stdout
    attrs = [line.split(" = ")[0] for line in lines(long) if line]
    assert f'Name = "{names[1]}"' in long and attrs == sorted(attrs, key=str.lower) and long.endswith("\n\n")
    few = pool.htcd("status", "-l", "-attributes", "Name,State").stdout
    assert sorted(line.split(" = ")[0] for line in lines(few) if line) == ["Name", "Name", "State", "State"]
    ads = json.loads(pool.htcd("status", "-json").stdout)
    assert [a["Name"] for a in ads] == names and all(a["MyType"] == "Machine" for a in ads)


def test_bad_constraint_is_a_clear_error(pool: Pool) -> None:
    proc = pool.htcd("status", "-constraint", "State == ", check=False)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "-constraint 'State == ' is not a valid ClassAd expression" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = pool.htcd("status", "-af", "Name +", check=False)
    assert proc.returncode == 1 and "not a valid ClassAd expression" in proc.stderr and "Traceback" not in proc.stderr


def test_daemon_tables(pool: Pool) -> None:
    name = schedd_name(pool)
    schedd = lines(pool.htcd("status", "-schedd").stdout)
    assert schedd[0].split() == ["Name", "Machine", "RunningJobs", "IdleJobs", "HeldJobs"]
    assert schedd[2].split()[0] == name and schedd[2].split()[2:] == ["0", "0", "0"]
    assert schedd[4].split() == ["TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs"]
    assert schedd[-1] == "         Total                 0                  0                  0"
    master = lines(pool.htcd("status", "-master").stdout)
    assert master[0].split() == ["Name", "Version", "Cpus", "Memory", "Uptime"]
    assert master[2].split()[1] == "0.1.0" and re.search(r"\d+\+\d\d:\d\d:\d\d$", master[2])
    negotiator = lines(pool.htcd("status", "-negotiator").stdout)
    assert negotiator[0].split() == ["Name", "LastCycleEnd", "(Sec)", "Slots", "Submitrs", "Schedds", "Jobs",
                                     "Matches", "Rejections"]
    collector = lines(pool.htcd("status", "-collector").stdout)
    assert collector[0].split() == ["Name", "Machine", "RunningJobs", "IdleJobs", "HostsTotal"]
    everything = lines(pool.htcd("status", "-any").stdout)
    assert everything[0].split() == ["MyType", "TargetType", "Name"]
    assert {line.split()[0] for line in everything[2:]} >= {"Machine", "Scheduler", "Negotiator", "DaemonMaster",
                                                            "Collector"}
    assert pool.htcd("status", "-submitters").stdout == "", "no jobs, no submitters: nothing printed"


def test_direct_asks_the_daemon_itself(pool: Pool) -> None:
    name = schedd_name(pool)
    via_collector = pool.htcd("status", "-schedd", "-af", "Name", "TotalJobAds").stdout
    direct = pool.htcd("status", "-schedd", "-direct", name, "-af", "Name", "TotalJobAds").stdout
    assert direct == via_collector == f"{name} 0\n"
    stats = pool.htcd("status", "-schedd", "-direct", name, "-statistics", "DC:2", "-af", "MyType")
    assert stats.stdout == "Scheduler\n"
    own = pool.htcd("status", "-collector", "-statistics", "DC:1", "-af", "MyType").stdout
    assert own == "Collector\n", "the collector answers for itself"
    for args, message in [(["-direct", "no-such-host", "-schedd"], "no schedd named 'no-such-host'"),
                          (["-schedd", "-statistics", "DC:2"], "-statistics needs -direct NAME"),
                          (["-schedd", "-direct", name, "-statistics", "DC:"], "expected SET:LEVEL"),
                          (["-any", "-direct", name], "-direct cannot ask Any ads"),
                          (["-schedd", "-compact"], "-compact applies only to slots")]:
        proc = pool.htcd("status", *args, check=False)
        assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_ping_levels_tables_and_targets(pool: Pool) -> None:
    out = pool.htcd("ping").stdout
    assert re.fullmatch(r"WRITE command using \(no encryption, no integrity, and FS\) succeeded as \S+@\S+ "
                        r"to schedd \S+\.\n", out)
    table = lines(pool.htcd("ping", "-table", "ALL").stdout)
    assert table[0] == "         Instruction Authentication Encryption Integrity Decision Identity"
    assert [line.split()[0] for line in table[1:]] == ["READ", "WRITE", "NEGOTIATOR", "ADMINISTRATOR", "CONFIG",
                                                       "DAEMON", "ADVERTISE_STARTD", "ADVERTISE_SCHEDD",
                                                       "ADVERTISE_MASTER"]
    assert all(line.split()[1:5] == ["FS", "none", "none", "ALLOW"] for line in table[1:])
    verbose = pool.htcd("ping", "-verbose", "-type", "COLLECTOR", "QUERY_ADS").stdout
    assert "Instruction:                 QUERY_ADS" in verbose and "Authorized:                  TRUE" in verbose
    assert "Remote Version:              0.1.0" in verbose
    assert pool.htcd("ping", "-quiet", "DAEMON").stdout == ""
    name = schedd_name(pool)
    assert "to schedd " + name in pool.htcd("ping", "-name", name, "READ").stdout
    master = read_address_file(str(pool.local / "log" / ".master_address"))
    assert master is not None
    assert "to master " in pool.htcd("ping", "-addr", str(master), "READ").stdout
    assert "to startd " in pool.htcd("ping", "STARTD", "READ").stdout, "a daemon type as the first word"


def test_ping_errors(pool: Pool) -> None:
    proc = pool.htcd("ping", "FROBNICATE", check=False)
    assert proc.returncode == 1 and 'could not understand TOKEN "FROBNICATE"' in proc.stderr
    master = read_address_file(str(pool.local / "log" / ".master_address"))
    assert master is not None
    tcp_only = f"<{master.host}:{master.port}>"
    proc = pool.htcd("ping", "-addr", tcp_only, check=False)  # over TCP: the daemons' token, inside TLS
    assert proc.returncode == 0 and "to master " in proc.stdout, proc.stderr
    proc = pool.htcd("ping", "-addr", "<127.0.0.1:1>", check=False)
    assert proc.returncode == 1 and "Connection refused" in proc.stderr and "Traceback" not in proc.stderr
    proc = pool.htcd("ping", "-name", "no-such-schedd", check=False)
    assert proc.returncode == 1 and "couldn't locate no-such-schedd" in proc.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_ping_as_another_user_is_refused_the_daemon_levels(pool: Pool, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # let the other user reach the pool's config, address files and sockets
    for d in [pool.dir, *pool.dir.parents]:
        if str(d) in ("/", "/tmp"):
            break
        d.chmod(d.stat().st_mode | 0o011)
    from htcd.cli import main as cli

    env = {**pool.env, "HOME": "/"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(sys, "argv", ["htcd"])
    assert cli.main(["ping", "-verbose", "ALL"]) == 0, "a run as ourselves loads every module the child needs"
    capsys.readouterr()

    code, out, err = run_as(NOBODY, ["ping", "READ", "WRITE"], env)
    assert code == 0, err
    assert out.count("succeeded as nobody@") == 2
    code, out, err = run_as(NOBODY, ["ping", "READ", "ADMINISTRATOR"], env)
    assert code == 1, err
    assert "READ command using (no encryption, no integrity, and FS) succeeded as nobody@" in out
    assert "ADMINISTRATOR command using (no encryption, no integrity, and FS) failed as nobody@" in out
    assert re.search(r"ADMINISTRATOR: nobody@\S+ \(authenticated by FS\) does not hold ADMINISTRATOR", err), err
    code, out, err = run_as(NOBODY, ["ping", "-quiet", "CONFIG"], env)
    assert code == 1 and out == err == ""
    code, out, err = run_as(NOBODY, ["ping", "-table", "DAEMON"], env)
    assert code == 1 and "     DENY nobody@" in out


def test_negotiator_publishes_its_last_cycle(pool: Pool) -> None:
    """The Negotiator ad carries HTCondor's figures of the latest cycle, so -negotiator has no blanks."""
    from pooltools import wait_for

    pool.submit("executable = /bin/true\nqueue\n", name="negotiator-figures.sub")
    wait_for(lambda: not pool.job_ids(), 60, "the job to run and leave the queue")
    wait_for(lambda: int(pool.htcd("status", "-negotiator", "-af", "MatchesTotal").stdout.split()[0] or 0) >= 1,
             60, "the negotiator to count its match")
    attrs = ["LastNegotiationCycleTime0", "LastNegotiationCycleEnd0", "LastNegotiationCycleCandidateSlots0",
             "LastNegotiationCycleActiveSubmitterCount0", "LastNegotiationCycleNumSchedulers0",
             "LastNegotiationCycleNumIdleJobs0", "LastNegotiationCycleMatches0", "LastNegotiationCycleRejections0"]
    values = [int(v) for v in pool.htcd("status", "-negotiator", "-af", *attrs).stdout.split()]
    start, end, slots, submitters, schedds, idle, matches, rejections = values
    assert end >= start > 0
    assert 0 <= slots <= 2 and 0 <= matches <= slots
    assert schedds <= submitters <= 1 and idle >= 0 and rejections >= 0
    row = lines(pool.htcd("status", "-negotiator").stdout)[2].split()
    assert len(row) == 10, row  # every column filled (LastCycleEnd is a date and a time)
