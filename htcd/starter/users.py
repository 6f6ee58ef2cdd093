"""Who a job runs as, by HTCondor's rules for Unix execute points.

The job's ``User`` is ``owner@domain``.  The owner's own account is used when the starter may
run jobs as their owners (``STARTER_ALLOW_RUNAS_OWNER``, and the job's ``RunAsOwner`` unless it
is false), the job comes from our ``UID_DOMAIN`` (the submitting host must lie in that domain
unless ``TRUST_UID_DOMAIN`` says to take the domain on trust), and the account exists here.
Otherwise the slot's own account ``SLOT<N>_USER``, else ``NOBODY_SLOT_USER``, else nobody; an
owner who may run as themself but has no account here also gets those, unless
``SOFT_UID_DOMAIN`` is false (then the job is refused, as HTCondor's default does).
Jobs never run as root.  A starter that is not root can only run jobs as its own user.
"""

from __future__ import annotations

import os
import pwd
import re
from dataclasses import dataclass
from typing import Any

from htcd.classad import ClassAd


class NoAccount(PermissionError):
    """The job may run as its owner, who has no account here, and SOFT_UID_DOMAIN is false: the
    job is not run (an OSError, so the starter reports it as the reason the job could not run)."""


@dataclass(frozen=True)
class RunAs:
    name: str
    uid: int | None  # None: the starter's own user (no switch)
    gid: int | None
    why: str  # for the StarterLog
    dedicated: bool = False  # an account only jobs use: every process of it may be killed at cleanup


def slot_number(slot_name: str) -> int:
    """N of ``slotN`` / ``slotN_M@host`` (a dynamic slot uses its partitionable slot's N)."""
    m = re.match(r"slot(\d+)", slot_name)
    return int(m.group(1)) if m else 1


def _account(name: str) -> pwd.struct_passwd | None:
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        return None
    return pw if pw.pw_uid != 0 else None


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _submit_host(job: ClassAd) -> str:
    """The submitting schedd's host, from ``GlobalJobId`` (``[schedd@]host#cluster.proc#qdate``)."""
    gid = str(job.get_value("GlobalJobId", "") or "")
    return gid.split("#", 1)[0].rsplit("@", 1)[-1].lower()


def owner_allowed(job: ClassAd, config: Any) -> tuple[bool, str]:
    """May the job run as its owner's account (if that account exists)?  (yes/no, why)."""
    if config is not None and not config.get_bool("STARTER_ALLOW_RUNAS_OWNER", True):
        return False, "STARTER_ALLOW_RUNAS_OWNER is false"
    if job.get_value("RunAsOwner", True) is False:
        return False, "the job's RunAsOwner is false"
    user = str(job.get_value("User", "") or "")
    _owner, _, domain = user.rpartition("@")
    domain = str(job.get_value("UidDomain", "") or domain).lower()
    ours = str((config.get("UID_DOMAIN") if config is not None else None) or "").lower()
    if not domain or not ours or domain != ours:
        return False, f"the job's UID domain {domain or '(none)'} is not ours ({ours or 'unset'})"
    trust = config is not None and config.get_bool("TRUST_UID_DOMAIN", False)
    host = _submit_host(job)
    if not trust and host and host != domain and not host.endswith("." + domain):
        return False, f"the submitting host {host} is not in UID_DOMAIN {domain} and TRUST_UID_DOMAIN is false"
    return True, f"UID_DOMAIN {domain} matches"


def choose(job: ClassAd, slot_name: str, config: Any, euid: int | None = None) -> RunAs:
    """The account to run ``job`` as on ``slot_name``."""
    euid = os.geteuid() if euid is None else euid
    if euid != 0:
        me = pwd.getpwuid(euid).pw_name
        return RunAs(me, None, None, f"the starter is not root, so the job runs as {me}")
    owner = str(job.get_value("Owner", "") or "")
    allowed, why = owner_allowed(job, config)
    regexp = (config.get("DEDICATED_EXECUTE_ACCOUNT_REGEXP") if config is not None else None) or ""

    def runas(pw: pwd.struct_passwd, reason: str) -> RunAs:
        dedicated = bool(regexp) and re.fullmatch(regexp, pw.pw_name) is not None
        return RunAs(pw.pw_name, pw.pw_uid, pw.pw_gid, reason, dedicated)

    if allowed and owner:
        pw = _account(owner)
        if pw is not None:
            return runas(pw, f"the job's owner ({why})")
        if owner != "root" and config is not None and not config.get_bool("SOFT_UID_DOMAIN", True) \
                and not _exists(owner):
            raise NoAccount(f"the job's owner {owner} has no account on this execute point and "
                            "SOFT_UID_DOMAIN is false")
        why = f"the owner {owner} has no account here" if owner != "root" else "jobs never run as root"
    n = slot_number(slot_name)
    slot_user = config.get(f"SLOT{n}_USER") if config is not None else None
    if slot_user:
        pw = _account(slot_user)
        if pw is not None:
            return runas(pw, f"SLOT{n}_USER, as {why}")
        why += f"; SLOT{n}_USER {slot_user} has no account here"
    nobody = (config.get("NOBODY_SLOT_USER") if config is not None else None) or "nobody"
    pw = _account(nobody) or _account("nobody")
    if pw is not None:
        return runas(pw, f"{pw.pw_name}, as {why}")
    return RunAs("nobody", 65534, 65534, f"uid 65534, as {why} and there is no nobody account")


def reachable(path: str, uid: int, gid: int) -> bool:
    """Can ``uid``/``gid`` search every directory from / down to ``path`` (mode bits only)?"""
    path = os.path.abspath(path)
    parts = path.split("/")
    for i in range(1, len(parts) + 1):
        d = "/".join(parts[:i]) or "/"
        try:
            st = os.stat(d)
        except OSError:
            return False
        if st.st_uid == uid:
            bit = 0o100
        elif st.st_gid == gid:
            bit = 0o010
        else:
            bit = 0o001
        if not st.st_mode & bit:
            return False
    return True


def personal_fallback(job: ClassAd, runas: RunAs, execute_dir: str, euid: int | None = None) -> RunAs:
    """A job submitted by the starter's own account, whose chosen account cannot even reach
    EXECUTE (a personal pool under a private directory), runs as that account: it is the
    submitter's own, so nothing is gained or lost.  Anyone else's job keeps ``runas``."""
    euid = os.geteuid() if euid is None else euid
    me = pwd.getpwuid(euid)
    if runas.uid is None or runas.uid == euid or str(job.get_value("Owner", "") or "") != me.pw_name:
        return runas
    if reachable(execute_dir, runas.uid, runas.gid if runas.gid is not None else -1):
        return runas
    return RunAs(me.pw_name, None, None, f"the submitter's own account: {runas.name} cannot reach {execute_dir}")

