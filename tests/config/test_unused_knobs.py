"""A knob the config sets that htcd accepts but does not act on is named, with where it is set:
by the library, and in a daemon's log when it starts and when it reconfigures."""

from __future__ import annotations

import shutil
from pathlib import Path

from pooltools import Pool

from htcd.config import _core
from htcd.config._table import table
from htcd.config.unused import unused_settings, warnings
from htcd.testing import wait_for


def _an_unused_knob() -> str:
    return next(p.name for p in table().values() if not p.acted_on and "<" not in p.name)


def _load(tmp_path: Path, text: str) -> _core.Config:
    f = tmp_path / "htcd_config"
    f.write_text(text)
    return _core.load("SCHEDD", env={"HTCD_CONFIG": str(f)})


def test_a_set_unused_knob_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    knob = _an_unused_knob()
    cfg = _load(tmp_path, f"# a comment\nNUM_CPUS = 2\n{knob} = something\nMY_OWN_MACRO = 1\n")
    found = unused_settings(cfg)
    assert [e.name for e in found] == [knob]
    (line,) = warnings(cfg)
    assert f"{knob} (set at {tmp_path / 'htcd_config'}:3)" in line and "does not act on it" in line


def test_subsystem_prefixed_and_empty_settings(tmp_path: Path) -> None:
    knob = _an_unused_knob()
    cfg = _load(tmp_path, f"SCHEDD.{knob} = 1\n{knob} =\n")
    assert [e.name for e in unused_settings(cfg)] == [f"SCHEDD.{knob}"]


def test_the_embedded_default_and_used_knobs_say_nothing(tmp_path: Path) -> None:
    assert warnings(_core.load("MASTER", env={"HTCD_CONFIG": ""})) == []
    assert warnings(_load(tmp_path, "use ROLE: CentralManager\nNUM_CPUS = 4\nMAX_JOBS_RUNNING = 10\n")) == []


def test_a_daemon_logs_them_at_start_and_at_reconfig(leak_check: Path) -> None:
    knob = _an_unused_knob()
    root = leak_check / "unused-knobs"
    pool = Pool(root, {"DAEMON_LIST": "MASTER SCHEDD", knob: "1"})
    try:
        pool.start(slots=0)
        wait_for(lambda: f"{knob} (set at" in pool.log("SchedLog"), 30, "the schedd's warning")
        assert "does not act on it" in pool.log("MasterLog")
        before = pool.log("SchedLog").count(f"{knob} (set at")
        pool.htcd("reconfig", "-daemon", "schedd")
        wait_for(lambda: pool.log("SchedLog").count(f"{knob} (set at") > before, 30,
                 "the warning again after the reconfig")
    finally:
        pool.stop()
        shutil.rmtree(root, ignore_errors=True)
