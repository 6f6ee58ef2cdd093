"""Daemon logs: HTCondor's debug categories and their syntax, the line format, rotation."""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path

import pytest

from htcd.daemon.log import (
    DaemonLogHandler,
    LineFormatter,
    LogLimit,
    LogSettings,
    open_log,
    parse_limit,
    rotated_files,
)
from htcd.debug import dprintf, enabled, parse_debug
from htcd.errors import UserError

LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d ")


def flags_of(text: str, all_debug: str | None = None):
    return parse_debug([("ALL_DEBUG", all_debug), ("SCHEDD_DEBUG", text)])


def test_d_always_d_error_and_d_status_are_on_by_default_and_nothing_else() -> None:
    f = flags_of("")
    assert f.basic == {"D_ALWAYS", "D_ERROR", "D_STATUS"} and not f.verbose and not f.header


def test_categories_with_commas_bars_and_spaces() -> None:
    f = flags_of("D_COMMAND, D_SECURITY|D_NETWORK  D_match")
    assert {"D_COMMAND", "D_SECURITY", "D_NETWORK", "D_MATCH"} <= f.basic
    assert not f.verbose


def test_fulldebug_is_d_always_2_and_makes_listed_categories_verbose() -> None:
    f = flags_of("D_FULLDEBUG D_COMMAND")
    assert f.enabled("D_ALWAYS", verbose=True) and f.enabled("D_COMMAND", verbose=True)
    assert not f.enabled("D_SECURITY")


def test_explicit_verbosity_stops_fulldebug_from_spreading() -> None:
    f = flags_of("D_FULLDEBUG D_COMMAND:1 D_SECURITY:2")
    assert f.enabled("D_ALWAYS", verbose=True)
    assert f.enabled("D_COMMAND") and not f.enabled("D_COMMAND", verbose=True)
    assert f.enabled("D_SECURITY", verbose=True)
    assert flags_of("D_ALWAYS:2").enabled("D_ALWAYS", verbose=True)


def test_zero_verbosity_and_minus_turn_categories_off() -> None:
    f = flags_of("D_COMMAND", all_debug="D_ALWAYS:0")
    assert not f.enabled("D_ALWAYS") and f.enabled("D_COMMAND")
    f = flags_of("-D_COMMAND", all_debug="D_COMMAND:2")
    assert not f.enabled("D_COMMAND") and not f.enabled("D_COMMAND", verbose=True)


def test_all_debug_and_subsys_debug_merge() -> None:
    f = flags_of("D_COMMAND", all_debug="D_SECURITY D_PID")
    assert f.enabled("D_COMMAND") and f.enabled("D_SECURITY") and f.header == {"D_PID"}


def test_d_all_and_d_any_and_header_options() -> None:
    f = flags_of("D_ALL")
    assert f.enabled("D_ACCOUNTANT") and f.header == {"D_PID", "D_FDS", "D_CAT"}
    f = flags_of("D_ANY D_CATEGORY D_SUB_SECOND D_TIMESTAMP")
    assert f.enabled("D_HOSTNAME") and f.header == {"D_CAT", "D_SUB_SECOND", "D_TIMESTAMP"}
    assert flags_of("D_FAILURE").enabled("D_ERROR")


def test_unknown_names_are_collected_with_their_knob() -> None:
    f = flags_of("D_COMMAND D_BOGUS", all_debug="D_NOPE:2")
    assert f.unknown == [("ALL_DEBUG", "D_NOPE:2"), ("SCHEDD_DEBUG", "D_BOGUS")]
    assert f.enabled("D_COMMAND")
    assert "SCHEDD_DEBUG: unknown debug category 'D_BOGUS'" in f.warnings()[1]


