"""The shadow: a task in the schedd per claim, running jobs on a claimed slot.

It claims the slot the negotiator matched (``REQUEST_CLAIM``), runs a job on it
(``ACTIVATE_CLAIM``: the input files go with the activation; the reply streams the activation,
the starter's usage samples and a self-checkpointing job's checkpoints (kept in the job's spool,
then confirmed with ``CHECKPOINT_STORED``), then the exit status and the output -- files too big for the reply
stay at the startd until the shadow fetches them, ``FETCH_OUTPUT``), records the outcome, and
reuses the claim for the owner's next idle job that fits the slot before releasing it.  The
job's life is not tied to the claim connection: when it breaks, or the schedd restarts under a
running job, the shadow finds the job again (``RECONNECT_JOB``) within its lease
(``JobLeaseDuration``), with HTCondor's events 022/023/024.  Every way a job ends is logged with
HTCondor's shadow exit code ("EXITING WITH STATUS n" in ShadowLog).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

from htcd.classad import ClassAd, symmetric_match
from htcd.schedd.jobs import HELD, IDLE, REMOVED, Job
from htcd.transfer import TransferError, checkpoints, entries, outgoing, shadow_side, streams
from htcd.transfer.paths import Owner
from htcd.wire.client import AsyncConnection
from htcd.wire.errors import RemoteError, WireError

if TYPE_CHECKING:
    from htcd.schedd.shadow_api import ScheddForShadows

# HTCondor's shadow exit codes (the schedd's view of how a job's run ended)
JOB_EXITED = 100
JOB_KILLED = 102  # removed while running (htcd rm)
JOB_COREDUMPED = 103  # killed by a signal, and a core file came back with the output
JOB_SHOULD_REQUEUE = 107  # evicted, vacated, lost: back to idle
JOB_NOT_STARTED = 108  # the claim could not be activated
JOB_SHOULD_HOLD = 112
JOB_SHOULD_REMOVE = 113  # removed by policy (periodic_remove) while running
JOB_MISSED_DEFERRAL_TIME = 114  # the job could not start within its deferral window: held
JOB_EXITED_AND_CLAIM_CLOSING = 115
HOLD_MISSED_DEFERRAL = 20  # HoldReasonCode MissedDeferredExecutionTime, which the starter sends
CORE_FILE = re.compile(r"core(\.\d+)?")  # what the kernel names a core dump in the job's directory
RECONNECT_RETRY = 2.0  # seconds between attempts to reach a startd that does not answer
DISCONNECTED = "Socket between submit and execute hosts closed unexpectedly"


class Shadow:
    def __init__(self, schedd: ScheddForShadows, job: Job, slot_ad: ClassAd, claim_id: str, preempt: Any = None) -> None:
        self.schedd = schedd
        self.job = job
        self.slot_ad = slot_ad
        self.claim_id = claim_id
        self.preempt = preempt  # the negotiator's preemption decision for this match (forwarded)
        self.startd = str(slot_ad.get_value("StartdIpAddr") or slot_ad.get_value("MyAddress") or "")
        self.slot_name = str(slot_ad.get_value("Name", ""))
        self.conn: AsyncConnection | None = None
        self.claim_closed = False  # the startd ended the claim (eviction, CLAIM_WORKLIFE, draining)
        self.log = schedd.shadow_log
        self.task: asyncio.Task[Any] | None = None
        self.running = False  # a job of this claim is activated (or being reconnected)
        self.activated = False  # the startd started the current job
        self.kill_code = JOB_KILLED  # how a removal of the running job ends (113 when by policy)
        self.evicting = ""  # why the running job is being vacated (htcd vacate_job, schedd shutdown)
        self.input: dict[str, Any] = {}  # the current job's input entries (big files go when asked)

    @classmethod
    def for_reconnect(cls, schedd: ScheddForShadows, job: Job) -> Shadow:
        """A shadow for a job the schedd found RUNNING at start-up: its claim from the job ad."""
        slot = ClassAd()
        slot["Name"] = str(job.get("RemoteHost", "") or "")
        slot["StartdIpAddr"] = str(job.get("StartdIpAddr", "") or "")
        return cls(schedd, job, slot, str(job.get("ClaimId", "") or ""))

    @property
    def public_claim_id(self) -> str:
        """The claim id without its secret (safe to log)."""
        return self.claim_id.rsplit("#", 1)[0]  # the address may hold a '#' (CCBID=server#id)

    def _exit(self, job: Job, code: int) -> None:
        self.log.info("(%s) **** condor_shadow (condor_SHADOW) pid %d EXITING WITH STATUS %d", job.id_text,
                      os.getpid(), code)

    # -- the claim ------------------------------------------------------------------------
    async def run(self) -> None:
        job = self.job
        args: dict[str, Any] = {"claim_id": self.claim_id, "job_ad": job.wire(), "schedd_host": self.schedd.hostname,
                                "alive_interval": self.schedd.alive_interval()}
        if self.preempt is not None:
            args["preempt"] = self.preempt
        self.log.info("(%s) Requesting a claim on %s", job.id_text, self.slot_name)
        try:
            self.conn = await AsyncConnection.open(self.startd)
            reply = await self.conn.call("REQUEST_CLAIM", **args)
            self._claimed(reply)
        except (WireError, RemoteError) as exc:
            self.log.info("(%s) Request to run on %s %s was REFUSED: %s", job.id_text, self.slot_name, self.startd,
                          exc)
            self.schedd.unmatch(job)
            await self._close()
            return
        self.log.info("(%s) Request to run on %s %s was ACCEPTED", job.id_text, self.slot_name, self.startd)
        await self._serve_claim(job, reconnect=False)

    async def reconnect(self) -> None:
        """Find the running job again after a schedd restart, then carry on with the claim."""
        await self._serve_claim(self.job, reconnect=True)

    async def _serve_claim(self, job: Job, reconnect: bool) -> None:
        schedd = self.schedd
        schedd.claim_holders.add(self)
        try:
            reuse = await (self._resume(job) if reconnect else self.run_job(job))
            while reuse:
                await schedd.claims_settled()  # the last job's end is on disk before the claim runs another
                next_job = schedd.next_job_for_claim(self.slot_ad, job.owner)
                if next_job is None:
                    break
                job = self.job = next_job
                reuse = await self.run_job(job)
            if self.conn is not None and not self.claim_closed:
                self.log.info("(%s) releasing the claim on %s: no more work for it", job.id_text, self.slot_name)
                await self.conn.call("RELEASE_CLAIM", claim_id=self.claim_id)
        except (WireError, RemoteError) as exc:
            self.log.info("(%s) claim on %s ended: %s", job.id_text, self.slot_name, exc)
        finally:
            schedd.claim_holders.discard(self)
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
            self.startd = str(self.slot_ad.get_value("StartdIpAddr") or self.startd)

    async def _close(self) -> None:
        if self.conn is not None:
            await self.conn.close()
            self.conn = None

    # -- one job --------------------------------------------------------------------------
    async def run_job(self, job: Job) -> bool:
        """Run one job on the claim; False when the claim cannot be used again."""
        schedd = self.schedd
        self.kill_code, self.evicting = JOB_KILLED, ""
        gone = self._left_idle(job)
        if gone:  # removed or held while the claim was being requested: the claim may serve another job
            self.log.info("(%s) the job was %s before its claim was activated: not starting it", job.id_text, gone)
            schedd.job_not_started(job, gone)
            return True
        try:
            files = self._gather_input(job)
        except TransferError as exc:
            schedd.hold(job, str(exc), code=exc.code, subcode=exc.subcode)
            self._exit(job, JOB_SHOULD_HOLD)
            return True
        schedd.job_activating(job, self)
        self.log.info("(%s) activating claim on %s", job.id_text, self.slot_name)
        self.running, self.activated = True, False
        try:
            assert self.conn is not None
            self.input = files
            result = await self._follow(job, self.conn.stream("ACTIVATE_CLAIM", timeout=None, claim_id=self.claim_id,
                                                              job_ad=job.wire(), files=streams.wire_files(files)))
        except RemoteError as exc:
            self.running = False
            self.log.info("(%s) activating the claim on %s failed: %s", job.id_text, self.slot_name, exc)
            schedd.job_not_started(job, str(exc))
            self._exit(job, JOB_NOT_STARTED)
            return False
        except WireError as exc:
            if not self.activated:  # lost before the startd said the job started
                self.running = False
                self.log.info("(%s) lost %s before the job started: %s", job.id_text, self.slot_name, exc)
                schedd.job_not_started(job, str(exc))
                self._exit(job, JOB_NOT_STARTED)
                return False
            got = await self._reconnect(job, f"{DISCONNECTED} ({exc})")
            if got is None:
                return False
            result = got
        return await self._ended(job, result, files)

    async def _resume(self, job: Job) -> bool:
        self.running = True
        self.schedd.job_activating(job, self)
        result = await self._reconnect(job, "The schedd restarted while the job was running")
        return False if result is None else await self._ended(job, result, {})

    async def _follow(self, job: Job, stream: AsyncIterator[Any]) -> dict[str, Any]:
        """Read a run's stream: the activation, usage samples, then the final result."""
        result: dict[str, Any] = {}
        async for part in stream:
            kind = part.get("update") if isinstance(part, dict) else None
            if kind == "send_input":  # the startd takes the big input files now, as a chunk stream
                assert self.conn is not None
                sent = await streams.send_input(self.conn.writer, self.input, Owner.named(job.owner))
                self.log.info("(%s) sent %d bytes of input as a chunk stream", job.id_text, sent)
            elif kind == "activated":
                self.activated = True
                if job.removing or job.status == HELD:
                    # removed or held while the startd was still setting up the run: a stop sent
                    # then found no job to stop, so the job is stopped now and never counts as started
                    self.log.info("(%s) the job was %s while its claim was being activated: stopping it", job.id_text,
                                  "removed" if job.removing else "held")
                    self.schedd.spawn(self.kill(), f"kill {job.id_text}")
                else:
                    self.schedd.job_started(job, self.slot_ad, self)
            elif kind == "usage":
                self.schedd.job_usage(job, part.get("usage") or {})
            elif kind == "checkpoint":
                await self._checkpointed(job, part)
            elif kind == "reconnected":
                self._claimed(part)
                self.log.info("(%s) Reconnect SUCCESS: connection re-established with %s", job.id_text,
                              self.slot_name)
                self.schedd.job_reconnected(job, self.slot_name, self.startd, str(part.get("starter") or self.startd))
                if part.get("usage"):
                    self.schedd.job_usage(job, part["usage"])
            else:
                result = part if isinstance(part, dict) else {}
        return result

    async def _reconnect(self, job: Job, why: str) -> dict[str, Any] | None:
        """Find the job again at its startd (RECONNECT_JOB) and follow it to its end, retrying
        while the startd cannot be reached and the job's lease lasts; None when it failed (the
        job is then back to idle)."""
        schedd = self.schedd
        lease = float(job.get("JobLeaseDuration", 0) or 0)
        renewed = float(job.get("LastJobLeaseRenewal", 0) or job.get("JobCurrentStartDate", 0) or time.time())
        deadline = renewed + lease
        if lease <= 0 or not self.claim_id or not self.startd:
            self._reconnect_failed(job, "the job has no lease (JobLeaseDuration) or no claim to reconnect to")
            return None
        self.log.info("(%s) Trying to reconnect to disconnected job (%s); its lease lasts until %s", job.id_text, why,
                      time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(deadline)))
        schedd.job_disconnected(job, why, self.slot_name, self.startd)
        while True:
            if time.time() >= deadline:
                self._reconnect_failed(job, "Job lease expired")
                return None
            await self._close()
            try:
                self.log.info("(%s) Attempting to reconnect to %s %s (claim %s)", job.id_text, self.slot_name,
                              self.startd, self.public_claim_id)
                self.conn = await AsyncConnection.open(self.startd, timeout=10)
                return await self._follow(job, self.conn.stream("RECONNECT_JOB", timeout=None, claim_id=self.claim_id,
                                                                job_id=job.id_text))
            except RemoteError as exc:
                self._reconnect_failed(job, str(exc))
                return None
            except WireError as exc:
                self.log.info("(%s) cannot reach %s: %s; trying again in %g s", job.id_text, self.slot_name, exc,
                              RECONNECT_RETRY)
                await asyncio.sleep(RECONNECT_RETRY)

    def _reconnect_failed(self, job: Job, reason: str) -> None:
        self.running = False
        self.claim_closed = True  # nothing left to release
        self.log.info("(%s) Reconnect FAILED: %s", job.id_text, reason)
        self.schedd.reconnect_failed(job, reason, self.slot_name)
        self._exit(job, JOB_SHOULD_REQUEUE)

    async def _ended(self, job: Job, result: dict[str, Any], files: dict[str, Any]) -> bool:
        """Record how the job's run ended; True when the claim may run another job.  Output the
        startd kept to stream (``output_stream``) is fetched, or else dropped there."""
        try:
            return await self._record(job, result, files) and self.conn is not None
        finally:
            await self._drop_output(result)

    async def _record(self, job: Job, result: dict[str, Any], files: dict[str, Any]) -> bool:
        schedd = self.schedd
        self.running = False
        closing = result.get("claim_closed")
        if closing:
            self.claim_closed = True
            self.log.info("(%s) the startd closed the claim on %s: %s", job.id_text, self.slot_name, closing)
        evicted = str(result.get("evicted") or self.evicting or "")
        if job.removing:
            self.log.info("(%s) Job %s is being removed: %s", job.id_text, job.id_text, job.get("RemoveReason", ""))
            schedd.finish_removal(job)
            self._exit(job, self.kill_code)
            return not closing
        if job.status == HELD:
            schedd.job_vacated(job)
            self._exit(job, JOB_SHOULD_HOLD)
            return not closing
        if result.get("error"):
            reason = f"Error from {self.slot_name}: {result['error']}"
            self.log.info("(%s) Job %s going into Hold state: %s", job.id_text, job.id_text, reason)
            schedd.hold(job, reason, code=int(result.get("hold_code") or 6), subcode=int(result.get("hold_subcode") or 0))
            schedd.job_vacated(job)
            self._exit(job, JOB_SHOULD_HOLD)
            return not closing
        if result.get("hold_reason"):
            reason = str(result["hold_reason"])
            self.log.info("(%s) Job %s going into Hold state: %s", job.id_text, job.id_text, reason)
            code = int(result.get("hold_code") or 0)
            schedd.hold(job, reason, code=code, subcode=int(result.get("hold_subcode") or 0))
            schedd.job_vacated(job)
            self._exit(job, JOB_MISSED_DEFERRAL_TIME if code == HOLD_MISSED_DEFERRAL else JOB_SHOULD_HOLD)
            return False
        if evicted:
            await self._keep_evicted_output(job, result)
            self.log.info("(%s) Job %s is being evicted from %s: %s", job.id_text, job.id_text, self.slot_name,
                          evicted)
            schedd.job_lost(job, f"evicted from {self.slot_name}: {evicted}")
            self._exit(job, JOB_SHOULD_REQUEUE)
            return False
        sent = await self._write_output(job, result)
        if job.removing:  # removed while its output was coming back
            self.log.info("(%s) Job %s is being removed: %s", job.id_text, job.id_text, job.get("RemoveReason", ""))
            schedd.finish_removal(job)
            self._exit(job, self.kill_code)
            return not closing
        if job.status == HELD:  # the output could not be written
            schedd.job_vacated(job)
            self._exit(job, JOB_SHOULD_HOLD)
            return not closing
        sig = result.get("signal")
        core = _core_file(job, result) if sig is not None else ""
        if core:
            result["core_file"] = core
        self.log.info("(%s) Job %s terminated: %s%s", job.id_text, job.id_text,
                      f"killed by signal {sig}" if sig is not None else f"exited with status {result.get('exit_code')}",
                      f", core file {core}" if core else "")
        received = entries.size(files) + int(result.get("url_bytes") or 0)
        job.set(BytesSent=float(job.get("BytesSent", 0) or 0) + sent,  # over all runs, as HTCondor counts
                BytesRecvd=float(job.get("BytesRecvd", 0) or 0) + received)
        schedd.job_exited(job, result, bytes_received=received, bytes_sent=sent)
        code = JOB_COREDUMPED if core else JOB_EXITED_AND_CLAIM_CLOSING if closing else JOB_EXITED
        self.log.info("(%s) Reporting job exit reason %d and attempting to fetch new job.", job.id_text, code)
        self._exit(job, code)
        return not closing

    async def _checkpointed(self, job: Job, part: dict[str, Any]) -> None:
        """The job exited after a checkpoint (checkpoint_exit_code): keep the checkpoint in the
        job's spool, durably and replacing the previous one only once whole, record it in the job
        ad, then tell the startd (``CHECKPOINT_STORED``), whose starter restarts the job in place."""
        number = int(part.get("number") or 0)
        files = part.get("files") or {}
        why = ""
        try:
            written = await asyncio.to_thread(checkpoints.store, self._checkpoint_dir(job), number, files)
        except (OSError, TransferError) as exc:
            why = f"the access point could not keep checkpoint {number}: {exc}"
            self.log.error("(%s) %s", job.id_text, why)
        else:
            self.log.info("(%s) checkpoint %d stored in the spool (%d files, %d bytes)", job.id_text, number,
                          len(files), written)
            self.schedd.job_checkpointed(job, number, int(part.get("time") or time.time()), part.get("usage") or {})
        try:
            conn = await AsyncConnection.open(self.startd)
            try:
                await conn.call("CHECKPOINT_STORED", claim_id=self.claim_id, number=number, error=why)
            finally:
                await conn.close()
        except (WireError, RemoteError) as exc:
            self.log.info("(%s) cannot tell %s that checkpoint %d is stored: %s", job.id_text, self.slot_name,
                          number, exc)

    def _checkpoint_dir(self, job: Job) -> str:
        return checkpoints.checkpoint_dir(str(self.schedd.config.get("SPOOL") or "."), job.cluster_id, job.proc_id)

    def _left_idle(self, job: Job) -> str:
        """How ``job`` stopped being a job to start (removed, held, gone), or "" when it still is."""
        if job.removing or job.status == REMOVED or self.schedd.jobs.get(job.id) is not job:
            return "removed"
        if job.status == HELD:
            return "held"
        return "" if job.status == IDLE else f"in status {job.status}"

    def _spool(self, job: Job) -> str:
        return shadow_side.spool_dir(str(self.schedd.config.get("SPOOL") or "."), job.cluster_id, job.proc_id)

    def _gather_input(self, job: Job) -> dict[str, Any]:
        """The input entries, read as the owner; none with should_transfer_files = NO (with
        IF_NEEDED only the starter knows whether it can run the job in place as its owner)."""
        if str(job.get("ShouldTransferFiles", "") or "").upper() == "NO":
            return {}
        return shadow_side.gather_input(job.get, Owner.named(job.owner), spool=self._spool(job),
                                        inline=entries.Inline(streams.STREAM_OVER, streams.INLINE_BUDGET),
                                        checkpoint=self._checkpoint_dir(job))

    async def _write_output(self, job: Job, result: dict[str, Any]) -> int:
        """Write the output as the job's owner (big files fetched from the startd as a chunk
        stream); a file that cannot be written (or did not come back whole) holds the job with
        the reason, as HTCondor's transfer output failure (code 12)."""
        try:
            written, streamed = await outgoing.write_output(job.get, result, Owner.named(job.owner),
                                                            self._output_frames(result), self.slot_name)
        except TransferError as exc:
            await self._stream_broke(exc)
            self.log.error("(%s) %s", job.id_text, exc)
            self.schedd.hold(job, str(exc), code=exc.code, subcode=exc.subcode)
            return 0
        self._log_streamed(job, streamed)
        shadow_side.drop_spool(self._spool(job))
        return written

    async def _keep_evicted_output(self, job: Job, result: dict[str, Any]) -> int:
        """when_to_transfer_output = ON_EXIT_OR_EVICT: an evicted job's files wait in the spool
        and go back as input when it starts again."""
        if str(job.get("WhenToTransferOutput", "") or "").upper() != "ON_EXIT_OR_EVICT":
            return 0
        try:
            kept, streamed = await outgoing.keep_evicted(self._spool(job), result, self._output_frames(result),
                                                         self.slot_name)
        except (OSError, TransferError) as exc:
            await self._stream_broke(exc)
            self.log.error("(%s) cannot keep the evicted job's output: %s", job.id_text, exc)
            return 0
        self._log_streamed(job, streamed)
        return kept

    def _output_frames(self, result: dict[str, Any]) -> outgoing.Frames:
        """Opens the startd's stream of the output it kept (``FETCH_OUTPUT`` on the claim's
        connection); asked for once, the startd removes it whatever happens."""
        def frames(keys: list[str]) -> AsyncGenerator[Any, None]:
            note = result.pop("output_stream", None)
            if not isinstance(note, dict) or not note.get("id"):
                raise TransferError(f"Transfer output files failure: {self.slot_name} announced output files "
                                    "that it did not keep", outgoing.OUTPUT_HOLD)
            if self.conn is None:
                raise outgoing.StreamBroken(f"Transfer output files failure: the connection to {self.slot_name} "
                                            "is gone", outgoing.OUTPUT_HOLD)
            return self.conn.stream("FETCH_OUTPUT", timeout=outgoing.FRAME_TIMEOUT, id=str(note["id"]), keys=keys)
        return frames

    def _log_streamed(self, job: Job, streamed: int) -> None:
        if streamed:
            self.log.info("(%s) received %d bytes of output as a chunk stream", job.id_text, streamed)

    async def _stream_broke(self, exc: BaseException) -> None:
        """A stream that stopped half way leaves the claim's connection out of step: it goes (the
        startd then ends the claim), and the claim is not used again."""
        if isinstance(exc, outgoing.StreamBroken):
            await self._close()

    async def _drop_output(self, result: dict[str, Any]) -> None:
        """Output the startd kept that nobody fetched (a hold, a removal, an eviction): removed now."""
        note = result.pop("output_stream", None)
        if not isinstance(note, dict) or not note.get("id") or self.conn is None:
            return
        try:
            await self.conn.call("FETCH_OUTPUT", timeout=30.0, id=str(note["id"]), drop=True)
        except (WireError, RemoteError) as exc:
            self.log.info("(%s) could not drop the output %s kept: %s", self.job.id_text, self.slot_name, exc)

    async def kill(self, graceful: bool = False, evict: str = "") -> None:
        """Ask the startd to stop the job (``graceful``: its KillSig first); ``evict`` says why it
        goes back to idle.  The run's stream then ends with the job's end."""
        if evict:
            self.evicting = evict
        args: dict[str, Any] = {"claim_id": self.claim_id, "graceful": graceful}
        if evict:
            args.update(evict=True, reason=evict)
        try:
            conn = await AsyncConnection.open(self.startd)
            try:
                await conn.call("DEACTIVATE_CLAIM", **args)
            finally:
                await conn.close()
        except (WireError, RemoteError) as exc:
            self.log.info("(%s) cannot reach %s to stop the job: %s", self.job.id_text, self.slot_name, exc)


def fits(job: Job, slot_ad: ClassAd) -> bool:
    return symmetric_match(job.ad, slot_ad)


def _core_file(job: Job, result: dict[str, Any]) -> str:
    """Where the core file of a job killed by a signal was written (its output, in the Iwd), or ""."""
    try:
        targets = shadow_side.output_targets(job.get, result)
    except TransferError:
        return ""
    for path, entry in targets:
        if not entry.get("dir") and CORE_FILE.fullmatch(os.path.basename(path)):
            return path
    return ""
