"""The daemon runtime on a real daemon process (the toy daemon): shutdown on the first and second
signal, the command table, failing timers, reconfig of the log, the statistics it publishes."""

from __future__ import annotations

import re
import signal

import pytest
from pooltools import wait_for

from htcd.wire.errors import RemoteError


def stat(ad: dict[str, str], name: str) -> float:
    return float(ad[name])


def test_first_sigterm_shuts_down_gracefully_running_the_hook_to_its_end(toyd) -> None:
    toy = toyd(TOYD_SHUTDOWN_SECONDS="1")
    toy.signal(signal.SIGTERM)
    assert toy.wait(60) == 0
    log = toy.log()
    assert "caught signal SIGTERM" in log
    assert "got shutdown request (graceful)" in log
    started = log.index("toy shutdown hook started (graceful)")
    assert log.index("toy shutdown hook finished (graceful)") > started
    assert "EXITING WITH STATUS 0" in log
    assert not toy.address_file.exists(), "the address file is removed on the way out"


def test_second_sigterm_cuts_a_slow_graceful_shutdown_short(toyd) -> None:
    toy = toyd(TOYD_SHUTDOWN_SECONDS="600")
    toy.signal(signal.SIGTERM)
    wait_for(lambda: "toy shutdown hook started (graceful)" in toy.log(), 30, "the graceful hook to start")
    toy.signal(signal.SIGTERM)
    assert toy.wait(30) == 0, "the second signal ends a 600 s graceful shutdown at once"
    log = toy.log()
    assert "fast shutdown requested during graceful shutdown" in log
    assert "toy shutdown hook finished (fast)" in log
    assert "toy shutdown hook finished (graceful)" not in log
    assert "EXITING WITH STATUS 0" in log


def test_sigquit_is_a_fast_shutdown(toyd) -> None:
    toy = toyd(TOYD_SHUTDOWN_SECONDS="600")
    toy.signal(signal.SIGQUIT)
    assert toy.wait(30) == 0
    assert "got shutdown request (fast)" in toy.log()
    assert "toy shutdown hook finished (graceful)" not in toy.log()


def test_an_unknown_command_gets_a_clear_error_and_the_daemon_serves_on(toyd) -> None:
    toy = toyd()
    with pytest.raises(RemoteError) as exc:
        toy.call("NO_SUCH_COMMAND")
    assert exc.value.code == "UNKNOWN_COMMAND"
    assert "toyd does not know the command 'NO_SUCH_COMMAND'" in str(exc.value)
    with pytest.raises(RemoteError) as exc:
        toy.call("SUBMIT")  # in the command table, but not this daemon's
    assert exc.value.code == "UNKNOWN_COMMAND"
    assert toy.call("PING")["daemon"] == "TOYD"
    assert "Received unix command 'NO_SUCH_COMMAND'" in toy.log()


def test_a_timer_whose_action_raises_is_logged_and_keeps_running(toyd) -> None:
    toy = toyd(TOYD_FAIL_INTERVAL="0.1")
    wait_for(lambda: toy.log().count("timer failing timer failed") >= 3, 60, "three failures of the timer")
    log = toy.log()
    assert "RuntimeError: toy failure number 1" in log and "RuntimeError: toy failure number 3" in log
    ad = toy.ad("DC:2")
    assert int(ad["ToyFailures"]) >= 3
    assert int(ad["DCTimer_failing_timer"]) >= 3, "each run is counted in the statistics"
    assert toy.call("PING")["daemon"] == "TOYD"


def test_reconfig_changes_the_debug_level_at_once(toyd) -> None:
    toy = toyd()
    pid = toy.proc.pid
    toy.call("PING")
    assert "command PING" not in toy.log(), "D_COMMAND is off by default"
    toy.reconfig(TOYD_DEBUG="D_COMMAND")
    toy.call("PING")
    wait_for(lambda: re.search(r"Received unix command PING from \S+, access level READ", toy.log()), 30,
             "the PING logged at D_COMMAND")
    assert "Return from handler PING" not in toy.log(), "the verbose level is D_COMMAND:2"
    toy.reconfig(TOYD_DEBUG="D_COMMAND:2 D_CAT")
    toy.call("PING")
    wait_for(lambda: "(D_COMMAND:2) Return from handler PING" in toy.log(), 30, "the verbose line, with its category")
    toy.reconfig(TOYD_DEBUG="")
    before = toy.log().count("command PING")
    toy.call("PING")
    toy.call("PING")
    assert toy.log().count("command PING") == before
    assert toy.proc.pid == pid and toy.proc.poll() is None, "no restart"


