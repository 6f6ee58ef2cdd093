"""`htcd config_val -set/-unset/-rset/-runset` against running daemons."""

from __future__ import annotations

from pooltools import wait_for

PERSIST = {"ENABLE_PERSISTENT_CONFIG": "TRUE", "PERSISTENT_CONFIG_DIR": "$(LOCAL_DIR)/persist"}


def start_expr(pool) -> str:  # noqa: ANN001
    return pool.htcd("status", "-af", "START").stdout.split("\n")[0].strip().lower()


def test_persistent_set_is_refused_clearly(make_pool) -> None:
    pool = make_pool(knobs=PERSIST)
    proc = pool.htcd("config_val", "-daemon", "startd", "-set", "START = FALSE", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "persistent configuration" in proc.stderr and "-rset" in proc.stderr


def test_runtime_set_needs_enable_runtime_config(make_pool) -> None:
    pool = make_pool()
    proc = pool.htcd("config_val", "-daemon", "startd", "-rset", "START = FALSE", check=False)
    assert proc.returncode == 1 and "ENABLE_RUNTIME_CONFIG is not true" in proc.stderr


def test_runtime_set_lasts_until_restart(make_pool) -> None:
    pool = make_pool(knobs={"ENABLE_RUNTIME_CONFIG": "TRUE"})
    pool.htcd("config_val", "-daemon", "startd", "-rset", "START = FALSE")
    pool.htcd("reconfig", "-daemon", "startd")
    wait_for(lambda: start_expr(pool) == "false", 30, "START = FALSE from -rset")
    pool.stop()
    pool.start()
    assert start_expr(pool) == "true", "-rset settings end with the daemon"
