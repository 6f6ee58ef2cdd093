"""The schedd's side of negotiation: it asks the negotiator for a cycle (RESCHEDULE), answers its
resource requests (NEGOTIATE: one per autocluster of a submitter's idle jobs) and takes its
matches (MATCHES: a shadow per match, which claims the slot and runs the job).  Shadows for the
jobs found running at start-up are started here too."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from typing import TYPE_CHECKING, Any

from htcd.classad import ClassAd
from htcd.errors import UserError
from htcd.schedd.autocluster import submitter_name
from htcd.schedd.jobs import IDLE, Job, in_priority_order
from htcd.schedd.local import ap_universe
from htcd.schedd.shadow import Shadow
from htcd.wire.client import acall
from htcd.wire.errors import CommandError, WireError
from htcd.wire.server import Request, is_wire_ad

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd


def _good_match(m: dict[str, Any]) -> bool:
    """Whether a match of MATCHES has the shape the schedd relies on (checked before any is used)."""
    c, dot, p = m.get("id", "").partition(".") if type(m.get("id")) is str else ("", "", "")
    return (dot == "." and c.isdigit() and p.isdigit() and type(m.get("claim_id")) is str
            and is_wire_ad(m.get("slot_ad")) and m.get("preempt") in (None, "rank", "priority")
            and (m.get("autocluster") is None or type(m.get("autocluster")) is int))


class Negotiation:
    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd
        self._reschedule: asyncio.Task[None] | None = None

    async def cmd_negotiate(self, req: Request) -> list[dict[str, Any]]:
        """One resource request per autocluster of the submitter's idle jobs, with a count."""
        schedd = self.schedd
        submitter = req.arg_str("submitter", required=True)  # owner@domain, or group.user@domain
        owner = submitter.split("@", 1)[0]
        limit = req.arg_int("limit") or 200  # NEGOTIATOR_RESOURCE_REQUEST_LIST_SIZE
        slot_ads = req.arg_list("slot_ads", dict)
        skip = req.arg_list("skip", int)
        if not all(map(is_wire_ad, slot_ads)):
            raise CommandError("NEGOTIATE: argument 'slot_ads' must be a list of ClassAds", "BAD_REQUEST")
        schedd.autoclusters.learn_slots([ClassAd.from_wire(w) for w in slot_ads])
        if not schedd.may_start():
            return []
        domain = schedd.uid_domain
        idle = [j for j in schedd.jobs.values()
                if j.status == IDLE and not j.matched and (j.owner == owner or "." in owner) and not ap_universe(j)
                and submitter_name(j, domain) == submitter]
        return schedd.autoclusters.requests(in_priority_order(idle), limit, skip)

    async def cmd_matches(self, req: Request) -> int:
        schedd = self.schedd
        started = 0
        spares: dict[int, Iterator[Job]] = {}  # per autocluster: its idle jobs, found once per call
        matches = req.arg_list("matches", dict, required=True)
        bad = next((m for m in matches if not _good_match(m)), None)
        if bad is not None:
            raise CommandError("MATCHES: each match must be {id: \"<cluster>.<proc>\", autocluster: <integer> | null, "
                               "slot_ad: <ClassAd>, claim_id: <string>, preempt: null | \"rank\" | \"priority\"}; "
                               f"got {str(bad)[:200]}", "BAD_REQUEST")
        for m in matches:
            if not schedd.may_start():
                delay = schedd.knob_int("JOB_START_DELAY", 0)
                if delay > 0:  # held back by the start pace: ask again once a start is due
                    schedd.spawn(self._reschedule_later(delay), "reschedule")
                break
            job = self._job_for_match(m, spares)
            if job is None:
                continue
            job.matched = True
            schedd.job_policy.started()
            shadow = Shadow(schedd.lifecycle, job, ClassAd.from_wire(m["slot_ad"]), str(m["claim_id"]),
                            preempt=m.get("preempt"))
            self._track(shadow, shadow.run(), f"shadow {job.id_text}")
            started += 1
        return started

    def _track(self, shadow: Shadow, run: Awaitable[None], what: str) -> None:
        """Run a shadow as a task the schedd counts, waits for and cancels at shutdown."""
        tasks = self.schedd.shadow_tasks
        task = shadow.task = self.schedd.spawn(run, what)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def _job_for_match(self, m: dict[str, Any], spares: dict[int, Iterator[Job]]) -> Job | None:
        """The matched job, or (for a match made for an autocluster) another idle job of it."""
        jobs = self.schedd.jobs
        c, _, p = str(m["id"]).partition(".")
        job = jobs.get((int(c), int(p)))
        if job is not None and job.status == IDLE and not job.matched:
            return job
        if job is None or m.get("autocluster") is None:
            return None
        acid = int(m["autocluster"])
        if acid not in spares:
            spares[acid] = self.schedd.autoclusters.idle_members(list(jobs.values()), job.owner, acid)
        return next((j for j in spares[acid] if j.status == IDLE and not j.matched and not ap_universe(j)), None)

    def start_reconnects(self, jobs: list[Job]) -> None:
        """A shadow for each job found RUNNING with a claim: it reconnects within the job's lease."""
        for job in jobs:
            if self.schedd.jobs.get(job.id) is not job:
                continue
            shadow = Shadow.for_reconnect(self.schedd.lifecycle, job)
            self._track(shadow, shadow.reconnect(), f"shadow {job.id_text} (reconnect)")

    async def _reschedule_later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self.reschedule()

    def reschedule(self) -> None:
        """Ask the negotiator for a cycle soon (coalescing bursts of submits); local and scheduler
        universe jobs need no negotiator and are started here."""
        self.schedd.local.start_soon()
        if self._reschedule is None or self._reschedule.done():
            self._reschedule = self.schedd.spawn(self._send_reschedule(), "reschedule")

    async def _send_reschedule(self) -> None:
        schedd = self.schedd
        await asyncio.sleep(0.1)
        await schedd.publish()
        try:
            negs = await schedd.send_to_collector("QUERY_ADS", ad_type="Negotiator", projection=["MyAddress"])
            for ad in negs:
                addr = ClassAd.from_wire(ad).get_value("MyAddress")
                if addr:
                    await acall(str(addr), "RESCHEDULE", timeout=10.0)
        except (WireError, UserError) as exc:
            schedd.log.info("cannot ask the negotiator to reschedule: %s", exc)
