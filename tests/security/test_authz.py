"""The authorization policy (htcd/wire/authz.py): entries, implications, DENY winning, subsystem
overrides, token scopes, the daemon user, and the one-line reasons of a refusal."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from htcd.config import Config, load
from htcd.errors import UserError
from htcd.wire import auth, authz
from htcd.wire.commands import COMMANDS

ME = os.geteuid()


def cfg(tmp_path: Path, text: str, subsystem: str = "SCHEDD") -> Config:
    top = tmp_path / "top"
    top.write_text("FULL_HOSTNAME = submit.example.org\nIP_ADDRESS = 10.1.2.3\n" + text)
    return load(subsystem, env={"CONDOR_CONFIG": str(top), "HOME": str(tmp_path)})


def policy(tmp_path: Path, text: str, subsystem: str = "SCHEDD", daemon_uid: int = 4242) -> authz.Policy:
    return authz.build(cfg(tmp_path, text, subsystem), subsystem, daemon_uid=daemon_uid)


def tcp(user: str, domain: str, host: str, method: str = "TOKEN",
        scopes: frozenset[str] | None = None) -> auth.Identity:
    return auth.Identity(user, domain, None, method, host=host, scopes=scopes)


def fs(user: str, uid: int, domain: str = "submit.example.org") -> auth.Identity:
    return auth.Identity(user, domain, uid, "FS")


# ----- entries ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "user", "domain", "host"), [
    ("*", "*", "*", "*"),
    ("condor@*", "condor", "*", "*"),
    ("alice@example.org/10.0.0.1", "alice", "example.org", ""),
    ("*.example.org", "*", "*", "*.example.org"),
    ("10.0.*", "*", "*", "10.0.*"),
    ("*/node1.example.org", "*", "*", "node1.example.org"),
    ("bob/*", "bob", "*", "*"),
])
def test_entry_forms(text: str, user: str, domain: str, host: str) -> None:
    e = authz.parse_entry(text)
    assert (e.user, e.domain, e.host) == (user, domain, host)


def test_networks_in_both_notations() -> None:
    assert str(authz.parse_entry("10.0.0.0/8").networks[0]) == "10.0.0.0/8"
    assert str(authz.parse_entry("*@*/192.168.0.0/255.255.0.0").networks[0]) == "192.168.0.0/16"


@pytest.mark.parametrize(("text", "why"), [
    ("@example.org", "empty part"),
    ("alice@example.org/10.0.0.0/99", "is not a network"),
    ("alice@/host", "empty part"),
])
def test_bad_entries_name_the_knob_and_line(tmp_path: Path, text: str, why: str) -> None:
    with pytest.raises(UserError) as err:
        policy(tmp_path, f"\nALLOW_WRITE = condor@*, {text}\n")
    msg = str(err.value)
    assert why in msg and "ALLOW_WRITE" in msg and "line 4" in msg and text in msg


# ----- matching -----------------------------------------------------------------------------------


def test_user_domain_and_host_wildcards(tmp_path: Path) -> None:
    p = policy(tmp_path, "ALLOW_WRITE = alice@*.example.org/10.0.*, *@lab.org/192.168.0.0/16, bob@*\n"
                         "ALLOW_READ = *\n")
    assert p.check(tcp("alice", "cs.example.org", "10.0.3.4"), "WRITE") is None
    assert p.check(tcp("alice", "cs.example.org", "10.1.3.4"), "WRITE") is not None  # wrong host
    assert p.check(tcp("carol", "lab.org", "192.168.7.7"), "WRITE") is None
    assert p.check(tcp("carol", "lab.org", "192.169.7.7"), "WRITE") is not None
    assert p.check(tcp("bob", "anywhere.net", "203.0.113.9"), "WRITE") is None
    assert p.check(tcp("mallory", "example.org", "10.0.0.1"), "WRITE") is not None
    assert p.check(tcp("mallory", "example.org", "10.0.0.1"), "READ") is None


def test_a_bare_host_means_any_user_there_and_unix_peers_are_this_host(tmp_path: Path) -> None:
    p = policy(tmp_path, "ALLOW_WRITE = 127.0.0.1 submit.example.org\nALLOW_ADMINISTRATOR = 10.9.9.9\n")
    assert p.check(tcp("anyone", "x.org", "127.0.0.1"), "WRITE") is None
    assert p.check(fs("nobody", 65534), "WRITE") is None  # a Unix socket: on this host
    assert p.check(tcp("anyone", "x.org", "10.0.0.1"), "WRITE") is not None
    assert p.check(fs("nobody", 65534), "ADMINISTRATOR") is not None
    assert p.check(tcp("root", "x.org", "10.9.9.9"), "ADMINISTRATOR") is None


def test_host_names_are_resolved_to_addresses(tmp_path: Path) -> None:
    p = policy(tmp_path, "ALLOW_WRITE = */localhost\n")
    assert p.check(tcp("u", "d", "127.0.0.1"), "WRITE") is None
    assert p.check(tcp("u", "d", "10.0.0.1"), "WRITE") is not None


def test_ipv4_mapped_ipv6_peers_match_ipv4_entries(tmp_path: Path) -> None:
    p = policy(tmp_path, "ALLOW_WRITE = 10.0.0.0/8\n")
    assert p.check(tcp("u", "d", "::ffff:10.2.3.4"), "WRITE") is None


# ----- levels -------------------------------------------------------------------------------------


def test_implications(tmp_path: Path) -> None:
    p = policy(tmp_path, "ALLOW_READ = nobody@nowhere\nALLOW_WRITE = nobody@nowhere\n"
                         "ALLOW_ADMINISTRATOR = admin@*\nALLOW_DAEMON = condor@*\nALLOW_NEGOTIATOR = neg@*\n")
    admin, daemon, neg = (tcp(u, "example.org", "10.0.0.1") for u in ("admin", "condor", "neg"))
    assert p.check(admin, "WRITE") is None and p.check(admin, "READ") is None
    assert p.check(admin, "DAEMON") is not None
    assert p.check(daemon, "WRITE") is None and p.check(daemon, "READ") is None
    assert p.check(daemon, "ADMINISTRATOR") is not None
    assert p.check(neg, "READ") is None and p.check(neg, "WRITE") is not None
    # the ADVERTISE levels use the DAEMON lists unless they have their own
    assert p.check(daemon, "ADVERTISE_STARTD") is None
    assert p.check(admin, "ADVERTISE_SCHEDD") is not None


def test_advertise_levels_have_their_own_lists_when_set(tmp_path: Path) -> None:
    p = policy(tmp_path, "ALLOW_DAEMON = condor@*\nALLOW_ADVERTISE_STARTD = worker@*/10.0.0.0/8\n")
    assert p.check(tcp("worker", "d", "10.1.1.1"), "ADVERTISE_STARTD") is None
    assert p.check(tcp("condor", "d", "10.1.1.1"), "ADVERTISE_STARTD") is not None
    assert p.check(tcp("worker", "d", "10.1.1.1"), "DAEMON") is not None


def test_deny_wins_and_is_inherited_by_implying_levels(tmp_path: Path) -> None:
    p = policy(tmp_path, "ALLOW_READ = *\nALLOW_WRITE = *\nALLOW_ADMINISTRATOR = *@example.org\n"
                         "DENY_WRITE = *@evil.org\nDENY_READ = */10.66.0.0/16\n")
    evil = tcp("eve", "evil.org", "10.0.0.1")
    assert p.check(evil, "READ") is None
    assert p.check(evil, "WRITE") == ("eve@evil.org (authenticated by TOKEN from 10.0.0.1) does not hold WRITE: "
                                      "DENY_WRITE = *@evil.org matched")
    inside = tcp("alice", "example.org", "10.66.1.1")
    for level in ("READ", "WRITE", "ADMINISTRATOR"):  # who may not read may not write or administer
        assert "DENY_READ = */10.66.0.0/16 matched" in (p.check(inside, level) or "")
    assert p.check(tcp("alice", "example.org", "10.0.0.1"), "ADMINISTRATOR") is None


def test_subsystem_lists_replace_the_general_ones(tmp_path: Path) -> None:
    text = "ALLOW_WRITE = alice@*\nALLOW_WRITE_COLLECTOR = bob@*\nDENY_READ_SCHEDD = eve@*\n"
    sched, coll = policy(tmp_path, text, "SCHEDD"), policy(tmp_path, text, "COLLECTOR")
    alice, bob, eve = (tcp(u, "d", "10.0.0.1") for u in ("alice", "bob", "eve"))
    assert sched.check(alice, "WRITE") is None and sched.check(bob, "WRITE") is not None
    assert coll.check(bob, "WRITE") is None and coll.check(alice, "WRITE") is not None
    assert "DENY_READ_SCHEDD = eve@* matched" in (sched.check(eve, "READ") or "")
    assert coll.check(eve, "READ") is None


def test_unconfigured_levels_keep_the_builtin_default(tmp_path: Path) -> None:
    p = policy(tmp_path, "", daemon_uid=4242)
    assert p.check(fs("nobody", 65534), "WRITE") is None
    reason = p.check(fs("nobody", 65534), "ADMINISTRATOR")
    assert reason and reason.startswith("nobody@submit.example.org (authenticated by FS) does not hold "
                                        "ADMINISTRATOR: no ALLOW_ADMINISTRATOR is configured")
    assert p.check(fs("daemons", 4242), "DAEMON") is None
    assert p.check(fs("root", 0), "CONFIG") is None
    assert p.check(tcp("root", "x", "10.0.0.1"), "DAEMON") is not None  # root elsewhere is not root here
    assert p.check(tcp("unauthenticated", "unmapped", "10.0.0.1", "UNAUTHENTICATED"), "READ") is not None


def test_refusal_names_the_allow_list(tmp_path: Path) -> None:
    p = policy(tmp_path, "ALLOW_ADMINISTRATOR = condor@*, root@*\n")
    reason = p.check(tcp("alice", "example.org", "10.0.0.7", "SSL"), "ADMINISTRATOR")
    assert reason == ("alice@example.org (authenticated by SSL from 10.0.0.7) does not hold ADMINISTRATOR: "
                      "not in ALLOW_ADMINISTRATOR = condor@*, root@*")


def test_token_scopes_limit_the_identity(tmp_path: Path) -> None:
    p = policy(tmp_path, "ALLOW_READ = *\nALLOW_WRITE = *\nALLOW_ADMINISTRATOR = admin@*\n")
    reader = tcp("admin", "d", "10.0.0.1", scopes=frozenset({"READ"}))
    assert p.check(reader, "READ") is None
    assert p.check(reader, "WRITE") == ("admin@d (authenticated by TOKEN from 10.0.0.1) does not hold WRITE: "
                                        "the token's scopes READ do not include WRITE")
    assert "scopes READ do not include ADMINISTRATOR" in (p.check(reader, "ADMINISTRATOR") or "")
    admin = tcp("admin", "d", "10.0.0.1", scopes=frozenset({"ADMINISTRATOR"}))
    assert p.check(admin, "ADMINISTRATOR") is None and p.check(admin, "READ") is None  # implied
    # a scope grants nothing the policy does not
    assert p.check(tcp("bob", "d", "10.0.0.1", scopes=frozenset({"ADMINISTRATOR"})), "ADMINISTRATOR")


def test_the_daemon_account_is_condor(tmp_path: Path) -> None:
    p = policy(tmp_path, "ALLOW_DAEMON = condor@*\nALLOW_ADMINISTRATOR = condor@*\n", daemon_uid=4242)
    assert p.check(fs("alice", 4242), "DAEMON") is None  # the pool's own account, by FS
    assert p.check(fs("alice", 1001), "DAEMON") is not None
    assert p.check(tcp("alice", "d", "127.0.0.1"), "DAEMON") is not None  # not by FS: not the daemon account
    assert p.check(tcp("condor", "pool.example.org", "10.0.0.1"), "DAEMON") is None  # a daemon token


def test_denial_is_logged_at_d_security(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("htcd.test-authz")
    p = authz.build(cfg(tmp_path, "ALLOW_WRITE = alice@*\n"), "SCHEDD", log, daemon_uid=4242)
    from htcd import debug as dlog

    caplog.set_level(logging.DEBUG, logger=log.name)
    real = dlog.enabled
    try:
        dlog.enabled = lambda lg, flag: True  # type: ignore[assignment]
        assert p.check(tcp("bob", "d", "10.0.0.1"), "WRITE")
    finally:
        dlog.enabled = real  # type: ignore[assignment]
    assert any("PERMISSION DENIED to bob@d (authenticated by TOKEN from 10.0.0.1) for access level WRITE: "
               "not in ALLOW_WRITE = alice@*" in r.getMessage()
               for r in caplog.records), caplog.text


# ----- the command table --------------------------------------------------------------------------


def test_every_command_has_a_level_the_policy_knows() -> None:
    assert COMMANDS
    for name, command in COMMANDS.items():
        assert command.level in authz.IMPLIES, f"{name} has level {command.level!r}"
        assert command.level in auth.LEVELS
    assert set(authz.IMPLIES) == set(auth.LEVELS)


def test_privileged_commands_need_privileged_levels() -> None:
    """What changes a daemon or another user's state is never open (READ/WRITE) by mistake."""
    for name in ("DC_OFF_GRACEFUL", "DC_RECONFIG", "DAEMONS_OFF", "RESTART", "SET_PRIORITY", "DRAIN_JOBS",
                 "VACATE_CLAIMS"):
        assert COMMANDS[name].level == auth.ADMINISTRATOR, name
    for name in ("REQUEST_CLAIM", "ACTIVATE_CLAIM", "ALIVE", "DC_CHILDALIVE"):
        assert COMMANDS[name].level == auth.DAEMON, name
    for name in ("UPDATE_AD", "INVALIDATE_AD", "UPDATE_SESSION"):  # the collector checks ADVERTISE_* per ad
        assert "ADVERTISE_" in COMMANDS[name].summary, name
    for name in ("QUERY_PRIVATE_ADS", "NEGOTIATE", "MATCHES"):
        assert COMMANDS[name].level == auth.NEGOTIATOR, name
    assert COMMANDS["DC_CONFIG_PERSIST"].level == COMMANDS["DC_CONFIG_RUNTIME"].level == auth.CONFIG


