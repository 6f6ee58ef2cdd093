"""Who a job runs as: owner, slot user, nobody; HTCondor's UID_DOMAIN rules."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from starter.starter_tools import job_ad, make_config, needs_root

from htcd.starter import users


def test_owner_in_our_uid_domain_runs_as_the_owner(pool_dir: Path) -> None:
    cfg = make_config(pool_dir, "UID_DOMAIN = example.org\n")
    job = job_ad(Owner="daemon", User="daemon@example.org", GlobalJobId="host.example.org#1.0#100")
    who = users.choose(job, "slot1@h", cfg, euid=0)
    assert (who.name, who.uid) == ("daemon", pwd.getpwnam("daemon").pw_uid)
    assert "owner" in who.why


def test_foreign_domain_falls_back_to_nobody(pool_dir: Path) -> None:
    cfg = make_config(pool_dir, "UID_DOMAIN = example.org\n")
    job = job_ad(Owner="daemon", User="daemon@elsewhere.net")
    who = users.choose(job, "slot1@h", cfg, euid=0)
    assert who.name == "nobody" and "elsewhere.net" in who.why


def test_submit_host_outside_the_domain_needs_trust_uid_domain(pool_dir: Path) -> None:
    job = job_ad(Owner="daemon", User="daemon@example.org", GlobalJobId="schedd@other.net#1.0#100")
    cfg = make_config(pool_dir, "UID_DOMAIN = example.org\n")
    assert users.choose(job, "slot1@h", cfg, euid=0).name == "nobody"
    trusting = make_config(pool_dir, "UID_DOMAIN = example.org\nTRUST_UID_DOMAIN = true\n")
    assert users.choose(job, "slot1@h", trusting, euid=0).name == "daemon"


def test_runas_owner_switched_off(pool_dir: Path) -> None:
    job = job_ad(Owner="daemon", User="daemon@example.org")
    cfg = make_config(pool_dir, "UID_DOMAIN = example.org\nSTARTER_ALLOW_RUNAS_OWNER = false\n")
    assert users.choose(job, "slot1@h", cfg, euid=0).name == "nobody"
    job["RunAsOwner"] = False
    cfg = make_config(pool_dir, "UID_DOMAIN = example.org\n")
    assert users.choose(job, "slot1@h", cfg, euid=0).name == "nobody"


def test_slot_user_then_nobody_slot_user_and_never_root(pool_dir: Path) -> None:
    cfg = make_config(pool_dir, "UID_DOMAIN = example.org\nSLOT2_USER = daemon\nNOBODY_SLOT_USER = bin\n")
    root_job = job_ad(Owner="root", User="root@example.org")
    assert users.choose(root_job, "slot2_3@h", cfg, euid=0).name == "daemon"  # dynamic slot of slot2
    assert users.choose(root_job, "slot1@h", cfg, euid=0).name == "bin"
    missing = job_ad(Owner="no-such-user-here", User="no-such-user-here@example.org")
    who = users.choose(missing, "slot1@h", cfg, euid=0)
    assert who.name == "bin" and "no account" in who.why
    cfg = make_config(pool_dir, "SLOT1_USER = root\n")
    assert users.choose(root_job, "slot1@h", cfg, euid=0).uid != 0


def test_dedicated_accounts_are_marked(pool_dir: Path) -> None:
    cfg = make_config(pool_dir, "SLOT1_USER = daemon\nDEDICATED_EXECUTE_ACCOUNT_REGEXP = dae.*\n")
    assert users.choose(job_ad(), "slot1@h", cfg, euid=0).dedicated
    cfg = make_config(pool_dir, "SLOT1_USER = daemon\n")
    assert not users.choose(job_ad(), "slot1@h", cfg, euid=0).dedicated


def test_without_root_the_job_runs_as_the_starter(pool_dir: Path) -> None:
    who = users.choose(job_ad(Owner="daemon", User="daemon@example.org"), "slot1@h", None, euid=1)
    assert who.uid is None and who.name == pwd.getpwuid(1).pw_name and "not root" in who.why


def test_reachable_and_the_personal_pool_fallback(pool_dir: Path) -> None:
    private = pool_dir / "private" / "execute"
    private.mkdir(parents=True)
    os.chmod(pool_dir / "private", 0o700)
    nobody = pwd.getpwnam("nobody")
    assert not users.reachable(str(private), nobody.pw_uid, nobody.pw_gid)
    assert users.reachable("/tmp", nobody.pw_uid, nobody.pw_gid)
    me = pwd.getpwuid(os.geteuid()).pw_name
    chosen = users.RunAs("nobody", nobody.pw_uid, nobody.pw_gid, "test")
    own = users.personal_fallback(job_ad(Owner=me), chosen, str(private))
    assert own.uid is None and "cannot reach" in own.why  # the submitter's own job, as the submitter
    other = users.personal_fallback(job_ad(Owner="daemon"), chosen, str(private))
    assert other is chosen  # anyone else's job never falls back
    assert users.personal_fallback(job_ad(Owner=me), chosen, "/tmp") is chosen


@needs_root
def test_a_created_slot_account_runs_the_job(pool_dir: Path, account: str, execute_dir: Path) -> None:
    """SLOT1_USER names a real account made for this test: the job and its sandbox are its."""
    import asyncio

    from starter.starter_tools import LOG, shell_job, vanilla

    from htcd.starter.starter import Starter

    cfg = make_config(pool_dir, f"SLOT1_USER = {account}\n")
    s = Starter(shell_job('id -un; stat -c "%U %a" .'), "slot1@test", 1, str(execute_dir), vanilla(), LOG, config=cfg)
    out = asyncio.run(s.run())["stdout"].decode().split()
    assert out == [account, account, "700"]
