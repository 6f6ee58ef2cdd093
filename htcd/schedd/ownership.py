"""Who may act on which jobs, and whose jobs a submit makes: HTCondor's queue rules.

A job belongs to the identity that submitted it (``Owner`` is its user, ``User`` its
``user@domain``): the schedd sets both from the authenticated identity and never from the
client's ad, so alice@other.org is not alice@ours.  The owner may hold, release, edit, vacate
and remove their jobs; so may the queue superusers (``QUEUE_SUPER_USERS``: bare names are
users of this UID_DOMAIN or the pool's TRUST_DOMAIN, ``user@domain`` entries exact), root and
the daemons' own account on this host (by FS).  ``QUEUE_ALL_USERS_TRUSTED`` (a trusted portal in
front of the schedd) takes the client's Owner on trust and lets anyone act on any job.
Unauthenticated clients may not submit or change jobs unless it is set.
"""

from __future__ import annotations

from typing import Any

from htcd.daemon.queue_users import authenticated, is_super_user
from htcd.wire.auth import Identity


def all_trusted(config: Any) -> bool:
    return config.get_bool("QUEUE_ALL_USERS_TRUSTED", False)


def may_act(config: Any, identity: Identity, owner: str, user: str | None) -> bool:
    """May ``identity`` act on jobs of ``owner`` (whose ``User`` is ``user``)?"""
    if all_trusted(config):
        return True
    if not authenticated(identity):
        return False
    if is_super_user(config, identity):
        return True
    if owner != identity.user:
        return False
    return user is None or user.lower() == str(identity).lower()


def cluster_user(cluster: Any) -> str | None:
    """The ``User`` of a queue cluster (its wire ad holds expression text)."""
    key = cluster.lower.get("user")
    text = cluster.wire.get(key) if key else None
    if not text:
        return None
    return text[1:-1] if text.startswith('"') and text.endswith('"') else text


def submit_owner(config: Any, identity: Identity, cluster_ad: dict[str, str]) -> tuple[str, str]:
    """(Owner, User) of a new cluster: the authenticated identity's, or with
    QUEUE_ALL_USERS_TRUSTED the Owner the client wrote (if any).  Raises PermissionError for an
    unauthenticated client when the queue does not trust everyone."""
    trusted = all_trusted(config)
    if not trusted and not authenticated(identity):
        raise PermissionError(f"{identity} (authenticated by {identity.method}) may not submit jobs: "
                              "the schedd accepts jobs only from authenticated users "
                              "(QUEUE_ALL_USERS_TRUSTED is false)")
    if trusted:
        claimed = next((v for k, v in cluster_ad.items() if k.lower() == "owner"), None)
        if claimed and claimed.startswith('"') and claimed.endswith('"') and len(claimed) > 2:
            owner = claimed[1:-1]
            return owner, f"{owner}@{config.get('UID_DOMAIN') or identity.domain}"
    return identity.user, str(identity)
