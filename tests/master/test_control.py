"""Point 5 and 6: htcd on / off / restart (all daemons, -daemon X, -master, -name HOST) with
HTCondor's output lines, and the DaemonMaster ad."""

from __future__ import annotations

from master.master_helpers import MINIMAL, ad_value, after, new_pid, wait_state
from pooltools import Pool, gone, wait_for

from htcd.classad import ClassAd
from htcd.client.collector import address as collector
from htcd.config import load
from htcd.wire.client import Connection


def master_name(pool: Pool) -> str:
    return pool.htcd("status", "-master", "-af", "Name").stdout.split()[0]


def test_master_ad_lists_its_daemons(pool: Pool) -> None:
    wait_for(lambda: "SCHEDD_State = \"Alive\"" in pool.htcd("status", "-master", "-l").stdout, 60,
             "the master's ad with the schedd alive")
    text = pool.htcd("status", "-master", "-l").stdout
    pids = pool.daemon_pids()
    assert 'MyType = "DaemonMaster"' in text
    assert 'DaemonList = "MASTER, COLLECTOR, NEGOTIATOR, STARTD, SCHEDD"' in text
    assert "MasterIpAddr = \"<" in text and "DaemonStartTime = " in text
    for name, pid in pids.items():
        assert f"{name}_PID = {pid}" in text
        assert f"{name}_StartTime = " in text and f"{name}_StartTime = 0" not in text
        assert f"{name}_Timestamp = " in text and f"{name}_Restarts = 0" in text
    assert "MASTER_StartTime = " in text


def test_off_and_on_one_daemon_keeps_it_off_meanwhile(pool: Pool) -> None:
    schedd = pool.daemon_pids()["SCHEDD"]
    out = pool.htcd("off", "-daemon", "schedd").stdout
    assert out == 'Sent "Kill-Daemon" command for "schedd" to local master\n'
    wait_for(lambda: "SCHEDD" not in pool.daemon_pids(), 60, "the schedd to stop")
    wait_state(pool, "SCHEDD", "Hold")
    assert ad_value(pool, "SCHEDD_StartTime") == 0 and ad_value(pool, "SCHEDD_PID") == 0
    # the exit was handled (logged) without scheduling a restart; a round trip through the
    # master afterwards shows it still off
    log = after(pool.log("MasterLog"), f"The SCHEDD (pid {schedd}) exited with status 0")
    assert "restarting htcd schedd" not in log
    assert pool.htcd("q", check=False).returncode != 0
    pool.htcd("reconfig")
    assert "SCHEDD" not in pool.daemon_pids() and ad_value(pool, "SCHEDD_State") == "Hold"

    out = pool.htcd("on", "-daemon", "schedd").stdout
    assert out == 'Sent "Spawn-Daemon" command for "schedd" to local master\n'
    new_pid(pool, "SCHEDD", schedd)
    wait_for(lambda: pool.htcd("q", check=False).returncode == 0, 60, "the schedd to answer again")
    assert "restarting htcd schedd" not in after(pool.log("MasterLog"), f"The SCHEDD (pid {schedd})")

    # off -fast: SIGQUIT
    fresh = pool.daemon_pids()["SCHEDD"]
    assert pool.htcd("off", "-fast", "-daemon", "schedd").stdout == \
        'Sent "Kill-Daemon-Fast" command for "schedd" to local master\n'
    wait_for(lambda: gone(fresh), 60, "a fast stop")
    assert f"Sent SIGQUIT to SCHEDD (pid {fresh})" in pool.log("MasterLog")


def test_off_all_keeps_the_master_and_on_brings_everything_back(pool: Pool) -> None:
    before = pool.daemon_pids()
    assert pool.htcd("off").stdout == 'Sent "Kill-All-Daemons" command to local master\n'
    wait_for(lambda: not pool.daemon_pids(), 60, "every daemon to stop")
    assert pool.master.poll() is None, "the master stays"
    for name in before:
        wait_state(pool, name, "Hold")
    log = after(pool.log("MasterLog"), "Got DAEMONS_OFF (graceful)")
    assert log.index("Sent SIGTERM to STARTD") < log.index("All STARTDs are gone.") < log.index(
        "Sent SIGTERM to SCHEDD") < log.index("Sent SIGTERM to COLLECTOR"), "startds first, the collector last"

    assert pool.htcd("on").stdout == 'Sent "Spawn-All-Daemons" command to local master\n'
    wait_for(lambda: set(pool.daemon_pids()) == set(before), 60, "every daemon to start")
    wait_for(lambda: len(pool.slot_names()) >= 2, 60, "the slots again")
    assert not set(pool.daemon_pids().values()) & set(before.values())


