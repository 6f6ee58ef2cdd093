"""Job ownership and isolation, unit level: whose jobs a submit makes, who may act on them, which
account a job runs as (UID_DOMAIN trust, SOFT_UID_DOMAIN), and that qedit cannot change ownership."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from htcd.classad import ClassAd
from htcd.config import Config, load
from htcd.schedd import ownership
from htcd.schedd.attrcheck import check_edit
from htcd.starter import sandbox, users
from htcd.wire.auth import Identity


def cfg(tmp_path: Path, text: str = "", subsystem: str = "SCHEDD") -> Config:
    top = tmp_path / "top"
    top.write_text("UID_DOMAIN = example.org\nTRUST_DOMAIN = pool.example.org\n" + text)
    return load(subsystem, env={"CONDOR_CONFIG": str(top), "HOME": str(tmp_path)})


def ident(user: str, domain: str = "example.org", method: str = "TOKEN", uid: int | None = None) -> Identity:
    return Identity(user, domain, uid, method, host=None if method == "FS" else "10.0.0.5")


# ----- submit ---------------------------------------------------------------------------------------


def test_owner_comes_from_the_identity_not_the_ad(tmp_path: Path) -> None:
    c = cfg(tmp_path)
    assert ownership.submit_owner(c, ident("alice"), {"Owner": '"root"', "User": '"root@example.org"'}) == \
        ("alice", "alice@example.org")


def test_unauthenticated_clients_cannot_submit(tmp_path: Path) -> None:
    with pytest.raises(PermissionError, match="only from authenticated users"):
        ownership.submit_owner(cfg(tmp_path), ident("unauthenticated", "unmapped", "UNAUTHENTICATED"), {})


def test_queue_all_users_trusted_takes_the_claimed_owner(tmp_path: Path) -> None:
    c = cfg(tmp_path, "QUEUE_ALL_USERS_TRUSTED = true\n")
    anon = ident("unauthenticated", "unmapped", "UNAUTHENTICATED")
    assert ownership.submit_owner(c, anon, {"Owner": '"portaluser"'}) == ("portaluser", "portaluser@example.org")
    assert ownership.submit_owner(c, ident("bob"), {}) == ("bob", "bob@example.org")


def test_qedit_cannot_change_ownership_or_claims() -> None:
    for name in ("Owner", "User", "ClaimId", "owner"):
        assert check_edit(name, '"root"'), name


# ----- acting on jobs -------------------------------------------------------------------------------


def test_only_the_owner_in_the_same_domain(tmp_path: Path) -> None:
    c = cfg(tmp_path)
    assert ownership.may_act(c, ident("alice"), "alice", "alice@example.org")
    assert not ownership.may_act(c, ident("bob"), "alice", "alice@example.org")
    assert not ownership.may_act(c, ident("alice", "evil.org"), "alice", "alice@example.org")
    assert not ownership.may_act(c, ident("unauthenticated", "unmapped", "UNAUTHENTICATED"), "alice", None)


def test_queue_super_users(tmp_path: Path) -> None:
    c = cfg(tmp_path, "QUEUE_SUPER_USERS = root, condor, ops@admin.example.org\n")
    assert ownership.may_act(c, ident("condor", "pool.example.org"), "alice", "alice@example.org")  # a daemon token
    assert ownership.may_act(c, ident("root"), "alice", "alice@example.org")
    assert ownership.may_act(c, ident("ops", "admin.example.org"), "alice", "alice@example.org")
    assert not ownership.may_act(c, ident("condor", "evil.org"), "alice", "alice@example.org")  # not our condor
    assert not ownership.may_act(c, ident("ops", "example.org"), "alice", "alice@example.org")
    # root and the daemons' own account on this host, by FS, always
    assert ownership.may_act(c, ident("root", method="FS", uid=0), "alice", "alice@example.org")
    assert ownership.may_act(c, ident("me", method="FS", uid=os.geteuid()), "alice", "alice@example.org")
    plain = cfg(tmp_path, "QUEUE_SUPER_USERS = root\n")
    assert not ownership.may_act(plain, ident("condor", "pool.example.org"), "alice", "alice@example.org")


def test_queue_all_users_trusted_lets_anyone_act(tmp_path: Path) -> None:
    c = cfg(tmp_path, "QUEUE_ALL_USERS_TRUSTED = true\n")
    assert ownership.may_act(c, ident("bob"), "alice", "alice@example.org")


# ----- who a job runs as ----------------------------------------------------------------------------


def _job(owner: str, domain: str = "example.org", submit_host: str = "submit.example.org") -> ClassAd:
    ad = ClassAd()
    for k, v in {"ClusterId": 1, "ProcId": 0, "Owner": owner, "User": f"{owner}@{domain}",
                 "GlobalJobId": f"{submit_host}#1.0#100"}.items():
        ad[k] = v
    return ad


def test_runs_as_owner_only_when_the_uid_domain_allows(tmp_path: Path) -> None:
    c = cfg(tmp_path, "", "STARTD")
    assert users.choose(_job("daemon"), "slot1@h", c, euid=0).name == "daemon"
    assert users.choose(_job("daemon", "other.org"), "slot1@h", c, euid=0).name == "nobody"
    assert users.choose(_job("daemon", submit_host="evil.net"), "slot1@h", c, euid=0).name == "nobody"
    trusting = cfg(tmp_path, "TRUST_UID_DOMAIN = true\n", "STARTD")
    assert users.choose(_job("daemon", submit_host="evil.net"), "slot1@h", trusting, euid=0).name == "daemon"
    slot_user = cfg(tmp_path, "SLOT1_USER = bin\n", "STARTD")
    assert users.choose(_job("daemon", "other.org"), "slot1@h", slot_user, euid=0).name == "bin"
    assert users.choose(_job("root"), "slot1@h", c, euid=0).uid != 0


def test_soft_uid_domain(tmp_path: Path) -> None:
    missing = _job("no-such-account-here")
    soft = cfg(tmp_path, "SLOT1_USER = bin\n", "STARTD")  # htcd's default: soft
    who = users.choose(missing, "slot1@h", soft, euid=0)
    assert who.name == "bin" and "no account" in who.why
    hard = cfg(tmp_path, "SOFT_UID_DOMAIN = false\n", "STARTD")
    with pytest.raises(users.NoAccount, match="has no account on this execute point and SOFT_UID_DOMAIN is false"):
        users.choose(missing, "slot1@h", hard, euid=0)
    assert isinstance(users.NoAccount("x"), OSError)  # the starter reports it as why the job could not run
    assert users.choose(_job("root"), "slot1@h", hard, euid=0).uid != 0  # root is not "missing": never root


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_sandbox_is_private_to_the_job_user(tmp_path: Path) -> None:
    nobody = pwd.getpwnam("nobody")
    path = sandbox.make(str(tmp_path), 1, nobody.pw_uid, nobody.pw_gid)
    st = os.stat(path)
    assert (st.st_mode & 0o777, st.st_uid, st.st_gid) == (0o700, nobody.pw_uid, nobody.pw_gid)
    sandbox.remove(path)
