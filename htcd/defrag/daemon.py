"""The defrag daemon: every DEFRAG_INTERVAL it looks at the pool's partitionable-slot machines in
the collector, cancels the drains DEFRAG_CANCEL_REQUIREMENTS says are done, and drains as many
machines as the rate and limits allow, best DEFRAG_RANK first, through each startd's DRAIN_JOBS
command (with a check that the drain costs what the startd advertised, and the
DEFRAG_DRAINING_START_EXPR as START while draining).  Its ad (MyType "Defrag") says what it saw
and did; the state file keeps that across restarts."""

from __future__ import annotations

import asyncio
import os
import random
import time
from typing import Any

from htcd.classad import ClassAd, parse_old_ad
from htcd.client import startd as startd_client
from htcd.config import ConfigError
from htcd.daemon.core import Daemon
from htcd.defrag import policy as policy_mod
from htcd.defrag.stats import DefragStats
from htcd.errors import UserError
from htcd.wire.address import Address
from htcd.wire.errors import WireError

#: How much worse than the startd advertised a drain may turn out and still be begun (HTCondor's
#: fixed values): the startd refuses the drain when its check expression is false.
BADPUT_GROWTH_TOLERANCE = 1.25
NEGLIGIBLE_BADPUT = 1200
NEGLIGIBLE_DEADLINE_SLIPPAGE = 1200


def machine_of(slot_name: str) -> str:
    """The startd (machine) a slot belongs to: the part of its name after '@'."""
    return slot_name.rpartition("@")[2] if "@" in slot_name else slot_name


