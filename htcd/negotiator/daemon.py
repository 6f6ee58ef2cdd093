"""The negotiator daemon: a cycle every NEGOTIATOR_INTERVAL and soon after a RESCHEDULE."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from htcd.classad import ClassAd
from htcd.daemon import Daemon
from htcd.errors import UserError
from htcd.negotiator.matchmaker import MODIFY_REQUEST, Pool, Slot
from htcd.wire.client import AsyncConnection
from htcd.wire.errors import WireError
from htcd.wire.server import Handler, Request


class Negotiator(Daemon):
    subsystem = "NEGOTIATOR"
    ad_type = "Negotiator"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.match_log = self.open_log("MATCH")
        self.wake = asyncio.Event()
        self.last_cycle_start = 0.0
        self.last_cycle_duration = 0.0
        self.cycles = 0
        self.matches_total = 0
        self.last_cycle: dict[str, int] = {}
        self._rejections = 0

    def default_name(self) -> str:
        return self.config.get("NEGOTIATOR_NAME") or self.hostname

    def command_handlers(self) -> dict[str, Handler]:
        return {"RESCHEDULE": self.cmd_reschedule}

    async def cmd_reschedule(self, req: Request) -> str:
        self.wake.set()
        return "ok"

    async def startup(self) -> None:
        self.spawn(self._cycle_loop(), "negotiation loop")

    async def _cycle_loop(self) -> None:
        """Cycle every NEGOTIATOR_INTERVAL, or on RESCHEDULE, but never more often than
        NEGOTIATOR_CYCLE_DELAY."""
        while not self.stopping.is_set():
            interval = max(1, self.knob_int("NEGOTIATOR_INTERVAL", 60))
            wait = self.last_cycle_start + interval - time.time()
            if wait > 0:
                try:
                    await asyncio.wait_for(self.wake.wait(), wait)
                except TimeoutError:
                    pass
            if self.stopping.is_set():
                return
            delay = self.last_cycle_start + self.knob_int("NEGOTIATOR_CYCLE_DELAY", 20) - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            self.wake.clear()
            try:
                await self.negotiate()
            except (WireError, UserError) as exc:
                self.log.info("negotiation cycle failed: %s", exc)
            except Exception:
                self.log.exception("negotiation cycle failed")

    async def negotiate(self) -> int:
        self.last_cycle_start = time.time()
        self.log.info("---------- Started Negotiation Cycle ----------")
        submitters = [ClassAd.from_wire(w) for w in await self.send_to_collector(
            "QUERY_ADS", ad_type="Submitter", constraint="IdleJobs > 0")]
        slots = await self._unclaimed_slots()
        self.log.info("Phase 1:  Obtaining ads from collector ...")
        self.log.info("  Getting startd private ads ...")
        self.log.info("Got ads: %d submitters, %d unclaimed slots", len(submitters), len(slots.slots))
        made = 0
        self._rejections = 0
        candidates = len(slots.slots)
        for sub in sorted(submitters, key=lambda a: str(a.get_value("Name", ""))):
            if all(s.taken for s in slots.slots):
                break
            made += await self._negotiate_with(sub, slots)
        self.cycles += 1
        self.matches_total += made
        end = time.time()
        self.last_cycle_duration = end - self.last_cycle_start
        # HTCondor's per-cycle figures (the ...0 attributes of the Negotiator ad: the latest cycle)
        self.last_cycle = {
            "LastNegotiationCycleEnd0": int(end),
            "LastNegotiationCycleMatches0": made,
            "LastNegotiationCycleRejections0": self._rejections,
            "LastNegotiationCycleCandidateSlots0": candidates,
            "LastNegotiationCycleActiveSubmitterCount0": len(submitters),
            "LastNegotiationCycleNumSchedulers0": len({str(a.get_value("ScheddIpAddr", "")) for a in submitters}),
            "LastNegotiationCycleNumIdleJobs0": sum(int(a.get_value("IdleJobs", 0) or 0) for a in submitters),
        }
        self.log.info("---------- Finished Negotiation Cycle ----------")
        return made

    async def _unclaimed_slots(self) -> Pool:
        public = await self.send_to_collector("QUERY_ADS", ad_type="Machine", constraint='State == "Unclaimed"')
        private = await self.send_to_collector("QUERY_PRIVATE_ADS", ad_type="Machine",
                                               constraint='State == "Unclaimed"')
        claims = {p["name"]: (p["private"] or {}).get("ClaimId") for p in private}
        pool = Pool(modify={res: self.config.get(f"MODIFY_REQUEST_EXPR_REQUEST{res.upper()}") or default
                            for res, default in MODIFY_REQUEST.items()})
        for wire in public:
            ad = ClassAd.from_wire(wire)
            claim = claims.get(ad.get_value("Name"))
            if claim:
                pool.slots.append(Slot(ad, str(claim)))
        return pool

    async def _negotiate_with(self, sub: ClassAd, pool: Pool) -> int:
        name = str(sub.get_value("Name", ""))
        schedd = str(sub.get_value("ScheddIpAddr", ""))
        self.log.info("  Negotiating with %s at %s", name, schedd)
        conn = await AsyncConnection.open(schedd)
        try:
            requests = await conn.call("NEGOTIATE", submitter=name, slot_ads=pool.sample())
            matches = []
            for req in requests:
                job = ClassAd.from_wire(req["ad"])
                for _ in range(int(req.get("count") or 1)):  # one request stands for an autocluster
                    slot = pool.best_for(job)
                    if slot is None:
                        self._rejections += 1  # HTCondor counts a request it could not match
                        break
                    slot_name = slot.ad.get_value("Name")
                    matches.append({"id": req["id"], "autocluster": req.get("autocluster"),
                                    "slot_ad": slot.ad.to_wire(), "claim_id": slot.claim_id})
                    pool.take(slot, job)  # a partitionable slot stays on offer with what is left
                    self.match_log.info("      Matched %s %s %s preempting none %s %s", req["id"], name, schedd,
                                        slot.ad.get_value("StartdIpAddr"), slot_name)
            if matches:
                await conn.call("MATCHES", matches=matches)
            self.log.info("    Request list for %s: %d requests, %d matched", name, len(requests), len(matches))
            return len(matches)
        finally:
            await conn.close()

    def make_ad(self) -> ClassAd:
        ad = self.base_ad("Negotiator")
        ad["LastNegotiationCycleTime0"] = int(self.last_cycle_start)
        ad["LastNegotiationCycleDuration0"] = round(self.last_cycle_duration, 3)
        for k, v in self.last_cycle.items():
            ad[k] = v
        ad["NegotiationCycles"] = self.cycles
        ad["MatchesTotal"] = self.matches_total
        return ad