# ----- the shipped defaults against HTCondor's own templates ------------------------------------------

_SECURITY_KNOBS = ["SECURITY_MODEL", "SEC_DEFAULT_AUTHENTICATION", "SEC_DEFAULT_ENCRYPTION", "SEC_DEFAULT_INTEGRITY",
                   "SEC_READ_AUTHENTICATION", "SEC_CLIENT_AUTHENTICATION", "ALLOW_ADMINISTRATOR", "ALLOW_DAEMON",
                   "ALLOW_NEGOTIATOR", "ALLOW_WRITE", "ALLOW_READ"]
_ORACLE = r"""
import json, sys
import htcondor2
out = {}
for k in sys.argv[1:]:
    try:
        htcondor2.param["__P"] = "$(" + k + ")"
        out[k] = htcondor2.param["__P"]
    except KeyError:
        out[k] = None
print(json.dumps(out))
"""


def test_the_default_policy_is_htcondors_recommended(tmp_path: Path) -> None:
    """The embedded default and config.d/00-htcd-default-security.conf both give what HTCondor's
    own `use SECURITY : Recommended` gives (the htcondor wheel as the oracle)."""
    import json
    import subprocess
    import sys

    pytest.importorskip("htcondor2")
    top = tmp_path / "condor_config"
    top.write_text("use SECURITY : Recommended\n")
    proc = subprocess.run([sys.executable, "-c", _ORACLE, *_SECURITY_KNOBS], capture_output=True, text=True,
                          env={"CONDOR_CONFIG": str(top), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
                          timeout=60, check=True)
    want = json.loads(proc.stdout)
    assert want["ALLOW_DAEMON"].split() == ["condor@*", "condor@password"]
    embedded = load("MASTER", env={"HOME": str(tmp_path)})
    assert embedded.files == []
    shipped_top = tmp_path / "htcd_config"
    shipped_dir = tmp_path / "config.d"  # the *.conf files, as installed (not the README)
    shipped_dir.mkdir()
    for conf in (Path(__file__).resolve().parents[2] / "config.d").glob("*.conf"):
        (shipped_dir / conf.name).write_text(conf.read_text())
    shipped_top.write_text(f"LOCAL_CONFIG_DIR = {shipped_dir}\n")
    shipped = load("MASTER", env={"HTCD_CONFIG": str(shipped_top), "HOME": str(tmp_path)})
    for config in (embedded, shipped):
        got = {k: config.get(k) for k in _SECURITY_KNOBS}
        assert got == want
    # and the policy built from it: the pool's own identities only for the daemon levels
    p = authz.build(embedded, "SCHEDD", daemon_uid=4242)
    assert p.check(fs("alice", 4242), "DAEMON") is None
    assert p.check(fs("bob", 1001), "DAEMON") is not None
    assert p.check(fs("bob", 1001), "WRITE") is None
    assert p.check(fs("root", 0), "ADMINISTRATOR") is None
