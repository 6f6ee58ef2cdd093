"""The startd: advertises slots, accepts claims from matches, runs jobs through starters."""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from htcd.classad import ClassAd, is_true, parse_expr
from htcd.daemon import Daemon
from htcd.errors import UserError
from htcd.plugins import PluginManager
from htcd.startd import machine
from htcd.startd.starter import Starter, clean_orphans
from htcd.universe import Universe
from htcd.wire.errors import CommandError
from htcd.wire.server import Handler, Request


@dataclass
class Slot:
    slot_id: int
    name: str
    cpus: int
    memory: int
    disk: int
    state: str = "Unclaimed"
    activity: str = "Idle"
    entered_state: int = field(default_factory=lambda: int(time.time()))
    entered_activity: int = field(default_factory=lambda: int(time.time()))
    claim_id: str = ""
    claim: dict[str, Any] = field(default_factory=dict)
    starter: Starter | None = None

    def set_state(self, state: str, activity: str) -> None:
        now = int(time.time())
        if state != self.state:
            self.state, self.entered_state = state, now
        if activity != self.activity:
            self.activity, self.entered_activity = activity, now


class Startd(Daemon):
    subsystem = "STARTD"
    ad_type = "Machine"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plugins = PluginManager(self.log)
        self.universes: dict[str, Universe] = {}
        self.machine: dict[str, object] = {}
        self.slots: list[Slot] = []
        self._claim_seq = 0

    def command_handlers(self) -> dict[str, Handler]:
        return {"REQUEST_CLAIM": self.cmd_request_claim, "ACTIVATE_CLAIM": self.cmd_activate_claim,
                "DEACTIVATE_CLAIM": self.cmd_deactivate_claim, "RELEASE_CLAIM": self.cmd_release_claim}

    # -- start-up ------------------------------------------------------------------------
    async def startup(self) -> None:
        execute = self.config.get("EXECUTE") or "."
        n = clean_orphans(execute, self.log)
        if n:
            self.log.info("cleaned %d sandboxes left by an earlier startd", n)
        self.plugins.load_entry_points()
        self.universes = self.plugins.universes()
        self.log.info("universes offered: %s", ", ".join(sorted(self.universes)) or "none")
        self.machine = machine.detect(self.config)
        self.slots = self._make_slots()
        self.log.info("%d slots, %s cpus, %s MB", len(self.slots), self.machine["TotalCpus"],
                      self.machine["TotalMemory"])
        for slot in self.slots:
            self._new_claim_id(slot)

    def _make_slots(self) -> list[Slot]:
        """Static slots, one per CPU, memory and disk divided evenly (HTCondor's default)."""
        cpus = int(self.machine["TotalCpus"])  # type: ignore[call-overload]
        n = max(1, self.config.get_int("NUM_SLOTS", cpus))
        mem = int(self.machine["TotalMemory"]) // n  # type: ignore[call-overload]
        disk = int(self.machine["TotalDisk"]) // n  # type: ignore[call-overload]
        return [Slot(i, f"slot{i}@{self.hostname}", max(1, cpus // n), mem, disk) for i in range(1, n + 1)]

    def _new_claim_id(self, slot: Slot) -> None:
        self._claim_seq += 1
        slot.claim_id = f"{self.server.address}#{self.start_time}#{self._claim_seq}#{secrets.token_hex(16)}"

    def reconfigured(self) -> None:
        self.publish_soon()  # START, RANK and friends are read when ads are made

    # -- ads -----------------------------------------------------------------------------
    def slot_ad(self, slot: Slot) -> ClassAd:
        ad = self.base_ad("Machine")
        for k, v in self.machine.items():
            ad[k] = v
        for k, v in self.plugins.machine_attributes(self.config).items():
            ad[k] = v
        for u in self.universes.values():
            for k, v in u.machine_attributes().items():
                ad[k] = v
        start = self.config.get("START") or "TRUE"
        try:
            ad["START"] = parse_expr(start)
        except UserError as exc:
            self.log.error("START does not parse (%s): advertising START = FALSE", exc)
            ad["START"] = False
        ad.set_expr("Requirements", "START")
        ad.set_expr("Rank", self.config.get("RANK") or "0")
        ad["Name"] = slot.name
        ad["SlotID"] = slot.slot_id
        ad["SlotType"] = "Static"
        ad["Cpus"], ad["Memory"], ad["Disk"] = slot.cpus, slot.memory, slot.disk
        ad["TotalSlots"] = len(self.slots)
        ad["State"], ad["Activity"] = slot.state, slot.activity
        ad["EnteredCurrentState"], ad["EnteredCurrentActivity"] = slot.entered_state, slot.entered_activity
        ad["LoadAvg"] = ad["CondorLoadAvg"] = 1.0 if slot.activity == "Busy" else 0.0
        ad["TotalLoadAvg"] = machine.load_average()
        ad["KeyboardIdle"] = ad["ConsoleIdle"] = int(time.time()) - self.start_time
        ad["StartdIpAddr"] = str(self.server.address)
        ad["UidDomain"] = self.uid_domain
        ad["FileSystemDomain"] = self.config.get("FILESYSTEM_DOMAIN") or self.hostname
        ad["HasFileTransfer"] = True
        ad["StarterAbilityList"] = ",".join(sorted(self.universes))
        for k, v in slot.claim.items():
            ad[k] = v
        return ad

    async def publish(self) -> None:
        for slot in self.slots:
            if not await self.advertiser.update("Machine", self.slot_ad(slot).to_wire(),
                                                private={"Name": slot.name, "ClaimId": slot.claim_id}):
                return

    async def invalidate(self) -> None:
        for slot in self.slots:
            await self.advertiser.invalidate("Machine", slot.name)

    # -- claims --------------------------------------------------------------------------
    def _slot_for(self, claim_id: str) -> Slot:
        for slot in self.slots:
            if claim_id and secrets.compare_digest(slot.claim_id, claim_id):
                return slot
        raise CommandError("no slot holds that claim id (stale match, or the claim was released)", "BAD_CLAIM")

    async def cmd_request_claim(self, req: Request) -> dict[str, Any]:
        slot = self._slot_for(str(req.require("claim_id")))
        if slot.state != "Unclaimed":
            raise CommandError(f"{slot.name} is {slot.state}, not Unclaimed", "BUSY")
        job = ClassAd.from_wire(req.require("job_ad"))
        ad = self.slot_ad(slot)
        if not self._start_allows(ad, job):
            raise CommandError(f"{slot.name}: START is not true for this job", "REFUSED")
        slot.claim = {"RemoteOwner": str(job.get_value("Owner", "")), "RemoteUser": str(req.identity),
                      "ClientMachine": str(req.arg("schedd_host", "")),
                      "PublicClaimId": slot.claim_id.split("#")[0] + "#" + str(self._claim_seq)}
        slot.set_state("Claimed", "Idle")
        claim_id = slot.claim_id
        req.conn.on_close.append(lambda: self._claim_connection_closed(slot, claim_id))
        self.log.info("%s claimed by %s for %s", slot.name, req.identity, slot.claim["RemoteOwner"])
        self.publish_soon()
        return {"slot_ad": self.slot_ad(slot).to_wire()}

    @staticmethod
    def _start_allows(slot_ad: ClassAd, job: ClassAd) -> bool:
        return is_true(slot_ad.eval("START", target=job))

    async def cmd_activate_claim(self, req: Request) -> dict[str, Any]:
        slot = self._slot_for(str(req.require("claim_id")))
        if slot.state != "Claimed" or slot.activity != "Idle":
            raise CommandError(f"{slot.name} is {slot.state}/{slot.activity}, cannot start a job", "BUSY")
        job = ClassAd.from_wire(req.require("job_ad"))
        uname = self._universe_name(job)
        universe = self.universes.get(uname)
        if universe is None:
            raise CommandError(f"{slot.name} does not offer the {uname} universe", "NO_UNIVERSE")
        slot.starter = Starter(job, slot.name, slot.slot_id, self.config.get("EXECUTE") or ".", universe,
                               self.open_log("STARTER", f".slot{slot.slot_id}"), files=dict(req.arg("files") or {}))
        slot.claim["JobId"] = f"{job.get_value('ClusterId')}.{job.get_value('ProcId')}"
        slot.claim["JobStart"] = int(time.time())
        slot.set_state("Claimed", "Busy")
        self.publish_soon()
        starter = slot.starter
        run = asyncio.ensure_future(starter.run())
        gone = asyncio.ensure_future(req.conn.closed_by_peer())
        try:
            await asyncio.wait({run, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not run.done():
                self.log.info("%s: the shadow went away; killing the job", slot.name)
                starter.kill()
            return await run
        finally:
            gone.cancel()
            slot.starter = None
            slot.claim.pop("JobId", None)
            slot.claim.pop("JobStart", None)
            if slot.state == "Claimed":
                slot.set_state("Claimed", "Idle")
            self.publish_soon()

    @staticmethod
    def _universe_name(job: ClassAd) -> str:
        names = {5: "vanilla", 7: "scheduler", 12: "local"}
        if job.get_value("WantDocker") is True:
            return "docker"
        return names.get(int(job.get_value("JobUniverse", 5) or 5), "vanilla")

    def _claim_connection_closed(self, slot: Slot, claim_id: str) -> None:
        """The schedd's claim connection ended: without a lease, the claim ends with it."""
        if slot.claim_id == claim_id and slot.state == "Claimed":
            self.release(slot, "the schedd's claim connection closed")

    async def cmd_deactivate_claim(self, req: Request) -> str:
        slot = self._slot_for(str(req.require("claim_id")))
        if slot.starter is not None:
            self.log.info("killing the job on %s at the request of %s", slot.name, req.identity)
            slot.starter.kill()
        return "ok"

    async def cmd_release_claim(self, req: Request) -> str:
        slot = self._slot_for(str(req.require("claim_id")))
        self.release(slot, f"released by {req.identity}")
        return "ok"

    def release(self, slot: Slot, why: str) -> None:
        if slot.starter is not None:
            slot.starter.kill()
        slot.claim = {}
        slot.set_state("Unclaimed", "Idle")
        self._new_claim_id(slot)
        self.log.info("%s unclaimed: %s", slot.name, why)
        self.publish_soon()

    async def shutdown(self, fast: bool) -> None:
        """Kill running jobs; their shadows hear of it through ACTIVATE_CLAIM's reply."""
        busy = [s for s in self.slots if s.starter is not None]
        for slot in busy:
            self.log.info("shutting down: killing the job on %s", slot.name)
            slot.starter.kill()  # type: ignore[union-attr]
        deadline = time.monotonic() + 10
        while any(s.starter is not None for s in self.slots) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
