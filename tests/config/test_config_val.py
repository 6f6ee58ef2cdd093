"""``htcd config_val`` run as a command, with HTCD_CONFIG naming a temporary file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BASE = "LOCAL_DIR = {d}/state\nDAEMON_LIST = MASTER COLLECTOR SCHEDD STARTD\n"


def cv(tmp_path: Path, *args: str, text: str | None = None) -> subprocess.CompletedProcess:
    top = tmp_path / "top"
    if text is not None:
        top.write_text(text.format(d=tmp_path))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("_CONDOR_", "_HTCD_")) and k != "CONDOR_CONFIG"}
    env.update(HTCD_CONFIG=str(top), HOME=str(tmp_path))
    return subprocess.run([sys.executable, "-m", "htcd", "config_val", *args], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)


def test_values_and_not_defined(tmp_path: Path) -> None:
    r = cv(tmp_path, "FOO", "NOPE", text=BASE + "FOO = $(LOG)/x\n")
    assert r.stdout.splitlines() == [f"{tmp_path}/state/log/x"]
    assert r.stderr.splitlines() == ["Not defined: NOPE"]  # on stderr, as condor_config_val says it
    assert r.returncode == 1
    assert "Traceback" not in r.stderr


def test_verbose_format(tmp_path: Path) -> None:
    r = cv(tmp_path, "-v", "FOO", "LOG", text=BASE + "FOO = $(LOG)/x\n")
    assert r.returncode == 0
    assert r.stdout.splitlines() == [
        f"FOO = {tmp_path}/state/log/x", f" # at: {tmp_path}/top, line 3", " # raw: FOO = $(LOG)/x", "",
        f"LOG = {tmp_path}/state/log", " # at: <Default>", " # raw: LOG = $(LOCAL_DIR)/log", ""]


def test_verbose_shows_a_value_of_several_lines_as_htcondor_does(tmp_path: Path) -> None:
    r = cv(tmp_path, "-v", "SUM_OF_CATALOGS", text=BASE)
    lines = r.stdout.splitlines()
    assert lines[0] == "SUM_OF_CATALOGS @=end" and lines[1] == "       ifthenelse(", lines
    assert lines[lines.index("@end") + 1:lines.index("@end") + 3] == [" # at: <Default>", " # raw: "]
    assert lines[lines.index(" # raw: ") + 1] == " #   SUM_OF_CATALOGS =     ifthenelse("


def test_a_misspelt_knob_gets_a_suggestion(tmp_path: Path) -> None:
    r = cv(tmp_path, "COLECTOR_HOST", "SCHEDD_NAME", text=BASE)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "Not defined: COLECTOR_HOST",
        " # COLECTOR_HOST is not a knob of htcd or HTCondor; did you mean COLLECTOR_HOST?",
        "Not defined: SCHEDD_NAME"]  # known to HTCondor's table, without a default: no suggestion


def test_verbose_says_a_knob_htcd_does_not_act_on(tmp_path: Path) -> None:
    r = cv(tmp_path, "-v", "RunBenchmarks", "MAX_JOBS_RUNNING", text=BASE)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:5] == [
        "RunBenchmarks = LastBenchmark == 0", " # at: <Default>", " # raw: RunBenchmarks = LastBenchmark == 0",
        " # accepted, not used by htcd", ""]
    assert "MAX_JOBS_RUNNING = " in r.stdout and r.stdout.count("not used by htcd") == 1


def test_condor_host_alone_places_the_central_manager(tmp_path: Path) -> None:
    """An execute node that sets only CONDOR_HOST finds the collector and negotiator there, as
    HTCondor's defaults say (COLLECTOR_HOST = $(CONDOR_HOST))."""
    r = cv(tmp_path, "COLLECTOR_HOST", "COLLECTOR_NAME", "ADSTASH_READ_POOLS", text="CONDOR_HOST = cm.example.org\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["cm.example.org", "My Pool - cm.example.org", "cm.example.org"]
    r = cv(tmp_path, "COLLECTOR_HOST", text="\n")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "Not defined: COLLECTOR_HOST\n")


def test_raw(tmp_path: Path) -> None:
    r = cv(tmp_path, "-raw", "FOO", text=BASE + "FOO = $(LOG)/x\n")
    assert r.stdout == "$(LOG)/x\n"


def test_subsystem_prefix(tmp_path: Path) -> None:
    text = BASE + "FOO = plain\nSCHEDD.FOO = sched\n"
    assert cv(tmp_path, "FOO", text=text).stdout == "plain\n"
    assert cv(tmp_path, "-subsystem", "schedd", "FOO").stdout == "sched\n"


def test_config_lists_files(tmp_path: Path) -> None:
    r = cv(tmp_path, "-config", text=BASE)
    assert r.stdout.splitlines() == ["Configuration source:", f"\t{tmp_path}/top"]


