"""`htcd config_val -set/-unset/-rset/-runset` against running daemons."""

from __future__ import annotations

from pooltools import wait_for

from htcd.classad import ClassAd
from htcd.wire.client import Connection
from htcd.wire.locate import read_address_file

PERSIST = {"ENABLE_PERSISTENT_CONFIG": "TRUE", "PERSISTENT_CONFIG_DIR": "$(LOCAL_DIR)/persist",
           "SETTABLE_ATTRS_CONFIG": "START, NUM_CPUS"}


def start_expr(pool) -> str:
    return pool.htcd("status", "-af", "START").stdout.split("\n")[0].strip().lower()


def test_persistent_set_survives_restart_and_unset_undoes_it(make_pool) -> None:
    pool = make_pool(knobs=PERSIST)
    out = pool.htcd("config_val", "-daemon", "startd", "-set", "START = FALSE").stdout
    assert 'Successfully set configuration "START = FALSE" on startd' in out
    persist_file = pool.local / "persist" / ".config.STARTD"
    assert "START = FALSE" in persist_file.read_text()
    assert start_expr(pool) == "true", "a persistent setting waits for the next reconfig"
    listed = pool.htcd("config_val", "-subsystem", "STARTD", "-config").stdout
    assert str(persist_file) in listed.split()
    verbose = pool.htcd("config_val", "-subsystem", "STARTD", "-v", "START").stdout
    assert f"# at: {persist_file}, line 2" in verbose and "# persistent: set with config_val -set" in verbose

    pool.htcd("reconfig", "-daemon", "startd")
    wait_for(lambda: start_expr(pool) == "false", 30, "START = FALSE from -set")
    pool.stop()
    pool.start()
    assert start_expr(pool) == "false", "persistent settings survive a restart"

    pool.htcd("config_val", "-daemon", "startd", "-unset", "START")
    assert not persist_file.exists(), "the last setting removed leaves no file"
    pool.htcd("reconfig", "-daemon", "startd")
    wait_for(lambda: start_expr(pool) == "true", 30, "START back to its default after -unset")


def test_persistent_set_is_refused_without_enable_persistent_config(make_pool) -> None:
    pool = make_pool(knobs={"PERSISTENT_CONFIG_DIR": "$(LOCAL_DIR)/persist"})
    proc = pool.htcd("config_val", "-daemon", "startd", "-set", "START = FALSE", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "ENABLE_PERSISTENT_CONFIG is not true" in proc.stderr
    assert not (pool.local / "persist").exists()


def test_persistent_set_refusals_write_nothing(make_pool) -> None:
    pool = make_pool(knobs={k: v for k, v in PERSIST.items() if k != "SETTABLE_ATTRS_CONFIG"})
    no_list = pool.htcd("config_val", "-daemon", "startd", "-set", "START = FALSE", check=False)
    assert no_list.returncode == 1 and "Traceback" not in no_list.stderr
    assert "no knob may be set remotely on the startd" in no_list.stderr
    assert "SETTABLE_ATTRS_CONFIG" in no_list.stderr, "the error says how to allow it"

    pool.config_file.write_text(pool.config_file.read_text() + "STARTD_SETTABLE_ATTRS_CONFIG = START, NUM_CPUS\n")
    pool.htcd("reconfig", "-daemon", "startd")  # the startd answers once it has re-read its config
    cases = {
        "NUM_CPUS = two": "NUM_CPUS = two: not an integer",
        "START = (Owner ==": "START = (Owner ==: not a valid ClassAd expression",
        "START = $NOPE(1)": "START = $NOPE(1): not a valid ClassAd expression",  # kept as text, as HTCondor
        "MEMORY = 100": "MEMORY may not be set remotely on the startd: it is not in STARTD_SETTABLE_ATTRS_CONFIG",
        "SETTABLE_ATTRS_CONFIG = *": "SETTABLE_ATTRS_CONFIG cannot be set remotely",
        "START FALSE": "expected NAME = value",
    }
    for item, reason in cases.items():
        proc = pool.htcd("config_val", "-daemon", "startd", "-set", item, check=False)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, item
        assert reason in proc.stderr, (item, proc.stderr)
    assert not (pool.local / "persist").exists(), "a refused setting writes nothing"
    # one bad item refuses the whole request
    proc = pool.htcd("config_val", "-daemon", "startd", "-set", "START = FALSE", "NUM_CPUS = x", check=False)
    assert proc.returncode == 1 and not (pool.local / "persist").exists()


def test_name_picks_a_local_daemon_and_refuses_other_hosts(make_pool) -> None:
    pool = make_pool(knobs=PERSIST)
    machine = pool.htcd("status", "-af", "Machine").stdout.split("\n")[0].strip()
    out = pool.htcd("config_val", "-name", machine, "-daemon", "startd", "-set", "NUM_CPUS = 1").stdout
    assert "on startd" in out
    assert "NUM_CPUS = 1" in (pool.local / "persist" / ".config.STARTD").read_text()

    unknown = pool.htcd("config_val", "-name", "nosuch.example.org", "-set", "START = FALSE", check=False)
    assert unknown.returncode == 1 and "no daemon named 'nosuch.example.org'" in unknown.stderr

    collector = read_address_file(str(pool.local / "log" / ".collector_address"))
    assert collector is not None
    fake = ClassAd()
    for key, value in {"MyType": "Machine", "Name": "slot1@far.example.org", "Machine": "far.example.org",
                       "MyAddress": "<127.0.0.1:1>"}.items():
        fake[key] = value
    with Connection(collector) as conn:
        conn.call("UPDATE_AD", ad_type="Machine", ad=fake.to_wire())
    far = pool.htcd("config_val", "-name", "far.example.org", "-set", "START = FALSE", check=False)
    assert far.returncode == 1 and "Traceback" not in far.stderr
    assert "Connection refused" in far.stderr, far.stderr  # another host's daemon is reached over TCP


def test_runtime_set_needs_enable_runtime_config(make_pool) -> None:
    pool = make_pool()
    proc = pool.htcd("config_val", "-daemon", "startd", "-rset", "START = FALSE", check=False)
    assert proc.returncode == 1 and "ENABLE_RUNTIME_CONFIG is not true" in proc.stderr


def test_runtime_set_lasts_until_restart(make_pool) -> None:
    pool = make_pool(knobs={"ENABLE_RUNTIME_CONFIG": "TRUE", "SETTABLE_ATTRS_CONFIG": "START"})
    bad = pool.htcd("config_val", "-daemon", "startd", "-rset", "START = (x ||", check=False)
    assert bad.returncode == 1 and "not a valid ClassAd expression" in bad.stderr, "-rset values are checked too"
    pool.htcd("config_val", "-daemon", "startd", "-rset", "START = FALSE")
    pool.htcd("reconfig", "-daemon", "startd")
    wait_for(lambda: start_expr(pool) == "false", 30, "START = FALSE from -rset")
    pool.stop()
    pool.start()
    assert start_expr(pool) == "true", "-rset settings end with the daemon"
