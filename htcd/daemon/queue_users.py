"""Who counts as a queue superuser, and which identities are no one: one rule for every daemon
that lets a user act on a job (the schedd's rm/hold/qedit, the startd's condor_tail and
ssh_to_job), so that the two cannot drift apart."""

from __future__ import annotations

import os
from typing import Any

from htcd.wire.auth import Identity

UNAUTHENTICATED = ("UNAUTHENTICATED", "ANONYMOUS", "CLAIMTOBE_UNMAPPED")


def authenticated(identity: Identity) -> bool:
    return identity.method.upper() not in UNAUTHENTICATED and identity.domain.lower() != "unmapped"


def is_super_user(config: Any, identity: Identity) -> bool:
    """Root or the daemons' account here (FS), or a QUEUE_SUPER_USERS member (bare names are users
    of UID_DOMAIN or TRUST_DOMAIN, ``user@domain`` entries exact)."""
    if identity.method == "FS" and identity.uid is not None and identity.uid in (0, os.geteuid()):
        return True
    domains = {d.lower() for d in (config.get("UID_DOMAIN"), config.get("TRUST_DOMAIN")) if d}
    for entry in (s.lower() for s in config.get_list("QUEUE_SUPER_USERS", ["root", "condor"])):
        if "@" in entry:
            if entry == str(identity).lower():
                return True
        elif entry == identity.user.lower() and identity.domain.lower() in domains:
            return True
    return False