def test_dump_pattern_and_expand(tmp_path: Path) -> None:
    text = BASE + "FOO_ONE = $(LOG)/1\nFOO_TWO = 2\nBAR = 3\n"
    r = cv(tmp_path, "-dump", "^foo_", text=text)
    assert r.returncode == 0
    body = [ln for ln in r.stdout.splitlines() if ln and not ln.startswith("#")]
    assert body == ["FOO_ONE = $(LOG)/1", "FOO_TWO = 2"]
    r = cv(tmp_path, "-dump", "FOO_ONE", "-expand")
    assert f"FOO_ONE = {tmp_path}/state/log/1" in r.stdout.splitlines()
    r = cv(tmp_path, "-dump")
    assert "BAR = 3" in r.stdout.splitlines() and "SPOOL = $(LOCAL_DIR)/spool" in r.stdout.splitlines()


def test_dump_bad_pattern_is_a_message(tmp_path: Path) -> None:
    r = cv(tmp_path, "-dump", "(", text=BASE)
    assert r.returncode == 1 and "not a valid regular expression" in r.stderr
    assert "Traceback" not in r.stderr


def test_summary_groups_non_defaults_by_file(tmp_path: Path) -> None:
    (tmp_path / "local").write_text("MAX_JOBS_RUNNING = 5\nSPOOL = $(LOCAL_DIR)/spool\n")
    text = BASE + "LOCAL_CONFIG_FILE = {d}/local\n"
    r = cv(tmp_path, "-summary", text=text)
    assert r.returncode == 0
    out = r.stdout
    assert f"#\t{tmp_path}/top" in out and f"#\t{tmp_path}/local" in out
    top_part, local_part = out.split(f"# from {tmp_path}/local")
    assert f"LOCAL_DIR = {tmp_path}/state" in top_part
    assert "MAX_JOBS_RUNNING = 5" in local_part
    assert "SPOOL" not in out.replace(f"#\t{tmp_path}", "")  # equal to its default: left out
    assert "LOG =" not in out  # never set by a file


@pytest.mark.parametrize("form", [["-writeconfig:upgrade"], ["-writeconfig", "upgrade"]])
def test_writeconfig_upgrade_reads_back(tmp_path: Path, form: list[str]) -> None:
    text = BASE + "A @=end\n  one\n  two\n@end\nSCHEDD.B = 2\nMAX_JOBS_RUNNING = 7\n"
    out = tmp_path / "upgrade.conf"
    r = cv(tmp_path, *form, str(out), text=text)
    assert r.returncode == 0, r.stderr
    written = out.read_text()
    assert "SPOOL" not in written and "MAX_JOBS_RUNNING = 7" in written
    # the written file alone gives the same values as the original config
    top = (tmp_path / "top").read_text()
    (tmp_path / "top").write_text(written)
    assert cv(tmp_path, "A", "MAX_JOBS_RUNNING").stdout == "one\ntwo\n7\n"
    assert cv(tmp_path, "-subsystem", "SCHEDD", "B").stdout == "2\n"
    (tmp_path / "top").write_text(top)


def test_writeconfig_unknown_mode(tmp_path: Path) -> None:
    r = cv(tmp_path, "-writeconfig", "bogus", "x", text=BASE)
    assert r.returncode == 1 and "unknown mode" in r.stderr


def test_reconfig_needs(tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.write_text(BASE.format(d=tmp_path) + "MAX_JOBS_RUNNING = 10\nFOO = 1\nSCHEDD_LOG = /x\n")
    text = BASE + "MAX_JOBS_RUNNING = 20\nFOO = 2\nSCHEDD_LOG = /y\nCOLLECTOR_HOST = h:1\n"
    r = cv(tmp_path, "-reconfig-needs", str(old), text=text)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "MAX_JOBS_RUNNING: reconfig SCHEDD" in lines
    assert "SCHEDD_LOG: reconfig SCHEDD" in lines
    assert "FOO: reconfig MASTER COLLECTOR SCHEDD STARTD" in lines
    assert "COLLECTOR_HOST: reconfig MASTER COLLECTOR SCHEDD STARTD" in lines
    assert lines[-2:] == ["restart: -", "reconfig: MASTER COLLECTOR SCHEDD STARTD"]


def test_reconfig_needs_restart(tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.write_text(BASE.format(d=tmp_path))
    r = cv(tmp_path, "-reconfig-needs", str(old), text=BASE + "SPOOL = /elsewhere\n")
    assert "SPOOL: restart SCHEDD" in r.stdout.splitlines()
    assert r.stdout.splitlines()[-2] == "restart: SCHEDD"
    same = cv(tmp_path, "-reconfig-needs", str(tmp_path / "top"))
    assert same.stdout == "No changes.\n"


def test_errors_never_traceback(tmp_path: Path) -> None:
    r = cv(tmp_path, "A", text=BASE + "A = $(B)\nB = $(A)\n")
    assert r.returncode == 1 and "macro recursion" in r.stderr and "Traceback" not in r.stderr
    r = cv(tmp_path, "A", text="A = 1\nif\n")
    assert r.returncode == 1 and "top:2" in r.stderr and "Traceback" not in r.stderr
    r = cv(tmp_path, "-reconfig-needs", str(tmp_path / "missing"), text=BASE)
    assert r.returncode == 1 and "no such file" in r.stderr
    r = cv(tmp_path, text=BASE)
    assert r.returncode == 1 and "name at least one knob" in r.stderr
