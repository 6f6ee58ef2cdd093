"""The schedd's keep-alives: every ALIVE_INTERVAL one ``ALIVE`` per startd, naming every claim the
schedd holds there (HTCondor's claim lease is ALIVE_INTERVAL * MAX_CLAIM_ALIVES_MISSED at the
startd).  One cheap command per startd per interval, never one per job, so the per-job path
stays as it was; the answer also renews the running jobs' LastJobLeaseRenewal.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from typing import TYPE_CHECKING

from htcd.wire.client import acall
from htcd.wire.errors import RemoteError, WireError

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd
    from htcd.schedd.shadow import Shadow


class KeepAlive:
    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd

    async def send(self) -> None:
        by_startd: dict[str, list[Shadow]] = defaultdict(list)
        for shadow in list(self.schedd.claim_holders):
            if shadow.claim_id and shadow.startd:
                by_startd[shadow.startd].append(shadow)
        if by_startd:
            await asyncio.gather(*(self._one(addr, shadows) for addr, shadows in by_startd.items()))

    async def _one(self, startd: str, shadows: list[Shadow]) -> None:
        log = self.schedd.log
        try:
            reply = await acall(startd, "ALIVE", timeout=20.0, claim_ids=[s.claim_id for s in shadows])
        except (WireError, RemoteError) as exc:
            log.info("cannot send keep-alives for %d claim(s) to the startd at %s: %s", len(shadows), startd, exc)
            return
        unknown = set(reply.get("unknown") or []) if isinstance(reply, dict) else set()
        renewed = []
        for shadow in shadows:
            if shadow.claim_id in unknown:
                log.info("the startd at %s no longer holds claim %s (job %s)", startd, shadow.public_claim_id,
                         shadow.job.id_text)
            elif shadow.running:
                renewed.append(shadow.job)
        if renewed:
            self.schedd.lifecycle.lease_renewed(renewed, int(time.time()))
