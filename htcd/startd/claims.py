"""Claims at the startd beyond their start: leases, jobs that outlive their shadow's connection,
reconnection and vacating.

Two leases keep a claim honest, as in HTCondor.  The *claim lease*: the schedd renews every claim
it holds (``ALIVE``, or any command on the claim) at least every ALIVE_INTERVAL seconds, and an
idle claim not renewed for ALIVE_INTERVAL * MAX_CLAIM_ALIVES_MISSED seconds ends.  The *job lease*
(the job's ``JobLeaseDuration``): a job whose shadow's connection closes keeps running, and once
it ends its result (exit status and output) is kept, for that many seconds from the last contact;
a shadow that comes back in time (``RECONNECT_JOB``, after a schedd restart) picks up the same
stream as ``ACTIVATE_CLAIM``'s from where it is.  Past the lease the job is killed, its sandbox
removed and the claim ended.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from htcd.startd import states
from htcd.startd.ads import slot_ad
from htcd.startd.slot import IDLE, MATCHED, PARTITIONABLE, UNCLAIMED, Claim, Slot
from htcd.transfer import outgoing
from htcd.wire.errors import CommandError
from htcd.wire.server import Connection, Request

if TYPE_CHECKING:
    from htcd.startd.daemon import Startd
    from htcd.starter.starter import Starter


CHECKPOINT_TIMEOUT = 600.0  # seconds a checkpoint waits for its shadow to say it is stored


def job_lease(job: Any) -> float:
    """The job's JobLeaseDuration in seconds (0: no lease; the job ends with its connection)."""
    value = job.get_value("JobLeaseDuration")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return max(0.0, float(value))


