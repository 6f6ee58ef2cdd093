"""The startd: advertises its slots, runs HTCondor's slot state machine, accepts claims from matches,
runs jobs through starters, drains, and shuts down peacefully, gracefully or fast.

Every transition is logged in StartLog with what caused it.  The policy is evaluated every
``POLLING_INTERVAL`` seconds and at once on every event (claim, activation, job exit, reconfig,
drain, a STARTD_CRON result).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import secrets
import sys
import time
from typing import Any

from htcd.classad import ClassAd, parse_expr
from htcd.daemon import Daemon
from htcd.errors import UserError
from htcd.plugins import get_plugin_manager
from htcd.startd import layout, machine, resources, states
from htcd.startd.ads import slot_ad
from htcd.startd.claims import Claims, JobRun, job_lease
from htcd.startd.cron import Cron, load_jobs
from htcd.startd.draining import Draining
from htcd.startd.inside import Inside
from htcd.startd.slot import (
    BUSY,
    CLAIMED,
    DELETE,
    DRAINED,
    DYNAMIC,
    IDLE,
    KILLING,
    MATCHED,
    OWNER,
    PARTITIONABLE,
    PREEMPTING,
    RETIRING,
    STATIC,
    SUSPENDED,
    UNCLAIMED,
    VACATING,
    Claim,
    PendingClaim,
    Slot,
    new_claim_id,
)
from htcd.startd.states import Machine, Policy, Transition, decide
from htcd.starter import assigned as assigned_env
from htcd.starter.starter import Starter, clean_orphans
from htcd.transfer import outgoing, streams
from htcd.transfer.paths import TransferError
from htcd.universe import Universe
from htcd.wire.errors import CommandError
from htcd.wire.server import Handler, Request

# MODIFY_REQUEST_EXPR_* defaults: how a dynamic slot's size is rounded up from the job's request.
MODIFY_REQUEST = {"Cpus": "quantize(RequestCpus, {1})", "Memory": "quantize(RequestMemory, {128})",
                  "Disk": "quantize(RequestDisk, {Target.DiskQuantum ?: 1024})"}
# A slot offering one of these universes says so the way HTCondor's slots do (its plugin may add more).
UNIVERSE_HAS = {"docker": "HasDocker", "java": "HasJava", "vm": "HasVM", "container": "HasContainer"}
OUTPUT_SHUTDOWN_WAIT = 60.0  # seconds a peaceful or graceful shutdown waits for streamed output to be fetched


class Startd(Daemon):
    subsystem = "STARTD"
    ad_type = "Machine"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # the command handlers' holders first: Daemon.__init__ registers the commands (they keep
        # only this reference until they run)
        self.claims = Claims(self)
        self.draining = Draining(self)
        self.inside = Inside(self)
        # the slots the pending publish_soon sends (None: all) and whether one was asked for since
        # the last round began
        self._publish_only: set[str] | None = set()
        self._publish_wanted = False
        super().__init__(*args, **kwargs)
        self.plugins = get_plugin_manager(self.config, self.log)
        self.universes: dict[str, Universe] = {}
        # custom resources (GPUs...): their inventory commands run once, here, as in HTCondor
        self.resources = resources.read(self.config)
        self._resource_knobs = resources.knob_values(self.config)
        for res in self.resources.values():  # a bad ENVIRONMENT_FOR_Assigned<Name> stops the startd here
            knob = f"ENVIRONMENT_FOR_Assigned{res.name}"
            try:
                assigned_env.parse_env_specs(self.config.get(knob) or "", knob)
            except UserError as exc:
                where = self.config.where(knob)
                raise UserError(exc.message, source=where[0] if where else None,
                                line=where[1] if where else None) from None
        self.machine = {**machine.detect(self.config), **self._resource_attrs()}
        # a layout that does not fit stops the startd here, before it listens, with file:line
        self.specs = layout.layout(self.config, machine.totals(self.config),
                                   {r: res.count for r, res in self.resources.items()})
        self.slots: list[Slot] = []  # static and partitionable; dynamic ones are their children
        self.slot_policy = Policy.from_config(self.config, self.log)  # START, RANK, PREEMPT...
        self.match_timeout = self.read_match_timeout()
        self.provided: dict[str, object] = {}
        self.cron_attrs: dict[str, dict[str, str]] = {}
        self.cron = Cron(self.log, self._cron_output, self._cron_condition)
        self.outgoing = outgoing.Store(self.log)  # jobs' output waiting for FETCH_OUTPUT
        self.watch_start = time.time()
        self.idle = (0, 0)
        self.total_load = machine.load_average()
        self.shutdown_mode = ""
        self.after_exit = ""  # "restart" when a drain's -restart-on-completion asks for it
        self._claim_seq = 0
        self._warned: set[str] = set()
        self._eval_scheduled = False
        self._machine_ad: ClassAd | None = None

    def command_handlers(self) -> dict[str, Handler]:
        claims, draining = self.claims, self.draining
        return {"REQUEST_CLAIM": self.cmd_request_claim, "MATCH_INFO": claims.cmd_match_info,
                "ACTIVATE_CLAIM": self.cmd_activate_claim,
                "DEACTIVATE_CLAIM": claims.cmd_deactivate_claim, "RELEASE_CLAIM": self.cmd_release_claim,
                "ALIVE": claims.cmd_alive, "RECONNECT_JOB": claims.cmd_reconnect_job,
                "FETCH_OUTPUT": self.cmd_fetch_output, "CHECKPOINT_STORED": claims.cmd_checkpoint_stored,
                "VACATE_CLAIMS": claims.cmd_vacate_claims,
                "DRAIN_JOBS": draining.cmd_drain_jobs, "CANCEL_DRAIN_JOBS": draining.cmd_cancel_drain_jobs,
                "STARTER_PEEK": self.inside.cmd_starter_peek, "CHIRP": self.inside.cmd_chirp,
                "SSH_TO_JOB": self.inside.cmd_ssh_to_job}

    # -- start-up ------------------------------------------------------------------------
    async def startup(self) -> None:
        execute = self.config.get("EXECUTE") or "."
        n = clean_orphans(execute, self.log)
        if n:
            self.log.info("cleaned %d sandboxes left by an earlier startd", n)
        n = outgoing.clean_orphans(execute)
        if n:
            self.log.info("removed %d file transfer staging directories left by an earlier startd", n)
        self.plugins.load_entry_points()
        self.universes = self.plugins.universes()
        self.log.info("universes offered: %s", ", ".join(sorted(self.universes)) or "none")
        self._configure_universes()
        for uname, u in self.universes.items():  # e.g. containers an earlier startd left running
            try:
                n = await asyncio.to_thread(u.clean_orphans)
            except Exception:  # a plugin's bug must not stop the startd
                self.log.exception("the %s universe failed to clean up after an earlier startd", uname)
                continue
            if n:
                self.log.info("the %s universe removed %d leftovers of an earlier startd", uname, n)
        self.provided = self.plugins.machine_attributes(self.config)
        self._machine_ad = None
        self.slots = self._make_slots()
        for slot in self.slots:
            kind = "partitionable " if slot.kind == PARTITIONABLE else ""
            self.log.info("%s: %s%d cpus, %d MB memory, %d KB disk%s", slot.name, kind, slot.cpus, slot.memory,
                          slot.disk, self._custom_text(slot))
        self.idle = machine.idle_times(self.config, self.watch_start)
        self.cron.start(load_jobs(self.config, self.log))
        self.evaluate_all()
        self.every(self.polling_interval, self._poll, "policy", first=self.polling_interval())
        self.every(self.claims.lease_check_interval, self._check_leases, "claim leases",
                   first=self.claims.lease_check_interval())

    def _make_slots(self) -> list[Slot]:
        """The slots of the layout; ids of custom resources go to them in order (slot1 the first ones)."""
        slots = []
        unassigned = {r: list(res.ids) for r, res in self.resources.items() if res.ids is not None}
        for i, spec in enumerate(self.specs, start=1):
            kind = PARTITIONABLE if spec.partitionable else STATIC
            slot = Slot(i, f"slot{i}@{self.hostname}", spec.cpus, spec.memory, spec.disk, kind=kind,
                        type_id=spec.type_id, custom=dict(spec.custom))
            for r, ids in unassigned.items():
                n = spec.custom.get(r, 0)
                slot.ids[r], unassigned[r] = ids[:n], ids[n:]
            slot.offer_id = self._new_id()
            slots.append(slot)
        return slots

    def _resource_attrs(self) -> dict[str, object]:
        """The machine-wide attributes of the custom resources: Total<Name>, Detected<Name>, what
        their inventory reported, and MachineResources naming them all."""
        attrs: dict[str, object] = {}
        names = []
        for res in self.resources.values():
            for attr, text in res.attrs.items():
                attrs[attr] = parse_expr(text)
            attrs[f"Total{res.name}"] = res.count
            attrs[f"Detected{res.name}"] = res.detected
            if res.offline:
                attrs[f"Offline{res.name}"] = ",".join(res.offline)
            names.append(res.name)
        if names:
            attrs["MachineResources"] = " ".join(["Cpus", "Memory", "Disk", *names])
        return attrs

    def _custom_text(self, slot: Slot) -> str:
        parts = []
        for r, n in slot.custom.items():
            ids = slot.ids.get(r)
            parts.append(f", {n} {self.resources[r].name}" + (f" ({','.join(ids)})" if ids else ""))
        return "".join(parts)

    def _new_id(self) -> str:
        self._claim_seq += 1
        return new_claim_id(str(self.server.address), self.start_time, self._claim_seq)

    async def _check_leases(self) -> None:
        self.claims.check_claim_leases()

    def polling_interval(self) -> float:
        return max(0.1, self.config.get_float("POLLING_INTERVAL", 5.0))

    def _configure_universes(self) -> None:
        for uname, u in self.universes.items():
            try:
                u.configure(self.config)
            except Exception:  # a plugin's bug must not stop the startd
                self.log.exception("the %s universe failed to read its configuration", uname)

    def read_match_timeout(self) -> float:
        return max(0.0, self.config.get_float("MATCH_TIMEOUT", 120.0))

    def reconfigured(self) -> None:
        self.slot_policy = Policy.from_config(self.config, self.log)
        self.match_timeout = self.read_match_timeout()
        self._configure_universes()
        jobs = load_jobs(self.config, self.log)
        if jobs != self.cron.jobs:
            self.spawn(self.cron.restart(jobs), "STARTD_CRON restart")
        self._warned.clear()
        changed = sorted(k for k in {*self._resource_knobs, *resources.knob_values(self.config)}
                         if self._resource_knobs.get(k) != self.config.get(k))
        if changed:
            self.log.warning("%s changed: custom resources change only when the startd restarts (htcd restart "
                             "-daemon startd)", ", ".join(changed))
        self._machine_ad = None
        self.evaluate_all()
        self.publish_soon()

    def warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.log.error("%s", message)

    # -- slots and ads ---------------------------------------------------------------------
    def all_slots(self) -> list[Slot]:
        out = []
        for slot in self.slots:
            out.append(slot)
            out.extend(slot.children)
        return out

    def slot_count(self) -> int:
        return len(self.slots) + sum(len(s.children) for s in self.slots)

    def slot_load(self, slot: Slot) -> float:
        return slot.condor_load + slot.owner_load

    def total_condor_load(self) -> float:
        return sum(s.condor_load for s in self.all_slots())

    def machine_ad(self) -> ClassAd:
        """What every slot ad has in common (machine facts, provider, universe and STARTD_CRON
        attributes), built once and shared by every ad until one of them changes."""
        if self._machine_ad is None:
            ad = ClassAd()
            for k, v in self.machine.items():
                ad[k] = v
            for k, v in self.provided.items():
                ad[k] = v
            offered = []
            for uname, u in self.universes.items():
                for k, v in u.machine_attributes().items():
                    ad[k] = v
                if not self._universe_available(uname, u):
                    continue  # e.g. no engine answers: its jobs must not match here
                offered.append(uname)
                has = UNIVERSE_HAS.get(uname)  # the attribute condor_submit's Requirements test
                if has:
                    ad[has] = True
            ad["StarterAbilityList"] = ",".join(sorted(offered))
            for attrs in self.cron_attrs.values():
                for k, text in attrs.items():
                    ad.set_expr(k, text)
            self._machine_ad = ad
        return self._machine_ad

    def _universe_available(self, uname: str, universe: Universe) -> bool:
        try:
            return bool(universe.available())
        except Exception:  # a plugin's bug must not stop the startd: the universe is not offered
            self.log.exception("the %s universe failed to say whether it is available", uname)
            return False

    def own_ads(self) -> list[ClassAd]:
        return [slot_ad(self, s) for s in self.all_slots()]

    def make_ad(self) -> ClassAd | None:
        """The first slot's ad: what STARTD.DAEMON_SHUTDOWN is evaluated against."""
        return slot_ad(self, self.slots[0]) if self.slots else None

    async def publish(self, only: set[str] | None = None) -> None:
        """Send the slots' ads: every slot, the machine's attributes read again (the periodic
        update, and any change not of one slot); or only the slots named in ``only``."""
        if only is None:
            self.provided = self.plugins.machine_attributes(self.config)
            self._machine_ad = None
        for slot in self.all_slots():
            if only is not None and slot.name not in only:
                continue
            if not await self.advertiser.update("Machine", slot_ad(self, slot).to_wire(),
                                                private={"Name": slot.name, "ClaimId": slot.offer_id}):
                return

    def publish_soon(self, *slots: Slot) -> None:
        """Publish shortly, a burst of changes coalesced into one round: only ``slots`` (and their
        partitionable slots, whose ads list their children's states) when every change of the
        burst named its slots -- a job's start or end, a few times per job -- else every slot.
        The periodic update still sends every slot's ad."""
        if slots and self._publish_only is not None:
            self._publish_only.update(s.name for s in slots)
            self._publish_only.update(s.parent.name for s in slots if s.parent is not None)
        else:
            self._publish_only = None
        self._publish_wanted = True
        if self._publishing is not None and not self._publishing.done():
            return

        async def later() -> None:
            while self._publish_wanted:  # a change made during a round gets a round of its own
                await asyncio.sleep(0.05)
                only, self._publish_only, self._publish_wanted = self._publish_only, set(), False
                await self.publish(only)

        self._publishing = self.spawn(later(), "publish")

    async def invalidate(self) -> None:
        for slot in self.all_slots():
            await self.advertiser.invalidate("Machine", slot.name)

    def _cron_condition(self, text: str) -> bool:
        """STARTD_CRON_<name>_CONDITION against the machine's attributes (no slot's own), as HTCondor."""
        try:
            return self.machine_ad().eval_expr(parse_expr(text)) is True
        except UserError as exc:
            self.warn_once(f"cron condition {text}", f"a STARTD_CRON condition {text} does not parse ({exc.message}); "
                                                     "its job is not run")
            return False

    def _cron_output(self, job: str, attrs: dict[str, str]) -> None:
        self.cron_attrs.setdefault(job, {}).update(attrs)
        self._machine_ad = None
        self.evaluate_soon()
        self.publish_soon()

    # -- the state machine -------------------------------------------------------------------
    async def _poll(self) -> None:
        self._sample_load()
        self.idle = machine.idle_times(self.config, self.watch_start)
        self.draining.estimate()
        if self.evaluate_all():
            self.publish_soon()

    def _sample_load(self) -> None:
        now = time.monotonic()
        for slot in self.all_slots():
            pid = slot.starter.pid if slot.starter is not None else None
            if pid is None or slot.activity == SUSPENDED:
                slot.condor_load = 0.0
                slot.cpu_seen = (0.0, 0.0)
                continue
            cpu = slot.starter.cpu_seconds() if slot.starter is not None else 0.0  # its cgroup, else its tree
            t0, c0 = slot.cpu_seen
            if t0 > 0 and now > t0:
                slot.condor_load = max(0.0, (cpu - c0) / (now - t0))
            slot.cpu_seen = (now, cpu)
        self.total_load = machine.load_average()
        owner = max(0.0, self.total_load - self.total_condor_load())
        for slot in self.all_slots():  # the load not from jobs fills the slots in order, as HTCondor's does
            room = max(0.0, (slot.left()[0] if slot.kind == PARTITIONABLE else slot.cpus) - slot.condor_load)
            slot.owner_load = min(owner, room)
            owner -= slot.owner_load

    def context(self) -> Machine:
        all_drained = all(s.state == DRAINED for s in self.slots) and not any(s.children for s in self.slots)
        return Machine(now=time.time(), drain=self.draining.current, all_drained=all_drained,
                       shutdown=self.shutdown_mode, drain_ended=self.draining.ended, match_timeout=self.match_timeout)

    def evaluate_soon(self) -> None:
        if not self._eval_scheduled:
            self._eval_scheduled = True

            def run() -> None:
                self._eval_scheduled = False
                if self.evaluate_all():
                    self.publish_soon()

            asyncio.get_running_loop().call_soon(run)

    def evaluate_all(self) -> bool:
        changed = False
        for slot in list(self.all_slots()):
            changed |= self.step(slot)
        changed |= self.draining.progress()
        return changed

    def step(self, slot: Slot) -> bool:
        """Apply transitions to ``slot`` until its policy says it stays."""
        changed = False
        for _ in range(10):
            if slot.state == DELETE:
                break
            m = self.context()
            ad = slot_ad(self, slot, policy=True)
            if slot.starter is not None and slot.retire_why:
                slot.retire_end = states.retirement_end(slot, ad, self.slot_policy, m)
            t = decide(slot, ad, self.slot_policy, m)
            if t is None:
                break
            self.apply(slot, t)
            changed = True
        return changed

    def apply(self, slot: Slot, t: Transition) -> None:
        """Carry one transition out: log it, signal the job, hand the claim on."""
        now = time.time()
        self.log.info("%s: Changing state and activity: %s/%s -> %s/%s (%s)", slot.short_name, slot.state,
                      slot.activity, t.state, t.activity, t.reason)
        starter = slot.starter
        if t.retire_why is not None:
            slot.retire_why = t.retire_why
        if slot.activity == SUSPENDED and t.activity != SUSPENDED and starter is not None:
            slot.suspended_total += now - slot.suspended_at
            starter.resume()
        if t.activity == SUSPENDED and slot.activity != SUSPENDED and starter is not None:
            slot.suspended_at = now
            starter.suspend()
        if t.state == PREEMPTING and slot.state != PREEMPTING:
            slot.preempt_reason = t.reason
            if starter is not None:
                slot.evicting = t.reason
                slot.preemptions += 1
                if slot.retire_why == "rank":
                    slot.rank_preemptions += 1
        if t.hold is not None and starter is not None and starter.hold is None:
            starter.hold = t.hold  # WANT_HOLD: the job's end is a hold, not a requeue
        if t.state == PREEMPTING and starter is not None and t.activity != slot.activity:
            if t.activity == VACATING:
                starter.vacate()
            elif t.activity == KILLING:
                starter.kill()
        if t.end_claim:
            self._end_claim(slot, t, now)
        else:
            slot.set_state(t.state, t.activity, now)
        if slot.state not in (CLAIMED, PREEMPTING) or (slot.state == CLAIMED and slot.activity == IDLE):
            slot.retire_why = ""  # retirement belongs to a running job

    def _end_claim(self, slot: Slot, t: Transition, now: float) -> None:
        claim = slot.claim
        if claim is not None:
            claim.closed = slot.preempt_reason or t.reason
        slot.claim = None
        slot.retire_why = slot.evicting = slot.preempt_reason = ""
        slot.set_state(t.state, t.activity, now)
        if t.state == DELETE and slot.parent is not None:
            parent = slot.parent
            parent.children.remove(slot)
            self.log.info("%s: %d cpus, %d MB, %d KB%s back to %s", slot.short_name, slot.cpus, slot.memory,
                          slot.disk, self._custom_text(slot), parent.short_name)
            self.spawn(self.advertiser.invalidate("Machine", slot.name), "invalidate a dynamic slot")
        elif t.state == CLAIMED and slot.pending is not None:
            pending, slot.pending = slot.pending, None
            new = self._make_claim(slot, pending.job_ad, pending.owner, pending.user, pending.client, pending.rank)
            if not pending.done.done():
                pending.done.set_result({"slot_ad": slot_ad(self, slot).to_wire(), "claim_id": new.id})
        self.publish_soon()

    def _make_claim(self, slot: Slot, job: ClassAd, owner: str, user: str, client: str, rank: float) -> Claim:
        claim = Claim(id=slot.offer_id, job_ad=job, owner=owner, user=user, client=client, rank=rank,
                      accepted_while_draining=self.draining.current is not None)
        slot.claim = claim
        slot.offer_id = self._new_id()  # the id for a claim that would preempt this one
        return claim

    # -- claims --------------------------------------------------------------------------
    def slot_for_offer(self, claim_id: str) -> Slot:
        given = claim_id.encode("utf-8", "surrogatepass")  # compare_digest takes only ASCII str
        for slot in self.all_slots():
            if given and secrets.compare_digest(slot.offer_id.encode(), given):
                return slot
        raise CommandError("no slot offers that claim id (stale match, or the slot was claimed since)", "BAD_CLAIM")

    def slot_for_claim(self, claim_id: str) -> Slot:
        given = claim_id.encode("utf-8", "surrogatepass")
        for slot in self.all_slots():
            if slot.claim is not None and given and secrets.compare_digest(slot.claim.id.encode(), given):
                return slot
        raise CommandError("no slot holds that claim id (stale match, or the claim was released)", "BAD_CLAIM")

    def _accepting(self, job: ClassAd | None = None) -> None:
        if self.stopping.is_set():
            raise CommandError("the startd is shutting down and takes no new claims", "REFUSED")
        drain = self.draining.current
        if drain is not None and (drain.start is None or drain.completed):
            raise CommandError(f"the machine is draining{f' ({drain.reason})' if drain.reason else ''} and "
                               "takes no new claims", "REFUSED")

    async def cmd_request_claim(self, req: Request) -> dict[str, Any]:
        slot = self.slot_for_offer(req.arg_str("claim_id", required=True))
        job = ClassAd.from_wire(req.arg_ad("job_ad", required=True) or {})  # (required: never None)
        self._accepting(job)
        owner = str(job.get_value("Owner", "") or "")
        user, client = str(req.identity), req.arg_str("schedd_host", "")
        ad = slot_ad(self, slot, policy=True)
        start, why = self.slot_policy.truth(ad, "START", job)
        if not start:
            if slot.state == MATCHED:  # the match came to nothing: free for the next cycle
                self.apply(slot, Transition(OWNER, IDLE, "the claim request for the match was refused"))
                self.step(slot)
                self.publish_soon()
            raise CommandError(f"{slot.name}: {why} for this job", "REFUSED")
        rank = self.slot_policy.number(ad, "RANK", job, 0.0)
        if slot.kind == PARTITIONABLE:
            slot = self._carve(slot, ad, job, user)
        if slot.state in (UNCLAIMED, OWNER, MATCHED):
            claim = self._make_claim(slot, job, owner, user, client, rank)
            claim.lease = self.claims.claim_lease(req.arg_float("alive_interval"))
            self.apply(slot, Transition(CLAIMED, IDLE, f"claimed by {user} for {owner or 'a job'}"))
            self.claims.watch_connection(slot, claim, req.conn)
            self.publish_soon()
            return {"slot_ad": slot_ad(self, slot).to_wire(), "claim_id": claim.id}
        if slot.state == CLAIMED and slot.claim is not None:
            return await self._preempting_claim(slot, req, job, owner, user, client, rank)
        raise CommandError(f"{slot.name} is {slot.state}/{slot.activity}, not Unclaimed", "BUSY")

    async def _preempting_claim(self, slot: Slot, req: Request, job: ClassAd, owner: str, user: str, client: str,
                                rank: float) -> dict[str, Any]:
        """A claim request for a claimed slot: it wins if the slot's RANK puts its job above the
        current claim's, or if the negotiator preempts by user priority (``preempt="priority"``:
        it decided, so RANK is not checked), and waits until the current claim is gone (retired
        per MaxJobRetirementTime, vacated)."""
        current = slot.claim
        assert current is not None
        by_priority = req.arg_str("preempt") == "priority"
        if not by_priority and rank <= current.rank:
            raise CommandError(f"{slot.name} is Claimed and RANK for this job ({rank:g}) is not above the "
                               f"current claim's ({current.rank:g})", "BUSY")
        if slot.pending is not None:
            raise CommandError(f"{slot.name} is already being preempted for another claim", "BUSY")
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        pending = PendingClaim(job, owner, user, client, rank, done)
        slot.pending = pending
        if by_priority:
            self.log.info("%s: the negotiator preempts the claim of %s by user priority for %s", slot.short_name,
                          current.user, user)
        else:
            self.log.info("%s: a claim request from %s ranks higher (%g > %g): preempting the claim of %s",
                          slot.short_name, user, rank, current.rank, current.user)

        self.step(slot)
        self.publish_soon()
        closed = asyncio.ensure_future(req.conn.closed_by_peer())
        try:
            await asyncio.wait({done, closed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
            if not done.done():  # the requester went away (or the startd stops): withdraw the request
                done.cancel()
                if slot.pending is pending:
                    slot.pending = None
                    self.log.info("%s: the preempting claim request from %s went away", slot.short_name, user)
                    self.evaluate_soon()
        if done.cancelled():
            raise CommandError("the preempting claim request was withdrawn", "REFUSED")
        reply = done.result()
        claim = slot.claim
        if claim is not None:
            req.conn.on_close.append(lambda: self.claims.connection_closed(slot, claim))
        return reply

    def _carve(self, pslot: Slot, pad: ClassAd, job: ClassAd, user: str) -> Slot:
        """A dynamic slot cut from ``pslot`` for ``job`` (its request rounded by MODIFY_REQUEST_EXPR_*)."""
        if pslot.state not in (UNCLAIMED, OWNER):
            raise CommandError(f"{pslot.name} is {pslot.state}/{pslot.activity}", "BUSY")
        want = self._dynamic_size(pad, job)
        left = dict(zip(("Cpus", "Memory", "Disk"), pslot.left(), strict=True))
        if any(want[k] > left[k] or want[k] < 0 for k in want) or want["Cpus"] < 1:
            raise CommandError(f"{pslot.name} has {left['Cpus']} cpus, {left['Memory']} MB memory and "
                               f"{left['Disk']} KB disk left; the job needs {want['Cpus']} cpus, "
                               f"{want['Memory']} MB and {want['Disk']} KB", "REFUSED")
        custom_want = self._custom_request(pad, job, pslot)
        custom_left = pslot.custom_left()
        short = [f"{n} {self.resources[r].name} ({custom_left[r]} left)" for r, n in custom_want.items()
                 if n > custom_left[r] or n < 0]
        if short:
            raise CommandError(f"{pslot.name} cannot give the job {', '.join(short)}", "REFUSED")
        k = pslot.next_child
        pslot.next_child += 1
        dslot = Slot(pslot.slot_id, f"slot{pslot.slot_id}_{k}@{self.hostname}", want["Cpus"], want["Memory"],
                     want["Disk"], kind=DYNAMIC, type_id=pslot.type_id, sub_id=k, parent=pslot, state=UNCLAIMED,
                     custom=custom_want)
        for r in pslot.ids:  # the first free ids, out of the partitionable slot's list
            dslot.ids[r] = pslot.free_ids(r)[:custom_want[r]]
        dslot.offer_id = self._new_id()
        pslot.children.append(dslot)
        self.log.info("%s: carved %s (%d cpus, %d MB memory, %d KB disk%s) for %s", pslot.short_name,
                      dslot.short_name, dslot.cpus, dslot.memory, dslot.disk, self._custom_text(dslot), user)
        return dslot

    def _custom_request(self, pad: ClassAd, job: ClassAd, pslot: Slot) -> dict[str, int]:
        """What a dynamic slot takes of each custom resource: the job's Request<Name> (0 if it
        asks for none), through MODIFY_REQUEST_EXPR_REQUEST<NAME> if the config sets one."""
        out = {}
        for r in pslot.custom:
            name = self.resources[r].name
            value = job.eval_expr(parse_expr(f"Request{name}"), target=pad)
            knob = f"MODIFY_REQUEST_EXPR_REQUEST{name.upper()}"
            text = self.config.get(knob)
            if text and isinstance(value, (int, float)) and not isinstance(value, bool):
                try:
                    value = job.eval_expr(parse_expr(text), target=pad)
                except UserError as exc:
                    self.warn_once(knob, f"{knob} = {text} does not parse ({exc.message}); using Request{name}")
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                value = 0
            out[r] = math.ceil(float(value))
        return out

    def _dynamic_size(self, pad: ClassAd, job: ClassAd) -> dict[str, int]:
        """What a dynamic slot for ``job`` gets: MODIFY_REQUEST_EXPR_REQUEST<res> evaluated with the
        job as MY and the slot as TARGET, as HTCondor does (whole numbers, rounded up)."""
        filled = job.copy()
        for res, default in (("Cpus", 1), ("Memory", 1), ("Disk", 1)):
            if not isinstance(job.get_value(f"Request{res}"), (int, float)):
                filled[f"Request{res}"] = default
        out = {}
        for res, fallback in MODIFY_REQUEST.items():
            text = self.config.get(f"MODIFY_REQUEST_EXPR_REQUEST{res.upper()}") or fallback
            try:
                value = filled.eval_expr(parse_expr(text), target=pad)
            except UserError as exc:
                self.warn_once(f"MODIFY_REQUEST_EXPR_REQUEST{res.upper()}",
                               f"MODIFY_REQUEST_EXPR_REQUEST{res.upper()} = {text} does not parse "
                               f"({exc.message}); using {fallback}")
                value = filled.eval_expr(parse_expr(fallback), target=pad)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                value = filled.get_value(f"Request{res}", 1)
            out[res] = math.ceil(float(value))
        return out

    async def cmd_activate_claim(self, req: Request) -> dict[str, Any]:
        slot = self.slot_for_claim(req.arg_str("claim_id", required=True))
        claim = slot.claim
        assert claim is not None
        claim.renew()
        if slot.state != CLAIMED or slot.activity != IDLE:
            raise CommandError(f"{slot.name} is {slot.state}/{slot.activity}, cannot start a job", "BUSY")
        if self.stopping.is_set():
            raise CommandError("the startd is shutting down and starts no new jobs", "REFUSED")
        job = ClassAd.from_wire(req.arg_ad("job_ad", required=True) or {})  # (required: never None)
        uname = self._universe_name(job)
        universe = self.universes.get(uname)
        if universe is None:
            raise CommandError(f"{slot.name} does not offer the {uname} universe", "NO_UNIVERSE")
        starter = Starter(job, slot.name, slot.slot_id if slot.kind != DYNAMIC else slot.slot_id * 1000 + slot.sub_id,
                          self.config.get("EXECUTE") or ".", universe,
                          self.open_log("STARTER", f".{slot.short_name}"),
                          files=await self._input_files(req),
                          config=self.config, memory_mb=slot.memory, on_sample=lambda _usage: self._job_sampled(slot),
                          assigned={self.resources[r].name: slot.ids.get(r, []) for r, res in self.resources.items()
                                    if res.ids is not None},
                          machine_ad=slot_ad(self, slot), chirp_address=str(self.server.address))
        run = JobRun(f"{job.get_value('ClusterId')}.{job.get_value('ProcId')}", job_lease(job), starter)
        starter.on_update = run.sampled  # usage samples stream to the shadow
        starter.on_checkpoint = run.checkpoint  # and checkpoints, each confirmed with CHECKPOINT_STORED
        claim.job_ad = job
        claim.run = run
        slot.starter = starter
        slot.job_start = time.time()
        slot.suspended_total = 0.0
        slot.evicting = slot.retire_why = ""
        slot.cpu_seen = (0.0, 0.0)
        slot.job_starts += 1
        self.apply(slot, Transition(CLAIMED, BUSY, f"the claim was activated for job "
                                                   f"{job.get_value('ClusterId')}.{job.get_value('ProcId')}"))
        self.step(slot)
        self.publish_soon(slot)
        run.task = self.spawn(self.claims.run_job(slot, claim, run), f"job {run.job_id}")
        return await self.claims.follow_run(req, slot, claim, run, {"update": "activated"})

    async def _input_files(self, req: Request) -> dict[str, Any]:
        """The job's input entries; files too big for the message arrive now, as a chunk stream."""
        try:
            return await streams.receive_input(req, dict(req.arg_map("files")), self.config.get("EXECUTE") or ".")
        except (TransferError, OSError, TimeoutError) as exc:
            raise CommandError(f"the job's input did not arrive: {exc}", "TRANSFER_FAILED") from None

    async def cmd_fetch_output(self, req: Request) -> dict[str, Any]:
        """``FETCH_OUTPUT``: a finished job's output too big for its result, as a chunk stream."""
        return await outgoing.serve_fetch(req, self.outgoing, self.log)

    def _job_sampled(self, slot: Slot) -> None:
        """A starter's periodic sample is in the job ad: PERIODIC_CHECKPOINT for a job that wants
        its checkpoint signal, then the policy (PREEMPT, WANT_HOLD may look at MemoryUsage)."""
        starter = slot.starter
        if starter is not None and starter.wants_checkpoint_signal() and slot.activity == BUSY:
            ad = slot_ad(self, slot, policy=True)
            if self.slot_policy.truth(ad, "PERIODIC_CHECKPOINT", slot.claim.job_ad if slot.claim else None)[0]:
                starter.checkpoint()
        self.evaluate_soon()

    def job_ended(self, slot: Slot) -> None:
        slot.starter = None
        slot.condor_load = 0.0
        if slot.state == CLAIMED and slot.activity in (BUSY, SUSPENDED):
            self.apply(slot, Transition(CLAIMED, IDLE, "the job exited"))
        elif slot.state == CLAIMED and slot.activity == RETIRING:
            self.apply(slot, Transition(PREEMPTING, VACATING, "the job exited during retirement"))
        self.step(slot)
        if self.draining.progress():
            self.publish_soon()
        else:
            self.publish_soon(slot)

    @staticmethod
    def _universe_name(job: ClassAd) -> str:
        """The universe plugin that runs ``job``: a plugin's universe by name (submit's
        ``PluginUniverse``), docker and container by their Want attributes, else by number."""
        names = {5: "vanilla", 7: "scheduler", 9: "grid", 10: "java", 11: "parallel", 12: "local", 13: "vm"}
        plugin = job.get_value("PluginUniverse")
        if isinstance(plugin, str) and plugin:
            return plugin.lower()
        if job.get_value("WantDocker") is True:
            return "docker"
        if job.get_value("WantContainer") is True:
            return "container"
        return names.get(int(job.get_value("JobUniverse", 5) or 5), "vanilla")

    async def cmd_release_claim(self, req: Request) -> str:
        slot = self.slot_for_claim(req.arg_str("claim_id", required=True))
        self.release(slot, f"{req.identity} released the claim")
        return "ok"

    def release(self, slot: Slot, why: str, kill: bool = False) -> None:
        if slot.claim is None:
            return
        if slot.state == CLAIMED:
            activity = KILLING if kill and slot.starter is not None else VACATING
            self.apply(slot, Transition(PREEMPTING, activity, why))
        elif slot.state == PREEMPTING and kill and slot.starter is not None and slot.activity != KILLING:
            self.apply(slot, Transition(PREEMPTING, KILLING, why))
        self.step(slot)
        self.draining.progress()
        self.publish_soon()

    # -- shutdown -------------------------------------------------------------------------------
    async def shutdown(self, fast: bool) -> None:
        """Fast: kill the jobs.  Peaceful: take no new claims and let the jobs finish, however long
        they take.  Graceful: retire and vacate the jobs (KillSig, then SIGKILL after
        MachineMaxVacateTime), as HTCondor's startd does."""
        self.shutdown_mode = "fast" if fast else "peaceful" if self.peaceful else "graceful"
        busy = sum(1 for s in self.all_slots() if s.starter is not None)
        self.log.info("%s shutdown: %d jobs running", self.shutdown_mode, busy)
        with contextlib.suppress(Exception):
            await self.cron.stop()
        self.evaluate_all()
        self.publish_soon()
        deadline = time.monotonic() + 10 if fast else math.inf
        republish = time.monotonic() + self.update_interval()
        while any(s.starter is not None for s in self.all_slots()) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            self.evaluate_all()
            if time.monotonic() >= republish:  # the base's publish timer has stopped; the ads must not expire
                republish += self.update_interval()
                self.publish_soon()
        # the jobs' streamed output: a while for their shadows to fetch it, then it goes
        deadline = time.monotonic() + (0 if fast else OUTPUT_SHUTDOWN_WAIT)
        while self.outgoing.items and time.monotonic() < deadline:  # noqa: ASYNC110 - at shutdown only: no event for "fetched"
            await asyncio.sleep(0.1)
        self.outgoing.clear()

    async def serve(self) -> None:
        await super().serve()
        if self.after_exit == "restart":
            self.log.info("restarting the startd (pid %d)", os.getpid())
            for handler in self.log.handlers:
                handler.flush()
            os.execv(sys.executable, [sys.executable, "-m", "htcd", *sys.argv[1:]])
