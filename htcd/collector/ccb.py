"""The CCB server the collector runs (HTCondor's CCB server lives in the collector too).

A target (a daemon with CCB_ADDRESS) keeps one CCB_REGISTER call open: the first reply gives its
ccbid, later ones carry heartbeats and reverse-connection requests; the target answers each
request with a frame ``{nonce, ok, error}`` on the same connection.  A requester's CCB_REQUEST
is answered once the target reports that it connected back (or why it could not), so the
requester's error names the real reason.  The protocol: ``htcd/wire/ccb.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from htcd.debug import dprintf
from htcd.wire.address import Address
from htcd.wire.ccb import contact_text
from htcd.wire.errors import CommandError
from htcd.wire.framing import read_frame
from htcd.wire.server import Request

ID_SPACE = 1 << 31  # ccbids are drawn from 1 .. 2**31
REQUEST_TIMEOUT = 30.0  # seconds a requester waits for the target's report, unless it asks for less


@dataclass
class Target:
    ccbid: int
    name: str
    identity: str
    requests: asyncio.Queue[dict[str, Any] | None] = field(default_factory=asyncio.Queue)
    pending: dict[str, asyncio.Future[tuple[bool, str]]] = field(default_factory=dict)
    since: float = field(default_factory=time.time)


@dataclass
class Counters:
    """What the server did since it started (in the collector's ad as CCB* attributes)."""

    registrations: int = 0
    requests: int = 0
    succeeded: int = 0
    failed: int = 0
    not_found: int = 0


class CCBServer:
    def __init__(self, address: Address, log: logging.Logger) -> None:
        self.address = address
        self.log = log
        self.targets: dict[int, Target] = {}
        self.counters = Counters()

    def publish(self, ad: Any) -> None:
        """HTCondor-like statistics in the collector's ad."""
        ad["CCBTargets"] = len(self.targets)
        ad["CCBRegistrations"] = self.counters.registrations
        ad["CCBRequests"] = self.counters.requests
        ad["CCBRequestsSucceeded"] = self.counters.succeeded
        ad["CCBRequestsFailed"] = self.counters.failed
        ad["CCBRequestsNotFound"] = self.counters.not_found

    def _choose_id(self, wanted: int, identity: str, name: str) -> int:
        """The id the target had before (a re-registration after a lost connection, or after
        this collector restarted) when it is free or held by the same daemon (identity and
        name: the daemons of a host share an identity), else a new one."""
        held = self.targets.get(wanted) if wanted > 0 else None
        if wanted > 0 and (held is None or (held.identity, held.name) == (identity, name)):
            return wanted
        while True:  # random, not 1, 2, ...: a restarted server must not give a returning daemon's id away
            ccbid = secrets.randbelow(ID_SPACE) + 1
            if ccbid not in self.targets:
                return ccbid

    async def cmd_register(self, req: Request) -> dict[str, Any]:
        interval = req.arg_float("heartbeat", 300.0)
        interval = max(1.0, interval) if interval > 0 else 0.0  # no busy loop for a target asking 0.001 s
        identity = str(req.identity)
        name = req.arg_str("name", "")
        ccbid = self._choose_id(req.arg_int("ccbid", 0), identity, name)
        target = Target(ccbid, name, identity)
        old = self.targets.get(ccbid)
        if old is not None:  # the same daemon again: its old connection is dead or dying
            old.requests.put_nowait(None)
        self.targets[ccbid] = target
        self.counters.registrations += 1
        self.log.info("CCB: registered %s (%s) as ccbid %d", target.name or "a daemon", identity, ccbid)
        await req.send_partial({"ccbid": ccbid, "contact": contact_text(self.address, ccbid)})
        reports = asyncio.create_task(self._reports(req, target), name=f"CCB reports of ccbid {ccbid}")
        ended = "the target closed its connection"
        try:
            while True:
                get = asyncio.create_task(target.requests.get())
                done, _ = await asyncio.wait({get, reports}, timeout=interval if interval > 0 else None,
                                             return_when=asyncio.FIRST_COMPLETED)
                if get not in done:
                    get.cancel()
                if reports in done:
                    break
                if get in done:
                    request = get.result()
                    if request is None:
                        ended = "the target registered again"
                        break
                    await req.send_partial({"request": request})
                else:
                    await req.send_partial({"heartbeat": int(time.time())})
        finally:
            reports.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reports
            if self.targets.get(ccbid) is target:
                del self.targets[ccbid]
            for fut in target.pending.values():
                if not fut.done():
                    fut.set_result((False, f"its registration ended: {ended}"))
            self.log.info("CCB: ccbid %d (%s) unregistered: %s", ccbid, target.name or identity, ended)
        return {"ended": ended}

    async def _reports(self, req: Request, target: Target) -> None:
        """The target's reports on its reverse connections, until it closes."""
        while True:
            frame = await read_frame(req.conn.reader)
            if frame is None:
                return
            fut = target.pending.pop(str(frame.get("nonce", "")), None)
            if fut is not None and not fut.done():
                fut.set_result((bool(frame.get("ok")), str(frame.get("error", ""))))

    async def cmd_request(self, req: Request) -> dict[str, Any]:
        ccbid = req.arg_int("ccbid", required=True)
        ret = req.arg_str("return_address", required=True)
        nonce = req.arg_str("nonce", required=True)
        wait = min(REQUEST_TIMEOUT, max(1.0, req.arg_float("wait", REQUEST_TIMEOUT)))
        self.counters.requests += 1
        target = self.targets.get(ccbid)
        if target is None:
            self.counters.not_found += 1
            raise CommandError(f"no daemon is registered with ccbid {ccbid} at this CCB server", "NOT_FOUND")
        if nonce in target.pending:
            raise CommandError("a request with this nonce is pending already", "BAD_REQUEST")
        fut: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
        target.pending[nonce] = fut
        target.requests.put_nowait({"return_address": ret, "nonce": nonce, "requester": str(req.identity)})
        dprintf(self.log, "D_NETWORK", "CCB: asked ccbid %d (%s) to connect to %s for %s", ccbid, target.name,
                ret, req.identity)
        try:
            ok, error = await asyncio.wait_for(fut, wait)
        except TimeoutError:
            ok, error = False, f"it did not report within {wait:g} s"
        finally:
            target.pending.pop(nonce, None)
        if not ok:
            self.counters.failed += 1
            self.log.info("CCB: ccbid %d (%s) could not connect to %s: %s", ccbid, target.name, ret, error)
            raise CommandError(f"{target.name or f'ccbid {ccbid}'} could not connect back to {ret}: {error}")
        self.counters.succeeded += 1
        dprintf(self.log, "D_NETWORK", "CCB: ccbid %d (%s) connected back to %s for %s", ccbid, target.name, ret,
                req.identity)  # one per connection: not at the default level in a large pool
        return {"ccbid": ccbid}