class Defrag(Daemon):
    subsystem = "DEFRAG"
    ad_type = "Defrag"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.policy = policy_mod.load(self.config, self.config.local_name, self.hostname)
        self.name = self.policy.name
        self.defrag = DefragStats(window=10 * max(1, self.policy.interval))
        self.last_poll = 0
        self.last_reconfig = int(time.time())
        self._load_state()

    def default_name(self) -> str:
        return policy_mod.load(self.config, self.config.local_name, self.hostname).name

    def update_interval(self) -> int:
        return self.policy.update_interval

    def reconfigured(self) -> None:
        try:
            self.policy = policy_mod.load(self.config, self.config.local_name, self.hostname)
        except ConfigError as exc:
            self.log.error("%s; the defrag policy is unchanged", exc)
            return
        self.last_reconfig = int(time.time())
        self.defrag.window = 10 * max(1, self.policy.interval)
        self._announce()

    def _announce(self) -> None:
        p = self.policy
        if p.interval <= 0:
            self.log.info("DEFRAG_INTERVAL=%d, so no pool defragmentation will be done.", p.interval)
            return
        self.log.info("Will evaluate defragmentation policy every DEFRAG_INTERVAL=%d seconds.", p.interval)
        self.log.info("%s", p.rate.describe(p.interval))
        if p.interval > 3600:
            self.log.warning("DEFRAG_INTERVAL=%d is longer than an hour: no machine will be drained "
                             "(as HTCondor's defrag daemon does)", p.interval)

    async def startup(self) -> None:
        self._announce()
        now = int(time.time())
        first = 0.0
        interval = self.policy.interval
        if self.last_poll and 0 <= now - self.last_poll < interval:
            first = float(interval - (now - self.last_poll))
            self.log.info("the last poll was %ds ago (state file): the next is in %ds", now - self.last_poll, first)
        self.every(lambda: float(max(1, self.policy.interval)), self._poll_if_on, "Defrag::poll", first=first)

    async def _poll_if_on(self) -> None:
        if self.policy.interval > 0:
            await self.poll()

    # -- the state file --------------------------------------------------------------------
    def _load_state(self) -> None:
        path = self.policy.state_file
        try:
            with open(path) as f:
                text = f.read()
        except FileNotFoundError:
            self.log.info("State file %s does not yet exist.", path)
            return
        except OSError as exc:
            raise UserError(f"cannot read the defrag state file {path}: {exc.strerror}") from None
        try:
            ad = parse_old_ad(text)
        except UserError as exc:
            self.log.warning("WARNING: failed to parse state from %s (%s); starting afresh", path, exc.message)
            return
        last = ad.get_value("LastPoll")
        self.last_poll = last if isinstance(last, int) and not isinstance(last, bool) else 0
        self.defrag.restore(ad)
        self.log.info("Last poll: %d (state from %s: %d drains sent, %d machines drained)", self.last_poll, path,
                      self.defrag.counters["DrainSuccesses"], self.defrag.counters["DrainedMachines"])

    def save_state(self) -> None:
        ad = ClassAd()
        ad["LastPoll"] = self.last_poll
        self.defrag.save(ad)
        path = self.policy.state_file
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path + ".new", "w") as f:
                f.write(ad.to_old())
            os.replace(path + ".new", path)
        except OSError as exc:
            self.log.error("failed to save state to %s: %s", path, exc.strerror)

    # -- the collector ---------------------------------------------------------------------
    async def _query(self, constraint: str, what: str) -> list[ClassAd] | None:
        try:
            wire = await self.send_to_collector("QUERY_ADS", ad_type="Machine", constraint=constraint)
        except WireError as exc:
            self.log.info("Couldn't fetch startd ads using constraint %s=%s: %s", what, constraint, exc)
            return None
        ads = [ClassAd.from_wire(w) for w in wire or []]
        self.log.debug("Got %d startd ads matching %s=%s", len(ads), what, constraint)
        return ads

    async def _machines(self, constraint: str, what: str) -> set[str] | None:
        ads = await self._query(constraint, what)
        if ads is None:
            return None
        return {machine_of(str(ad.get_value("Name") or "")) for ad in ads}

    def _ranked(self, ads: list[ClassAd]) -> list[ClassAd]:
        """Best DEFRAG_RANK first (ties in random order): a machine ranks as its best slot."""
        random.shuffle(ads)
        rank = self.policy.rank
        if rank is None:
            return ads

        def value(ad: ClassAd) -> float:
            v = ad.eval_expr(rank)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0

        return sorted(ads, key=value, reverse=True)

    # -- one poll --------------------------------------------------------------------------
    async def poll(self) -> None:
        p = self.policy
        now = int(time.time())
        previous, self.last_poll = self.last_poll, now
        self.save_state()  # a crash in this poll then errs on the side of draining too little
        to_drain, real = p.rate.to_drain(previous, now, p.interval)

        draining = await self._machines(p.draining_constraint, "<Machines currently draining>")
        whole = await self._machines(p.whole_constraint, "DEFRAG_WHOLE_MACHINE_EXPR")
        self.log.info("There are currently %d draining and %d whole machines.",
                      -1 if draining is None else len(draining), -1 if whole is None else len(whole))
        arrived = self.defrag.observe(draining, whole, now)
        if arrived:
            self.log.info("Newly drained machines: %s", ", ".join(arrived))

        cancelled = await self._cancel(now)
        try:
            await self._drain(to_drain, real, draining, whole, cancelled, now)
        finally:
            self.save_state()
            self.publish_soon()

    async def _cancel(self, now: int) -> set[str]:
        """Cancel the drains (this daemon's) of machines that meet DEFRAG_CANCEL_REQUIREMENTS."""
        cancelled: set[str] = set()
        constraint = self.policy.cancel_constraint
        if constraint is None:
            return cancelled
        ads = await self._query(constraint, "DEFRAG_CANCEL_REQUIREMENTS")
        for ad in self._ranked(ads or []):
            name = str(ad.get_value("Name") or "")
            machine = machine_of(name)
            if machine in cancelled:
                continue
            cancelled.add(machine)
            self.log.info("Cancel draining of %s.", name)
            try:
                address = Address.parse(str(ad.get_value("MyAddress") or ""))
                await asyncio.to_thread(startd_client.cancel_drain, address)
            except (UserError, ValueError) as exc:
                self.log.info("Unable to cancel draining on %s: %s", name, exc)
            self.defrag.cancel_sent(name, now)
        self.log.info("Cancelled draining of %d whole machines.", len(cancelled))
        return cancelled

    async def _drain(self, to_drain: int, real: float, draining: set[str] | None, whole: set[str] | None,
                     cancelled: set[str], now: int) -> None:
        p = self.policy
        why = p.reason_not_to_drain(to_drain, real, draining, whole)
        if why is not None:
            self.log.info("Doing nothing, because %s.", why)
            return
        assert whole is not None
        self.log.info("Looking for %d machines to drain.", to_drain)
        ads = await self._query(p.candidate_constraint, "DEFRAG_REQUIREMENTS")
        if ads is None:
            self.log.info("Doing nothing, because the query to select machines matching DEFRAG_REQUIREMENTS failed.")
            return
        done: set[str] = set()
        drained = 0
        for ad in self._ranked(ads):
            name = str(ad.get_value("Name") or "")
            machine = machine_of(name)
            if machine in cancelled or machine in done or machine in whole:
                continue
            if await self.drain_this(ad, now):
                done.add(machine)
                drained += 1
                if drained >= to_drain:
                    self.log.info("Drained maximum number of machines allowed in this cycle (%d).", to_drain)
                    break
        self.log.info("Drained %d machines (wanted to drain %d machines).", drained, to_drain)

    def check_expr(self, ad: ClassAd) -> str:
        """The drain's check: the startd begins it only if it costs about what it advertised."""
        kind = "Graceful" if self.policy.schedule == "graceful" else "Quick"
        completion = _int(ad.get_value(f"ExpectedMachine{kind}DrainingCompletion"))
        badput = _int(ad.get_value(f"ExpectedMachine{kind}DrainingBadput"))
        return (f"ExpectedMachine{kind}DrainingCompletion <= {completion + NEGLIGIBLE_DEADLINE_SLIPPAGE} && "
                f"ExpectedMachine{kind}DrainingBadput <= {int(BADPUT_GROWTH_TOLERANCE * badput) + NEGLIGIBLE_BADPUT}")

    async def drain_this(self, ad: ClassAd, now: int) -> bool:
        p = self.policy
        name = str(ad.get_value("Name") or "")
        self.log.info("Initiating %s draining of %s.", p.schedule, name)
        request: dict[str, Any] = {"how_fast": p.schedule, "reason": p.drain_reason, "on_completion": "resume",
                                   "check": self.check_expr(ad)}
        if p.start_expr:
            request["start"] = p.start_expr
        ok = True
        try:
            address = Address.parse(str(ad.get_value("MyAddress") or ""))
            reply = await asyncio.to_thread(startd_client.drain, address, **request)
            self.log.info("Draining of %s began (request id %s).", name, reply.get("request_id", "?"))
        except (UserError, ValueError) as exc:
            self.log.info("Failed to send request to drain %s: %s", name, exc)
            ok = False
        self.defrag.drain_sent(name, p.schedule, ok, now)
        return ok

    # -- the ad ----------------------------------------------------------------------------
    def make_ad(self) -> ClassAd:
        ad = self.base_ad("Defrag")
        ad["DaemonLastReconfigTime"] = self.last_reconfig
        self.defrag.publish(ad, time.time())
        return ad


def _int(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
