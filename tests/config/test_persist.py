"""Persistent config (`config_val -set`) as a library: the file, its place among the sources, checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from htcd.config import ConfigError, load
from htcd.config.persist import persist_changes, read_settings

TOP = """\
LOCAL_DIR = {d}
ENABLE_PERSISTENT_CONFIG = TRUE
PERSISTENT_CONFIG_DIR = $(LOCAL_DIR)/persist
SETTABLE_ATTRS_CONFIG = START, NUM_CPUS, MY_*
LOCAL_CONFIG_FILE = {d}/local.conf
START = FROM_TOP
"""


def setup(tmp_path: Path, extra: str = "") -> dict[str, str]:
    (tmp_path / "top.conf").write_text(TOP.format(d=tmp_path) + extra)
    (tmp_path / "local.conf").write_text("NUM_CPUS = 3\nMY_A = local\n")
    return {"HTCD_CONFIG": str(tmp_path / "top.conf"), "HOME": str(tmp_path)}


def test_persistent_settings_come_after_local_files_and_before_env(tmp_path: Path) -> None:
    env = setup(tmp_path)
    path = persist_changes(load("STARTD", env=env), ["START = $(START) && FALSE", "MY_A = persisted",
                                                     "NUM_CPUS = 4"], [])
    assert path == str(tmp_path / "persist" / ".config.STARTD")
    cfg = load("STARTD", env={**env, "_HTCD_NUM_CPUS": "5"})
    assert cfg.files[-1] == path and cfg.persistent == path
    assert cfg.get("MY_A") == "persisted", "persistent beats LOCAL_CONFIG_FILE"
    assert cfg.get("START") == "FROM_TOP && FALSE", "a self-reference means the files' value"
    assert cfg.get_int("NUM_CPUS") == 5, "the environment beats persistent settings"
    assert cfg.where("MY_A") == (path, 3)
    assert load("SCHEDD", env=env).get("MY_A") == "local", "the file is the startd's alone"
    assert load("STARTD", "EP2", env=env).get("MY_A") == "local", "a local name has its own file"


def test_unset_rewrites_and_the_last_unset_removes_the_file(tmp_path: Path) -> None:
    env = setup(tmp_path)
    cfg = load("STARTD", env=env)
    path = persist_changes(cfg, ["START = FALSE", "MY_B = @=x"], [])
    assert read_settings(path) == {"START": "FALSE", "MY_B": "@=x"}
    persist_changes(cfg, [], ["START"])
    assert read_settings(path) == {"MY_B": "@=x"}
    assert [f for f in os.listdir(tmp_path / "persist") if f.endswith(".tmp")] == [], "no temp file left"
    persist_changes(cfg, [], ["MY_B"])
    assert not os.path.exists(path)


def test_multi_line_values_read_back(tmp_path: Path) -> None:
    env = setup(tmp_path)
    persist_changes(load("STARTD", env=env), ["MY_M = a\nb"], [])
    assert load("STARTD", env=env).get("MY_M") == "a\nb"


@pytest.mark.parametrize(("extra", "item", "reason"), [
    ("ENABLE_PERSISTENT_CONFIG = FALSE\n", "START = X", "ENABLE_PERSISTENT_CONFIG is not true"),
    ("PERSISTENT_CONFIG_DIR =\n", "START = X", "PERSISTENT_CONFIG_DIR is not set"),
    ("SETTABLE_ATTRS_CONFIG =\n", "START = X", "no knob may be set remotely on the startd"),
    ("STARTD_SETTABLE_ATTRS_CONFIG = NUM_CPUS\n", "START = X", "not in STARTD_SETTABLE_ATTRS_CONFIG"),
    ("", "NUM_CPUS = 2.5", "NUM_CPUS = 2.5: not an integer"),
    ("", "START = a b", "START = a b: not a valid ClassAd expression"),
    ("", "MY_X = $INT(abc)", "MY_X = $INT(abc):"),
    ("", "PERSISTENT_CONFIG_DIR = /tmp", "cannot be set remotely"),
    ("", "= 1", "expected NAME = value"),
])
def test_refusals_name_the_reason_and_write_nothing(tmp_path: Path, extra: str, item: str, reason: str) -> None:
    env = setup(tmp_path, extra)
    with pytest.raises(ConfigError) as err:
        persist_changes(load("STARTD", env=env), ["MY_OK = 1", item], [])
    assert reason in str(err.value)
    assert not (tmp_path / "persist").exists()


def test_a_broken_persistent_file_names_its_line(tmp_path: Path) -> None:
    env = setup(tmp_path)
    (tmp_path / "persist").mkdir()
    (tmp_path / "persist" / ".config.STARTD").write_text("START = TRUE\nif\n")
    with pytest.raises(ConfigError) as err:
        load("STARTD", env=env)
    assert f"{tmp_path}/persist/.config.STARTD:2:" in str(err.value)