def test_restart_one_daemon_then_all(pool: Pool) -> None:
    before = pool.daemon_pids()
    name = master_name(pool)
    out = pool.htcd("restart", "-daemon", "negotiator", "-name", name).stdout
    assert out == f'Sent "Restart" command for "negotiator" to master {name}\n'
    new_pid(pool, "NEGOTIATOR", before["NEGOTIATOR"])
    now = pool.daemon_pids()
    assert {k: v for k, v in now.items() if k != "NEGOTIATOR"} == \
        {k: v for k, v in before.items() if k != "NEGOTIATOR"}
    assert "restarting htcd negotiator" not in pool.log("MasterLog"), "at once, not after a backoff"

    assert pool.htcd("restart", "-peaceful").stdout == 'Sent "Restart-Peaceful" command to local master\n'
    wait_for(lambda: pool.log("MasterLog").count("** htcd MASTER") == 2, 60, "the master to re-execute")
    again = wait_for(lambda: (lambda p: p if len(p) == 4 else None)(pool.daemon_pids()), 60, "the daemons")
    assert not set(again.values()) & set(now.values()), "every daemon was restarted"
    assert pool.master.poll() is None and f"(pid {pool.master.pid}) listening" in after(
        pool.log("MasterLog"), "Doing exec(")
    wait_for(lambda: len(pool.slot_names()) >= 2, 60, "the slots again")


def test_off_master_stops_everything(pool: Pool) -> None:
    children = pool.daemon_pids()
    out = pool.htcd("off", "-master").stdout
    assert out == 'Sent "Kill-Daemon" command for "master" to local master\n'
    assert pool.master.wait(60) == 0
    assert all(gone(pid) for pid in children.values())


def test_name_errors_are_clear(pool: Pool) -> None:
    proc = pool.htcd("off", "-name", "no-such-host.example", check=False)
    assert proc.returncode == 1 and "Can't find address for master no-such-host.example" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = pool.htcd("on", "-daemon", "bogus", check=False)
    assert proc.returncode == 2 and "invalid choice: 'bogus'" in proc.stderr

    # a master on another host is reached over TCP; here nothing answers at its address
    far = ClassAd({"MyType": "DaemonMaster", "Name": "far.example.org", "Machine": "far.example.org",
                   "MyAddress": "<127.0.0.1:1>"})
    cfg = load("TOOL", env=pool.env)
    with Connection(collector(cfg)) as conn:
        conn.call("UPDATE_AD", ad_type="DaemonMaster", ad=far.to_wire())
    proc = pool.htcd("off", "-name", "far.example.org", check=False)
    assert proc.returncode == 1
    assert "cannot send Kill-All-Daemons to the master far.example.org" in proc.stderr, proc.stderr
    assert "Connection refused" in proc.stderr and "Traceback" not in proc.stderr
    assert pool.daemon_pids(), "nothing was stopped"


def test_daemon_list_changes_follow_a_reconfig(make_pool) -> None:
    pool = make_pool(MINIMAL, slots=0)
    base = pool.config_file.read_text()
    pool.config_file.write_text(base + "DAEMON_LIST = MASTER, COLLECTOR, SCHEDD, NEGOTIATOR\n")
    pool.htcd("reconfig")
    negotiator = wait_for(lambda: pool.daemon_pids().get("NEGOTIATOR"), 60, "the added negotiator")
    assert ad_value(pool, "DaemonList") == "MASTER, COLLECTOR, NEGOTIATOR, SCHEDD"
    pool.config_file.write_text(base)
    pool.htcd("reconfig")
    wait_for(lambda: gone(negotiator), 60, "the removed negotiator to stop")
    assert "NEGOTIATOR is no longer in DAEMON_LIST: stopping it" in pool.log("MasterLog")
    assert ad_value(pool, "DaemonList") == "MASTER, COLLECTOR, SCHEDD"
    assert set(pool.daemon_pids()) == {"COLLECTOR", "SCHEDD"}