def test_the_line_format(tmp_path: Path) -> None:
    rec = logging.LogRecord("htcd.x", logging.INFO, __file__, 1, "hello %s", ("world",), None)
    assert re.fullmatch(r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d hello world", LineFormatter().format(rec))
    rec.dflag = ("D_COMMAND", True)
    text = LineFormatter({"D_PID", "D_CAT", "D_SUB_SECOND"}).format(rec)
    assert re.fullmatch(rf"\d\d/\d\d/\d\d \d\d:\d\d:\d\d\.\d\d\d \(pid:{os.getpid()}\) \(D_COMMAND:2\) hello world", text)
    assert re.fullmatch(r"\d+ hello world", LineFormatter(unix_time=True).format(rec))
    assert LineFormatter(time_format="%Y").format(rec).startswith(time.strftime("%Y ", time.localtime(rec.created)))
    warn = logging.LogRecord("htcd.x", logging.WARNING, __file__, 1, "careful", (), None)
    assert LineFormatter().format(warn).endswith(" WARNING: careful")


def test_parse_limit_takes_sizes_and_times() -> None:
    assert parse_limit("10 Mb") == LogLimit(size=10 * 1024 * 1024)
    assert parse_limit("512K") == LogLimit(size=512 * 1024)
    assert parse_limit("0") == LogLimit(size=0)
    assert parse_limit("2000") == LogLimit(size=2000)
    assert parse_limit("1 Hr") == LogLimit(size=0, seconds=3600)
    assert parse_limit("30 Sec") == LogLimit(size=0, seconds=30)
    assert parse_limit("2 Day") == LogLimit(size=0, seconds=2 * 86400)
    assert parse_limit(None) == LogLimit()
    with pytest.raises(UserError, match="unknown unit 'parsecs'"):
        parse_limit("3 parsecs")
    with pytest.raises(UserError, match="not a log size or time"):
        parse_limit("lots")


def _emit(handler: logging.Handler, text: str) -> None:
    handler.handle(logging.LogRecord("htcd.t", logging.INFO, __file__, 1, text, (), None))


def test_rotation_to_old_keeps_one_old_file(tmp_path: Path) -> None:
    path = tmp_path / "SchedLog"
    h = DaemonLogHandler(str(path), LogLimit(size=300))
    h.setFormatter(LineFormatter())
    for i in range(40):
        _emit(h, f"line {i:03d} " + "x" * 20)
    h.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["SchedLog", "SchedLog.old"]
    text = (tmp_path / "SchedLog.old").read_text() + path.read_text()
    assert path.stat().st_size <= 300 and (tmp_path / "SchedLog.old").stat().st_size <= 300
    assert "line 039" in path.read_text()
    assert all(LINE.match(line) for line in text.splitlines())


def test_rotation_with_max_num_keeps_timestamped_files_and_the_oldest_as_old(tmp_path: Path) -> None:
    path = tmp_path / "StartLog"
    h = DaemonLogHandler(str(path), LogLimit(size=200), max_num=3)
    h.setFormatter(LineFormatter())
    for i in range(60):
        _emit(h, f"line {i:03d} " + "y" * 20)
    h.close()
    old = [Path(p).name for p in rotated_files(str(path))]
    assert len(old) == 3 and old[-1] == "StartLog.old"
    assert all(re.fullmatch(r"StartLog\.\d{8}T\d{6}", n) for n in old[:-1])
    # the newest lines are in the log, the ones before in the newest timestamped file
    assert "line 059" in path.read_text()
    newest = tmp_path / old[-2]
    assert int(re.findall(r"line (\d+)", newest.read_text())[-1]) + 1 == int(re.findall(r"line (\d+)", path.read_text())[0])


def test_time_limited_rotation(tmp_path: Path) -> None:
    path = tmp_path / "MasterLog"
    h = DaemonLogHandler(str(path), LogLimit(size=0, seconds=3600))
    h.setFormatter(LineFormatter())
    _emit(h, "first")
    _emit(h, "second")
    assert not (tmp_path / "MasterLog.old").exists()
    h.opened -= 3600  # the file is an hour old
    _emit(h, "third")
    h.close()
    assert "first" in (tmp_path / "MasterLog.old").read_text() and path.read_text().endswith("third\n")


def test_keep_open_false_and_truncate(tmp_path: Path) -> None:
    path = tmp_path / "ShadowLog"
    path.write_text("from before\n")
    h = DaemonLogHandler(str(path), LogLimit(), keep_open=False)
    h.setFormatter(LineFormatter())
    _emit(h, "appended")
    assert h.fd is None, "closed between writes"
    assert path.read_text().startswith("from before\n")
    h2 = DaemonLogHandler(str(path), LogLimit(), truncate=True)
    h2.setFormatter(LineFormatter())
    _emit(h2, "fresh")
    h2.close()
    assert "from before" not in path.read_text() and "fresh" in path.read_text()


def test_open_log_filters_by_category_and_reopens_with_new_settings(tmp_path: Path) -> None:
    path = tmp_path / "TestLog"
    log = open_log("unit_test_log", LogSettings(str(path), flags_of("D_COMMAND D_BOGUS")))
    log.info("always")
    log.debug("full debug")
    dprintf(log, "D_COMMAND", "a command")
    dprintf(log, "D_COMMAND:2", "a command, verbosely")
    dprintf(log, "D_SECURITY", "security")
    log.warning("a warning")
    assert enabled(log, "D_COMMAND") and not enabled(log, "D_SECURITY") and not enabled(log, "D_FULLDEBUG")
    text = path.read_text()
    assert "always" in text and "a command" in text and "WARNING: a warning" in text
    assert "full debug" not in text and "verbosely" not in text and "security" not in text
    assert "WARNING: SCHEDD_DEBUG: unknown debug category 'D_BOGUS'" in text
    same = open_log("unit_test_log", LogSettings(str(path), flags_of("D_FULLDEBUG D_SECURITY")), first=False)
    assert same is log
    log.debug("now full debug")
    dprintf(log, "D_SECURITY:2", "security, verbosely")
    dprintf(log, "D_COMMAND", "no longer")
    text = path.read_text()
    assert "now full debug" in text and "security, verbosely" in text and "no longer" not in text
    assert len(log.handlers) == 1
    log.handlers[0].close()