class JobRun:
    """One activation of a claim: the starter's task, its newest usage sample and, once the job
    has ended, its result.  A shadow follows the run over its connection; without one the run
    goes on for the job lease."""

    def __init__(self, job_id: str, lease: float, starter: Starter) -> None:
        self.job_id = job_id
        self.lease = lease
        self.starter = starter
        self.task: asyncio.Task[Any] | None = None
        self.result: dict[str, Any] | None = None
        self.sample: dict[str, Any] | None = None  # the newest usage sample not sent yet
        self.changed = asyncio.Event()
        self.followers = 0
        self.away_since = 0.0  # monotonic time the last follower left (0 while followed)
        self.timer: asyncio.TimerHandle | None = None
        self.checkpoint_parcel: dict[str, Any] | None = None  # a checkpoint waiting to go to the shadow
        self.checkpoint_answer: asyncio.Future[str] | None = None  # "" when the shadow stored it, else why not

    async def checkpoint(self, parcel: dict[str, Any]) -> str:
        """The starter's ``on_checkpoint``: the checkpoint goes to the shadow on the run's stream;
        "" once the shadow says it is in the spool (``CHECKPOINT_STORED``), else why it is not."""
        if not self.followers:
            return "no shadow is connected to take it"
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.checkpoint_parcel, self.checkpoint_answer = parcel, answer
        self.changed.set()
        try:
            return await asyncio.wait_for(asyncio.shield(answer), CHECKPOINT_TIMEOUT)
        except TimeoutError:
            return f"the shadow did not say within {CHECKPOINT_TIMEOUT:g} s that it stored the checkpoint"
        finally:
            self.checkpoint_parcel = self.checkpoint_answer = None

    def checkpoint_stored(self, number: int, why: str) -> bool:
        """The shadow's answer for checkpoint ``number``; False when no such checkpoint waits."""
        answer, parcel = self.checkpoint_answer, self.checkpoint_parcel
        if answer is None or answer.done() or parcel is None or parcel.get("number") != number:
            return False
        answer.set_result(why)
        return True

    def sampled(self, usage: dict[str, Any]) -> None:
        """The starter's ``on_update``: only the newest sample waits to be sent."""
        self.sample = usage
        self.changed.set()

    def finish(self, result: dict[str, Any]) -> None:
        self.result = result
        self.changed.set()

    async def follow(self, req: Request, first: dict[str, Any] | None = None) -> dict[str, Any]:
        """Stream the run to the client of ``req``: partial replies (``first``, then each usage
        sample), then the result as the final reply.  ConnectionResetError when the client goes."""
        self.followers += 1
        self.away_since = 0.0
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        gone = asyncio.ensure_future(req.conn.closed_by_peer())
        try:
            if first is not None:
                await req.send_partial(first)
            while self.result is None:
                parcel = self.checkpoint_parcel
                if parcel is not None and not parcel.get("sent"):
                    parcel["sent"] = True
                    await req.send_partial({"update": "checkpoint", **{k: v for k, v in parcel.items() if k != "sent"}})
                    continue
                if self.sample is not None:
                    sample, self.sample = self.sample, None
                    await req.send_partial({"update": "usage", "usage": sample})
                    continue
                self.changed.clear()
                waiter = asyncio.ensure_future(self.changed.wait())
                try:
                    await asyncio.wait({waiter, gone}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
                if gone.done() and self.result is None:
                    raise ConnectionResetError("the shadow's connection closed")
            return self.result
        finally:
            gone.cancel()
            self.followers -= 1
            if not self.followers and self.checkpoint_answer is not None and not self.checkpoint_answer.done():
                self.checkpoint_answer.set_result("the shadow's connection closed before it stored the checkpoint")


class Claims:
    """The startd's claim commands and leases (the startd holds one: ``Startd.claims``)."""

    def __init__(self, startd: Startd) -> None:
        self.startd = startd

    def _claims_by_id(self) -> dict[str, Slot]:
        return {s.claim.id: s for s in self.startd.all_slots() if s.claim is not None}

    def claim_lease(self, alive_interval: Any) -> float:
        """ALIVE_INTERVAL (the schedd's, from its claim request) * MAX_CLAIM_ALIVES_MISSED."""
        try:
            interval = float(alive_interval)
        except (TypeError, ValueError):
            return 0.0
        return max(0.0, interval) * max(1, self.startd.config.get_int("MAX_CLAIM_ALIVES_MISSED", 6))

    def watch_connection(self, slot: Slot, claim: Claim, conn: Connection) -> None:
        """From now on ``conn`` is the claim's connection to its schedd."""
        claim.conn = conn
        claim.connected = True
        conn.on_close.append(lambda: self.connection_closed(slot, claim, conn))

    async def cmd_alive(self, req: Request) -> dict[str, Any]:
        """The schedd's keep-alive for the claims it holds here; answers those it does not hold."""
        held = self._claims_by_id()
        unknown = []
        for cid in req.arg_list("claim_ids", str):
            slot = held.get(str(cid))
            if slot is None or slot.claim is None:
                unknown.append(cid)
            else:
                slot.claim.renew()
        return {"unknown": unknown}

    async def follow_run(self, req: Request, slot: Slot, claim: Claim, run: JobRun,
                         first: dict[str, Any] | None = None) -> dict[str, Any]:
        """A shadow follows ``run``; the final reply is the job's result (delivered: forgotten)."""
        try:
            result = await run.follow(req, first)
        except (ConnectionError, OSError):
            self.run_unfollowed(slot, claim, run)
            raise ConnectionResetError("the shadow went away") from None
        if claim.run is run:
            claim.run = None
        claim.renew()
        self.startd.outgoing.delivered(result)  # its streamed output waits a while for FETCH_OUTPUT
        return result

    async def run_job(self, slot: Slot, claim: Claim, run: JobRun) -> None:
        """The starter's whole run; its result goes to whoever follows, or waits for the lease."""
        result: dict[str, Any] = {}
        try:
            result = await run.starter.run()
        except Exception as exc:  # a starter bug must not leave the slot busy forever
            self.startd.log.exception("%s: the starter of job %s failed", slot.short_name, run.job_id)
            result = {"error": f"the starter failed: {exc}"}
        finally:
            evicted = slot.evicting
            self.startd.job_ended(slot)
        staged = result.pop("staged_output", None)
        if staged:  # output too big for the reply: kept for the shadow's FETCH_OUTPUT
            result["output_stream"] = self.startd.outgoing.add(staged, run.lease + outgoing.KEEP)
        if evicted and not result.get("error"):
            result["evicted"] = evicted
        if claim.closed or slot.claim is not claim:
            result["claim_closed"] = claim.closed or "the claim ended"
        run.finish(result)
        if run.followers:
            return
        if result.get("claim_closed") or claim.run is not run:
            claim.run = None if claim.run is run else claim.run
            self.startd.outgoing.forget(result)
            self.startd.log.info("%s: job %s ended with no shadow connected and its claim is over: its result is "
                          "dropped", slot.short_name, run.job_id)
            return
        self.startd.log.info("%s: job %s ended while its shadow is away; its result is kept for the job lease "
                      "(%g s)", slot.short_name, run.job_id, run.lease)

    def run_unfollowed(self, slot: Slot, claim: Claim, run: JobRun) -> None:
        """The shadow's connection closed under a run: keep it for the job lease, or (no lease)
        end it now."""
        if run.followers or claim.run is not run or slot.claim is not claim:
            return
        if run.lease <= 0:
            claim.run = None
            self.startd.release(slot, "the schedd's claim connection closed and the job has no lease", kill=True)
            return
        if not run.away_since:
            run.away_since = time.monotonic()
            self.startd.log.info("%s: the shadow of job %s went away; the job lease (JobLeaseDuration = %g) keeps the "
                          "job %s", slot.short_name, run.job_id, run.lease,
                          "running" if run.result is None else "result")
        self._arm_lease(slot, claim, run)

    def _arm_lease(self, slot: Slot, claim: Claim, run: JobRun) -> None:
        if run.timer is not None:
            run.timer.cancel()
        due = max(run.away_since, claim.renewed) + run.lease - time.monotonic()
        run.timer = asyncio.get_running_loop().call_later(max(0.0, due) + 0.01, self._lease_due, slot, claim, run)

    def _lease_due(self, slot: Slot, claim: Claim, run: JobRun) -> None:
        run.timer = None
        if run.followers or claim.run is not run or slot.claim is not claim:
            return
        if max(run.away_since, claim.renewed) + run.lease > time.monotonic():
            self._arm_lease(slot, claim, run)  # renewed meanwhile
            return
        claim.run = None
        if run.result is None:
            why = f"the job lease of job {run.job_id} expired (JobLeaseDuration = {run.lease:g}) with no shadow"
            self.startd.log.info("%s: %s: killing the job", slot.short_name, why)
        else:
            why = f"the result of job {run.job_id} waited the job lease ({run.lease:g} s) for its shadow"
            self.startd.log.info("%s: %s: dropping it", slot.short_name, why)
            self.startd.outgoing.forget(run.result)
        self.startd.release(slot, why, kill=True)

    def connection_closed(self, slot: Slot, claim: Claim, conn: Connection | None = None) -> None:
        """The schedd's claim connection ended: a running job (or its unread result) waits for the
        job lease; an idle claim ends now (no restarted schedd knows of it)."""
        if slot.claim is not claim or (conn is not None and claim.conn is not conn):
            return
        claim.connected = False
        run = claim.run
        if run is not None:
            self.run_unfollowed(slot, claim, run)
            return
        self.startd.release(slot, "the schedd's claim connection closed", kill=True)

    async def cmd_checkpoint_stored(self, req: Request) -> dict[str, Any]:
        """``CHECKPOINT_STORED {claim_id, number, error?}``: the shadow kept the running job's
        checkpoint in its spool (or says why not); the starter then restarts the job."""
        slot = self.startd.slot_for_claim(req.arg_str("claim_id", required=True))
        run = slot.claim.run if slot.claim is not None else None
        number = req.arg_int("number", required=True)
        if run is None or not run.checkpoint_stored(number, req.arg_str("error") or ""):
            raise CommandError(f"{slot.name} has no checkpoint {number} waiting", "NO_CHECKPOINT")
        if slot.claim is not None:
            slot.claim.renew()
        return {"ok": True}

    async def cmd_reconnect_job(self, req: Request) -> dict[str, Any]:
        """A shadow (after a schedd restart) presents the claim id of a running job: it gets the
        run's stream from where it is, or the kept result at once."""
        slot = self.startd.slot_for_claim(req.arg_str("claim_id", required=True))
        claim = slot.claim
        assert claim is not None
        run = claim.run
        if run is None:
            raise CommandError(f"{slot.name} runs no job on that claim (its result was delivered, or its lease "
                               "expired)", "NO_JOB")
        wanted = req.arg_str("job_id")
        if wanted and wanted != run.job_id:  # the claim went on to another job: this one is not here
            raise CommandError(f"{slot.name} runs job {run.job_id} on that claim, not job {wanted}", "NO_JOB")
        claim.renew()
        self.watch_connection(slot, claim, req.conn)
        self.startd.log.info("%s: the shadow of job %s reconnected (%s)", slot.short_name, run.job_id, req.identity)
        usage = run.starter.usage(fresh=False) if run.result is None else {}
        first = {"update": "reconnected", "slot_ad": slot_ad(self.startd, slot).to_wire(), "claim_id": claim.id,
                 "starter": str(self.startd.server.address), "usage": usage}
        return await self.follow_run(req, slot, claim, run, first)

    async def cmd_vacate_claims(self, req: Request) -> dict[str, Any]:
        """``htcd vacate``: end the claims of the named slots (every slot by default); their jobs
        are vacated (KillSig, then killed after MachineMaxVacateTime) or, ``fast``, killed."""
        names = {n.lower() for n in req.arg_list("slots", str)}
        fast = req.arg_bool("fast")
        chosen = [s for s in self.startd.all_slots() if s.claim is not None
                  and (not names or s.name.lower() in names or s.short_name.lower() in names)]
        why = f"vacated by {req.identity} (htcd vacate{' -fast' if fast else ''})"
        for slot in chosen:
            self.startd.log.info("%s: %s", slot.short_name, why)
            self.startd.release(slot, why, kill=fast)
        return {"vacated": [s.name for s in chosen]}

    async def cmd_match_info(self, req: Request) -> dict[str, Any]:
        """The negotiator matched these slots (by their offered claim ids): an Unclaimed one goes
        Matched until the schedd's claim request, or back after MATCH_TIMEOUT.  Ids of slots
        claimed since (a stale match) are skipped, and a partitionable slot stays Unclaimed: its
        claims carve new slots."""
        matched = []
        for claim_id in req.arg_list("claim_ids", str):
            try:
                slot = self.startd.slot_for_offer(claim_id)
            except CommandError:
                continue
            if slot.kind == PARTITIONABLE or slot.state != UNCLAIMED:
                continue
            self.startd.apply(slot, states.Transition(MATCHED, IDLE, f"matched by the negotiator ({req.identity})"))
            matched.append(slot.name)
        if matched:
            asyncio.get_running_loop().call_later(self.startd.match_timeout + 0.05, self.startd.evaluate_soon)
            self.startd.publish_soon()
        return {"matched": matched}

    async def cmd_deactivate_claim(self, req: Request) -> str:
        """Stop the job of a claim; the claim stays.  ``graceful``: the job's KillSig first, SIGKILL
        after its vacate time; ``evict``: the result says the job was evicted (it goes back to idle)."""
        slot = self.startd.slot_for_claim(req.arg_str("claim_id", required=True))
        starter = slot.starter
        if starter is None:
            return "ok"
        claim = slot.claim
        if claim is not None:
            claim.renew()
        why = req.arg_str("reason") or f"{req.identity} deactivated the claim"
        if req.arg_bool("evict"):
            slot.evicting = why
        if req.arg_bool("graceful"):
            t, how = states.vacate_time(slot_ad(self.startd, slot, policy=True), self.startd.slot_policy,
                                        claim.job_ad if claim is not None else None)
            self.startd.log.info("%s: vacating the job (%s); killing it after %s", slot.short_name, why, how)
            starter.vacate()
            asyncio.get_running_loop().call_later(max(0.0, t), self._kill_if_running, slot, starter)
        else:
            self.startd.log.info("%s: killing the job (%s)", slot.short_name, why)
            starter.kill()
        return "ok"

    def _kill_if_running(self, slot: Slot, starter: Starter) -> None:
        if slot.starter is starter:
            self.startd.log.info("%s: the job did not leave within its vacate time: killing it", slot.short_name)
            starter.kill()

    def check_claim_leases(self) -> None:
        """End idle claims whose lease lapsed (no ALIVE, no command)."""
        now = time.monotonic()
        for slot in list(self.startd.all_slots()):
            claim = slot.claim
            if claim is None or claim.run is not None or claim.lease <= 0 or now - claim.renewed <= claim.lease:
                continue
            self.startd.release(slot, f"the claim lease expired: no keep-alive from the schedd for {claim.lease:g} s "
                               "(ALIVE_INTERVAL * MAX_CLAIM_ALIVES_MISSED)")

    def lease_check_interval(self) -> float:
        leases = [s.claim.lease for s in self.startd.all_slots() if s.claim is not None and s.claim.lease > 0]
        return min(5.0, max(0.25, min(leases, default=20.0) / 4))