def test_sighup_rereads_the_debug_level(toyd) -> None:
    toy = toyd()
    toy.knobs["TOYD_DEBUG"] = "D_COMMAND"
    toy.write_config()
    toy.signal(signal.SIGHUP)
    wait_for(lambda: "caught signal SIGHUP" in toy.log() and "reconfigured from" in toy.log(), 30, "the reconfig")
    toy.call("PING")
    wait_for(lambda: "Received unix command PING" in toy.log(), 30, "the PING logged")


def test_an_unknown_debug_category_is_a_warning_naming_the_knob(toyd) -> None:
    toy = toyd(TOYD_DEBUG="D_COMMAND D_BOGUS", ALL_DEBUG="D_NOPE")
    log = toy.log()
    assert "WARNING: TOYD_DEBUG: unknown debug category 'D_BOGUS' ignored" in log
    assert "WARNING: ALL_DEBUG: unknown debug category 'D_NOPE' ignored" in log
    toy.call("PING")
    wait_for(lambda: "Received unix command PING" in toy.log(), 30, "D_COMMAND still applies")


def test_the_log_rotates_and_a_reconfig_of_its_size_applies_at_once(toyd) -> None:
    toy = toyd(TOYD_DEBUG="D_COMMAND", MAX_TOYD_LOG="100 Mb", MAX_NUM_TOYD_LOG="3")
    old = toy.log_path.with_name("ToydLog.old")
    for _ in range(20):
        toy.call("PING")
    assert not old.exists()
    toy.reconfig(MAX_TOYD_LOG="2000")
    for _ in range(100):
        toy.call("PING")
    rotated = sorted(p.name for p in toy.log_path.parent.iterdir() if p.name.startswith("ToydLog."))
    assert "ToydLog.old" in rotated
    stamped = [n for n in rotated if re.fullmatch(r"ToydLog\.\d{8}T\d{6}", n)]
    assert len(rotated) == 3 and len(stamped) == 2, f"MAX_NUM_TOYD_LOG = 3 keeps 3 old files: {rotated}"
    for path in [toy.log_path, *(toy.log_path.with_name(n) for n in rotated)]:
        size = path.stat().st_size
        assert 0 < size <= 2000, f"{path.name} is {size} bytes"
        for line in path.read_text().splitlines():
            assert re.match(r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d ", line), f"a whole line in {path.name}: {line!r}"


def test_trunc_log_on_open_starts_the_log_empty(toyd) -> None:
    first = toyd()
    first.stop()
    assert "EXITING" in first.log()
    again = toyd(TRUNC_TOYD_LOG_ON_OPEN="true", LOCAL_DIR=str(first.dir / "local"))
    assert "EXITING" not in again.log() and "listening at" in again.log()


def test_the_daemon_ad_carries_the_default_statistics(toyd) -> None:
    toy = toyd()
    for _ in range(3):
        toy.call("PING")
    ad = toy.ad()
    for name in ("DaemonCoreDutyCycle", "RecentDaemonCoreDutyCycle", "StatsLifetime", "RecentStatsLifetime",
                 "RecentWindowMax", "DCSelectWaittime", "RecentDCSelectWaittime", "DCPumpCycleCount",
                 "RecentDCPumpCycleCount", "DCCommands", "RecentDCCommands", "DCTimersFired",
                 "RecentDCTimersFired", "DaemonCoreMaxBlockMs", "RecentDaemonCoreMaxBlockMs",
                 "DaemonCoreMaxBlockCpuMs", "RecentDaemonCoreMaxBlockCpuMs", "MonitorSelfCPUUsage",
                 "MonitorSelfImageSize", "MonitorSelfResidentSetSize", "MonitorSelfAge", "MonitorSelfTime"):
        assert name in ad, f"{name} missing from the daemon's ad"
    assert 0.0 <= stat(ad, "DaemonCoreDutyCycle") <= 1.0
    assert stat(ad, "DCCommands") >= 3  # the three PINGs (a query is counted once it is answered)
    assert int(ad["RecentWindowMax"]) == 1200
    assert stat(ad, "MonitorSelfResidentSetSize") > 1000  # KiB: a Python process is far above 1 MiB
    assert "DCCommand_PING" not in ad, "per-command counts are verbose (DC:2)"
    verbose = toy.ad("DC:2")
    assert int(verbose["DCCommand_PING"]) == 3 and "RecentDCCommand_PINGRuntime" in verbose
    assert "DCDebugOuts" in verbose and "DaemonCoreMaxBlockWhat" in verbose
    none = toy.ad("NONE")
    assert "DCCommands" not in none and "DaemonCoreDutyCycle" in none
    no_recent = toy.ad("DC:1!R")
    assert "DCCommands" in no_recent and "RecentDCCommands" not in no_recent
    with pytest.raises(RemoteError) as exc:
        toy.ad("DC:2X")
    assert exc.value.code == "BAD_REQUEST" and "'X'" in str(exc.value)


def test_statistics_to_publish_and_the_window_are_knobs(toyd) -> None:
    toy = toyd(STATISTICS_TO_PUBLISH="DC:2", STATISTICS_WINDOW_SECONDS="30", STATISTICS_WINDOW_QUANTUM="10")
    toy.call("PING")
    ad = toy.ad()
    assert "DCCommand_PING" in ad and int(ad["RecentWindowMax"]) == 30
    toy.reconfig(STATISTICS_TO_PUBLISH="DC:1!L")
    ad = toy.ad()
    assert "DCCommand_PING" not in ad and "DCCommands" not in ad and "RecentDCCommands" in ad


def test_a_long_iteration_is_logged_with_what_ran_and_published(toyd) -> None:
    toy = toyd(TOYD_BLOCK_SECONDS="0.3")
    wait_for(lambda: "DaemonCore: the event loop was busy" in toy.log(), 60, "the long iteration logged")
    line = next(ln for ln in toy.log().splitlines() if "event loop was busy" in ln)
    assert "task 'blocking timer'" in line
    busy = float(re.search(r"busy for ([\d.]+) s", line).group(1))
    assert busy >= 0.3
    ad = toy.ad("DC:2")
    assert stat(ad, "DaemonCoreMaxBlockCpuMs") >= 290  # the CPU burnt in the loop's thread
    assert stat(ad, "DaemonCoreMaxBlockMs") >= 300
    assert "blocking timer" in ad["DaemonCoreMaxBlockWhat"]


def test_the_duty_cycle_follows_the_loop_s_load(toyd) -> None:
    idle = toyd(STATISTICS_WINDOW_SECONDS="4", STATISTICS_WINDOW_QUANTUM="1")
    busy = toyd(STATISTICS_WINDOW_SECONDS="4", STATISTICS_WINDOW_QUANTUM="1", TOYD_BURN_PERCENT="80")
    wait_for(lambda: stat(busy.ad(), "RecentStatsLifetime") >= 3, 60, "three seconds of statistics")
    assert stat(busy.ad(), "RecentDaemonCoreDutyCycle") > 0.5
    assert stat(idle.ad(), "RecentDaemonCoreDutyCycle") < 0.3
    ad = idle.ad()
    assert stat(ad, "RecentDCSelectWaittime") > 0.7 * stat(ad, "RecentDCPumpCycleSum")


def test_subsys_log_and_debug_time_format(toyd, tmp_path) -> None:
    elsewhere = tmp_path / "logs" / "toy.log"
    toy = toyd(TOYD_LOG=str(elsewhere), DEBUG_TIME_FORMAT='"%Y-%m-%dT%H:%M:%S"')
    assert not toy.log_path.exists(), "TOYD_LOG names the log"
    first = elsewhere.read_text().splitlines()[0]
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d \*+$", first), first


def test_daemon_log_names_are_htcondor_s(tmp_path) -> None:
    from htcd.config import load
    from htcd.daemon.core import Daemon

    (tmp_path / "cfg").write_text(f"LOG = {tmp_path}\nSTARTD_LOG = /var/log/elsewhere/StartLog\n"
                                  "MAX_SCHEDD_LOG = 1 Hr\nMAX_NUM_SCHEDD_LOG = 4\nMAX_SHADOW_LOG = lots\n")

    class Stub:
        config = load("SCHEDD", env={"HTCD_CONFIG": str(tmp_path / "cfg")})

    names = {s: Daemon.log_settings(Stub(), s)[0].path for s in  # type: ignore[arg-type]
             ("MASTER", "COLLECTOR", "NEGOTIATOR", "MATCH", "SCHEDD", "SHADOW", "STARTD")}
    assert {k: v.rsplit("/", 1)[1] for k, v in names.items()} == {
        "MASTER": "MasterLog", "COLLECTOR": "CollectorLog", "NEGOTIATOR": "NegotiatorLog", "MATCH": "MatchLog",
        "SCHEDD": "SchedLog", "SHADOW": "ShadowLog", "STARTD": "StartLog"}
    assert names["STARTD"] == "/var/log/elsewhere/StartLog"
    assert Daemon.log_settings(Stub(), "STARTER", ".slot3")[0].path.endswith("/StarterLog.slot3")  # type: ignore[arg-type]
    schedd, problems = Daemon.log_settings(Stub(), "SCHEDD")  # type: ignore[arg-type]
    assert schedd.limit.seconds == 3600 and schedd.max_num == 4 and not problems
    _, problems = Daemon.log_settings(Stub(), "SHADOW")  # type: ignore[arg-type]
    assert problems and problems[0].startswith("MAX_SHADOW_LOG: ") and "using 10 MiB" in problems[0]
