"""The shadow: a task in the schedd per claim, running jobs on a claimed slot.

It claims the slot the negotiator matched, runs the job through the startd's starter (input
files go with the activation, output comes back with the reply), records the outcome, and
then reuses the claim for the owner's next idle job that fits the slot before releasing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from htcd.classad import ClassAd, symmetric_match
from htcd.schedd.jobs import HELD, Job
from htcd.transfer import TransferError
from htcd.transfer.shadow_side import gather_input, output_targets
from htcd.wire.client import AsyncConnection
from htcd.wire.errors import RemoteError, WireError

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd


class Shadow:
    def __init__(self, schedd: Schedd, job: Job, slot_ad: ClassAd, claim_id: str) -> None:
        self.schedd = schedd
        self.job = job
        self.slot_ad = slot_ad
        self.claim_id = claim_id
        self.startd = str(slot_ad.get_value("StartdIpAddr") or slot_ad.get_value("MyAddress") or "")
        self.slot_name = str(slot_ad.get_value("Name", ""))
        self.conn: AsyncConnection | None = None
        self.claim_closed = False  # the startd ended the claim (eviction, CLAIM_WORKLIFE, draining)
        self.log = schedd.shadow_log

    async def run(self) -> None:
        job: Job | None = self.job
        try:
            self.conn = await AsyncConnection.open(self.startd)
            reply = await self.conn.call("REQUEST_CLAIM", claim_id=self.claim_id, job_ad=job.wire(),
                                         schedd_host=self.schedd.hostname)
            self._claimed(reply)
        except (WireError, RemoteError) as exc:
            self.log.info("(%s) cannot claim %s: %s", job.id_text, self.slot_name, exc)
            self.schedd.unmatch(job)
            await self._close()
            return
        try:
            while job is not None:
                self.job = job
                if not await self.run_job(job):
                    break
                job = self.schedd.next_job_for_claim(self.slot_ad, job.owner)
            if self.conn is not None and not self.claim_closed:
                await self.conn.call("RELEASE_CLAIM", claim_id=self.claim_id)
        except (WireError, RemoteError) as exc:
            self.log.info("claim on %s ended: %s", self.slot_name, exc)
        finally:
            await self._close()

    def _claimed(self, reply: Any) -> None:
        """A claim on a partitionable slot is a new dynamic slot: from here on the claim id and the
        slot ad are the dynamic slot's, as the startd returned them."""
        if not isinstance(reply, dict):
            return
        if reply.get("claim_id"):
            self.claim_id = str(reply["claim_id"])
        if reply.get("slot_ad"):
            self.slot_ad = ClassAd.from_wire(reply["slot_ad"])
            self.slot_name = str(self.slot_ad.get_value("Name", self.slot_name))

    async def _close(self) -> None:
        if self.conn is not None:
            await self.conn.close()
            self.conn = None

    async def run_job(self, job: Job) -> bool:
        """Run one job on the claim; False when the claim cannot be used again."""
        schedd = self.schedd
        try:
            files = gather_input(job.get)
        except TransferError as exc:
            schedd.hold(job, str(exc), code=13)
            return True
        schedd.job_started(job, self.slot_ad, self)
        self.log.info("(%s) activating claim on %s", job.id_text, self.slot_name)
        try:
            assert self.conn is not None
            result: dict[str, Any] = await self.conn.call("ACTIVATE_CLAIM", timeout=None,
                                                          claim_id=self.claim_id, job_ad=job.wire(), files=files)
        except (WireError, RemoteError) as exc:
            self.log.info("(%s) lost the job on %s: %s", job.id_text, self.slot_name, exc)
            schedd.job_lost(job, str(exc))
            self.log.info("(%s) EXITING WITH STATUS 107", job.id_text)
            return False
        closing = result.get("claim_closed")
        if closing:
            self.claim_closed = True
            self.log.info("(%s) the startd closed the claim on %s: %s", job.id_text, self.slot_name, closing)
        if result.get("error"):
            schedd.hold(job, f"Error from {self.slot_name}: {result['error']}", code=6)
            self.log.info("(%s) EXITING WITH STATUS 112", job.id_text)
            return not closing
        evicted = bool(result.get("evicted")) and job.status != HELD and not job.removing
        sent = 0 if evicted else self._write_output(job, result)
        if job.status == HELD:
            schedd.job_vacated(job)
            self.log.info("(%s) EXITING WITH STATUS 112", job.id_text)
        elif job.removing:
            schedd.finish_removal(job)
            self.log.info("(%s) EXITING WITH STATUS 102", job.id_text)
        elif evicted:
            schedd.job_lost(job, f"evicted from {self.slot_name}: {result['evicted']}")
            self.log.info("(%s) EXITING WITH STATUS 107", job.id_text)
        else:
            schedd.job_exited(job, result, bytes_received=sum(len(v) for v in files.values()), bytes_sent=sent)
            self.log.info("(%s) EXITING WITH STATUS %d", job.id_text, 115 if closing else 100)
        return not closing and not evicted

    def _write_output(self, job: Job, result: dict[str, Any]) -> int:
        written = 0
        for path, data in output_targets(job.get, result):
            try:
                self.schedd.write_as_owner(job, path, data)
                written += len(data)
            except OSError as exc:
                self.log.error("(%s) cannot write output %s: %s", job.id_text, path, exc)
        return written

    async def kill(self) -> None:
        """Ask the startd to kill the job; ACTIVATE_CLAIM then returns."""
        try:
            conn = await AsyncConnection.open(self.startd)
            try:
                await conn.call("DEACTIVATE_CLAIM", claim_id=self.claim_id)
            finally:
                await conn.close()
        except (WireError, RemoteError) as exc:
            self.log.info("(%s) cannot reach %s to kill the job: %s", self.job.id_text, self.slot_name, exc)


def fits(job: Job, slot_ad: ClassAd) -> bool:
    return symmetric_match(job.ad, slot_ad)



