"""The schedd's side of spooling (``htcd submit -spool``, ``htcd transfer_data``).

A spooled job is committed held (HoldReasonCode 16, "Spooling input data files"); the submitter
then uploads its input as a chunk stream (``SPOOL_JOB_FILES``, see ``htcd.transfer.chunks``)
and the schedd keeps it in HTCondor's layout:

    $(SPOOL)/<cluster>/cluster<C>.ickpt.subproc0            the executable, once per cluster
    $(SPOOL)/<cluster>/<proc>/cluster<C>.proc<P>.subproc0/  each proc's other input, its Iwd

Everything arrives first in ``$(SPOOL)/<cluster>/cluster<C>.stage/`` and is moved into place
only when the whole stream came through with every size and checksum right, so a broken
upload leaves no file that counts.  Stage-in then rewrites the job as HTCondor's schedd does
(``SUBMIT_Iwd``, ``SUBMIT_Cmd``, ``SUBMIT_Out``...: the submitter's values; ``Iwd`` the proc's
spool directory, ``Cmd`` the spooled executable), sets ``StageInStart``/``StageInFinish`` and
releases the jobs.  Their output lands in the spool (the Iwd) and stays there with the job
(``LeaveJobInQueue``) until ``TRANSFER_DATA`` streams it back (``StageOutStart``/
``StageOutFinish``) and the job leaves the queue; whatever way a job leaves, its spool goes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
from typing import TYPE_CHECKING, Any

from htcd.schedd.jobs import COMPLETED, HELD, IDLE, Job
from htcd.transfer import checkpoints, chunks, entries
from htcd.transfer.paths import Owner, TransferError, safe_relpath
from htcd.transfer.shadow_side import split_list, spool_dir
from htcd.wire.errors import CommandError, ProtocolError
from htcd.wire.framing import read_frame
from htcd.wire.server import Request

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd

SPOOLING_CODE = 16  # HTCondor's HoldReasonCode SpoolingInput
SPOOLING_REASON = "Spooling input data files"
FRAME_TIMEOUT = 300.0  # seconds an upload may pause between two frames
# the submitter's values, kept when stage-in points the job at its spool
KEPT = ("Iwd", "Cmd", "In", "Out", "Err", "TransferInput", "TransferOutputRemaps", "ShouldTransferFiles")


def cluster_dir(spool: str, cluster: int) -> str:
    return os.path.join(spool, str(cluster))


def job_dir(spool: str, cluster: int, proc: int) -> str:
    return os.path.join(spool, str(cluster), str(proc), f"cluster{cluster}.proc{proc}.subproc0")


def ickpt_path(spool: str, cluster: int) -> str:
    return os.path.join(spool, str(cluster), f"cluster{cluster}.ickpt.subproc0")


def stage_dir(spool: str, cluster: int) -> str:
    return os.path.join(spool, str(cluster), f"cluster{cluster}.stage")


def is_spooled(job: Job) -> bool:
    """Whether the job's files live in the spool (cheap: no ad is built)."""
    return "StageInStart" in job.proc


def _text(job: Job, name: str) -> str:
    """A string attribute's value ('' when absent or not a string)."""
    value = job.get(name, "")
    return value if isinstance(value, str) else ""


class Spool:
    """Spooled jobs' files: upload, download, and cleanup when jobs leave."""

    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd
        self.uploading: set[int] = set()  # clusters whose input is arriving now

    @property
    def root(self) -> str:
        return str(self.schedd.config.get("SPOOL") or ".")

    # -- start-up ----------------------------------------------------------------------
    def sweep_stages(self) -> None:
        """Uploads a stopped schedd left unfinished are not input: their staging goes (the jobs
        stay held, code 16, for the submitter to remove or submit again)."""
        root = self.root
        with contextlib.suppress(OSError):
            for name in os.listdir(root):
                if name.isdigit():
                    stage = stage_dir(root, int(name))
                    if os.path.isdir(stage):
                        shutil.rmtree(stage, ignore_errors=True)
                        self.schedd.log.info("cluster %s: removed an unfinished upload of spooled input", name)

    # -- upload ------------------------------------------------------------------------
    async def cmd_spool_job_files(self, req: Request) -> dict[str, Any]:
        """``SPOOL_JOB_FILES {cluster_id}``: once the schedd agrees (the partial reply ``{send:
        true}``) the submitter sends the chunk stream of the cluster's input: ``{"ickpt": C}``
        then the executable, ``{"job": "C.P"}`` then that proc's files."""
        schedd = self.schedd
        cid = req.require("cluster_id")
        if type(cid) is not int:
            raise CommandError("SPOOL_JOB_FILES: cluster_id must be an integer", "BAD_REQUEST")
        jobs = {j.proc_id: j for j in schedd.jobs.values() if j.cluster_id == cid}
        problem = self._upload_refusal(req, cid, jobs)
        if problem:
            raise CommandError(problem, "DENIED" if "not the owner" in problem else "BAD_REQUEST")
        self.uploading.add(cid)
        root = self.root
        stage = stage_dir(root, cid)
        now = int(time.time())
        for job in jobs.values():
            job.set(StageInStart=now)
        try:
            await req.send_partial({"send": True})
            got = await self._receive(req, cid, jobs, stage)
            live = {p: j for p, j in jobs.items() if schedd.jobs.get(j.id) is j}  # htcd rm may have come
            await asyncio.to_thread(self._place, cid, stage, got, live)
        except (TransferError, ProtocolError, OSError, TimeoutError, asyncio.IncompleteReadError,
                ConnectionError) as exc:
            why = str(exc) or type(exc).__name__
            await asyncio.to_thread(shutil.rmtree, stage, True)
            with contextlib.suppress(OSError):
                os.rmdir(cluster_dir(root, cid))
            await self._upload_failed(jobs, why)
            raise CommandError(f"spooling the input of cluster {cid} failed: {why}", "TRANSFER_FAILED") from None
        except asyncio.CancelledError:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        finally:
            self.uploading.discard(cid)
        await self._staged_in(cid, jobs, got)
        return {"jobs": len(jobs), "files": got["files"], "bytes": got["bytes"]}

    def _upload_refusal(self, req: Request, cid: int, jobs: dict[int, Job]) -> str:
        if not jobs:
            return f"cluster {cid} has no jobs in the queue"
        first = next(iter(jobs.values()))
        if not self.schedd.actions.may_act(req, first):
            return f"{req.identity} is not the owner ({first.owner}) of cluster {cid} or a queue superuser"
        if cid in self.uploading:
            return f"the input of cluster {cid} is being spooled already"
        waiting = [j for j in jobs.values() if j.status == HELD
                   and str(j.text("HoldReasonCode") or "").strip() == str(SPOOLING_CODE)]
        if len(waiting) != len(jobs):
            return f"cluster {cid} is not waiting for its input (its jobs are not held with code {SPOOLING_CODE})"
        return ""

    async def _next(self, req: Request) -> dict[str, Any]:
        frame = await asyncio.wait_for(read_frame(req.conn.reader), FRAME_TIMEOUT)
        if frame is None:
            raise ProtocolError("the submitter closed the connection in the middle of the upload")
        return frame

    async def _drain(self, req: Request) -> None:
        """Read and drop the rest of a refused stream, so the connection stays in step."""
        with contextlib.suppress(Exception):
            while not (await self._next(req)).get("done"):
                pass

    async def _receive(self, req: Request, cid: int, jobs: dict[int, Job], stage: str) -> dict[str, Any]:
        """Write the stream into ``stage``: ``ickpt`` (the executable) and one directory per proc."""
        os.makedirs(cluster_dir(self.root, cid), mode=0o755, exist_ok=True)
        shutil.rmtree(stage, ignore_errors=True)
        os.mkdir(stage, 0o700)
        current: dict[str, Any] = {"root": None}

        def open_file(rel: str, mode: int) -> int:
            if current["root"] is None:
                raise TransferError("file data arrived before the job it belongs to")
            if current["root"] == "ickpt":
                if current.get("taken"):
                    raise TransferError("more than one executable for the cluster")
                current["taken"] = True
                return os.open(os.path.join(stage, "ickpt"), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                               mode & 0o777)
            return chunks.beneath(current["root"])[0](rel, mode)

        def make_dir(rel: str, mode: int) -> None:
            if current["root"] in (None, "ickpt"):
                raise TransferError("a directory arrived outside a job")
            chunks.beneath(current["root"])[1](rel, mode)

        receiver = chunks.Receiver(open_file, make_dir, f"the spooled input of cluster {cid}")
        tops: dict[int, list[str]] = {p: [] for p in jobs}
        ickpt = False
        try:
            while not receiver.done:
                frame = await self._next(req)
                rest = receiver.feed(frame)
                name = frame.get("file") or frame.get("dir")
                if rest is None and name and current.get("proc") is not None:
                    top = safe_relpath(str(name)).split("/")[0]
                    if top not in tops[current["proc"]]:
                        tops[current["proc"]].append(top)
                if rest is None:
                    continue
                if "ickpt" in rest:
                    current.clear()
                    current["root"], ickpt = "ickpt", True
                elif "job" in rest:
                    c, _, p = str(rest["job"]).partition(".")
                    if not (c.isdigit() and p.isdigit()) or int(c) != cid or int(p) not in jobs:
                        raise TransferError(f"the upload names job {rest['job']!r}, not a job of cluster {cid}")
                    current.clear()
                    current["proc"] = int(p)
                    current["root"] = os.path.join(stage, p)
                    os.makedirs(current["root"], mode=0o700, exist_ok=True)
                else:
                    raise TransferError(f"unexpected frame in the upload: {sorted(rest)}")
        except TransferError:
            receiver.close()
            if not receiver.done:
                await self._drain(req)  # the submitter is still sending: stay in step to answer
            raise
        finally:
            receiver.close()
        return {"files": receiver.files, "bytes": receiver.bytes, "tops": tops, "ickpt": ickpt}

    def _place(self, cid: int, stage: str, got: dict[str, Any], jobs: dict[int, Job]) -> None:
        """Move the complete upload into HTCondor's layout (a worker thread: renames and chowns)."""
        root = self.root
        if not jobs:
            shutil.rmtree(stage, ignore_errors=True)
            return
        owner = Owner.named(next(iter(jobs.values())).owner)
        if got["ickpt"]:
            os.replace(os.path.join(stage, "ickpt"), ickpt_path(root, cid))
            _give(ickpt_path(root, cid), owner)
        for p in jobs:
            final = job_dir(root, cid, p)
            os.makedirs(os.path.dirname(final), mode=0o755, exist_ok=True)
            shutil.rmtree(final, ignore_errors=True)
            src = os.path.join(stage, str(p))
            if os.path.isdir(src):
                os.rename(src, final)
            else:
                os.mkdir(final, 0o700)
            _give(final, owner)
        shutil.rmtree(stage, ignore_errors=True)

    async def _upload_failed(self, jobs: dict[int, Job], why: str) -> None:
        reason = f"{SPOOLING_REASON} failed: {why}"
        for job in jobs.values():
            if self.schedd.jobs.get(job.id) is job:
                job.set(HoldReason=reason, HoldReasonCode=SPOOLING_CODE)
                job.proc.pop("StageInStart", None)
        await asyncio.to_thread(self.schedd.queue.set_proc_ads, {j.id: j.proc for j in jobs.values()})
        self.schedd.log.info("job %s...: %s", next(iter(jobs.values())).id_text, reason)

    async def _staged_in(self, cid: int, jobs: dict[int, Job], got: dict[str, Any]) -> None:
        """Point each job at its spool, mark the stage-in done and release the jobs."""
        schedd = self.schedd
        now = int(time.time())
        root = self.root
        live = [j for j in jobs.values() if schedd.jobs.get(j.id) is j]
        for job in live:
            attrs: dict[str, Any] = {f"SUBMIT_{k}": job.get(k) for k in KEPT if isinstance(job.get(k), str)}
            attrs["Iwd"] = job_dir(root, cid, job.proc_id)
            if got["ickpt"]:
                attrs["Cmd"] = ickpt_path(root, cid)
            stdin = _text(job, "In")
            if stdin and stdin != "/dev/null":
                attrs["In"] = entries.base(stdin)
            for attr in ("Out", "Err"):
                dest = _text(job, attr)
                if dest and dest != "/dev/null":
                    attrs[attr] = entries.base(dest)
            if not got["ickpt"] and job.get("TransferExecutable", True) is not False:
                attrs["Cmd"] = entries.base(_text(job, "Cmd"))
            # the rest of what arrived is transfer_input_files, now by its name in the spool
            not_listed = {attrs.get("In"), None if got["ickpt"] else attrs.get("Cmd")}
            names = [n for n in got["tops"].get(job.proc_id, []) if n not in not_listed]
            urls = [n for n in split_list(job.get("TransferInput")) if "://" in n]
            attrs["TransferInput"] = ",".join(names + urls)
            attrs["TransferOutputRemaps"] = ""
            # the spool is the access point's own: the job's files always travel to and from it
            attrs["ShouldTransferFiles"] = "YES"
            attrs.update(StageInStart=int(job.get("StageInStart", now) or now), StageInFinish=now)
            job.set(**attrs)
            schedd.set_status(job, IDLE)
            for k in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode"):
                job.proc.pop(k, None)
        await asyncio.to_thread(schedd.queue.set_proc_ads, {j.id: j.proc for j in live})
        schedd.log.info("cluster %d: spooled input of %d job(s) arrived (%d files, %d bytes); released", cid,
                        len(live), got["files"], got["bytes"])
        schedd.publish_soon()
        schedd.reschedule()

    # -- completion and cleanup --------------------------------------------------------
    def note_output(self, job: Job, result: dict[str, Any]) -> None:
        """A spooled job's output was written into its spool: remember which files it is
        (``SpooledOutputFiles``), so ``TRANSFER_DATA`` sends back output, not input."""
        names: list[str] = []
        for attr in ("Out", "Err"):
            dest = _text(job, attr)
            if dest and dest != "/dev/null" and not os.path.isabs(dest) and dest not in names:
                names.append(dest)
        for rel in (result.get("files") or {}):
            top = str(rel).split("/")[0]
            if top and top not in names:
                names.append(top)
        job.set(SpooledOutputFiles=",".join(names))

    @staticmethod
    def leave_in_queue(job: Job) -> bool:
        """The job's LeaveJobInQueue, evaluated now (a completed job then stays in the queue)."""
        if job.text("LeaveJobInQueue") in (None, "false", "FALSE", "False"):
            return False
        return job.ad.eval("LeaveJobInQueue") is True

    async def sweep_completed(self) -> None:
        """Completed jobs kept by LeaveJobInQueue leave once it turns false (10 days after
        completion for spooled jobs whose output nobody fetched)."""
        for job in [j for j in self.schedd.jobs.values() if j.status == COMPLETED]:
            if self.schedd.jobs.get(job.id) is job and not self.leave_in_queue(job):
                self.schedd.log.info("job %s: LeaveJobInQueue is false now; it leaves the queue", job.id_text)
                self.schedd.leave_queue(job)

    def forget(self, job: Job) -> None:
        """The job left the queue: its spool directory goes (and the cluster's, with its last job),
        with the output an eviction kept for its next start (ON_EXIT_OR_EVICT) and a
        self-checkpointing job's checkpoint; a job that never used the spool costs one stat."""
        root, cid, pid = self.root, job.cluster_id, job.proc_id
        last = cid not in self.schedd.clusters
        spooled = is_spooled(job)
        kept = [d for d in (checkpoints.checkpoint_dir(root, cid, pid), spool_dir(root, cid, pid)) if os.path.isdir(d)]
        if not spooled and not kept:
            return

        def remove() -> None:
            for d in kept:
                shutil.rmtree(d, ignore_errors=True)
            if spooled:
                shutil.rmtree(job_dir(root, cid, pid), ignore_errors=True)
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(job_dir(root, cid, pid)))
            if last and spooled:
                with contextlib.suppress(OSError):
                    os.unlink(ickpt_path(root, cid))
            with contextlib.suppress(OSError):
                os.rmdir(cluster_dir(root, cid))

        asyncio.get_running_loop().run_in_executor(None, remove)

    # -- download ----------------------------------------------------------------------
    async def cmd_transfer_data(self, req: Request) -> dict[str, Any]:
        """``TRANSFER_DATA {ids?, constraint?}``: stream the spooled output of the selected
        completed jobs; ``TRANSFER_DATA {fetched: [ids]}``: the submitter has it all, so the jobs
        get StageOutFinish and leave the queue."""
        fetched = req.arg("fetched")
        if fetched is not None:
            if not isinstance(fetched, list) or not all(isinstance(x, str) for x in fetched):
                raise CommandError("TRANSFER_DATA: fetched must be a list of job ids", "BAD_REQUEST")
            return await self._fetched(req, fetched)
        schedd = self.schedd
        selected = await schedd.actions.select(req)
        skipped: dict[str, str] = {}
        sent: list[str] = []
        files = size = 0
        now = int(time.time())
        for job in selected:
            if not schedd.actions.may_act(req, job):
                skipped[job.id_text] = f"denied: {req.identity} is not the owner ({job.owner}) or a queue superuser"
                continue
            if not is_spooled(job) or "StageInFinish" not in job.proc:
                skipped[job.id_text] = "not spooled"
                continue
            if job.status != COMPLETED:
                skipped[job.id_text] = "not completed"
                continue
            job.set(StageOutStart=now)
            await req.send_partial({"job": job.id_text, **self._placement(job)})
            spool = job_dir(self.root, job.cluster_id, job.proc_id)
            for name in split_list(job.get("SpooledOutputFiles")):
                try:
                    rel = safe_relpath(name, "SpooledOutputFiles")
                    for frame in chunks.tree_frames(spool, rel):
                        if "end" in frame:
                            files += 1
                            size += int(frame["size"])
                        await req.send_partial(frame)
                except FileNotFoundError:
                    continue
                except (OSError, TransferError) as exc:
                    raise CommandError(f"job {job.id_text}: cannot read {name} in its spool: {exc}",
                                       "TRANSFER_FAILED") from None
            sent.append(job.id_text)
        if not sent and not skipped:
            raise CommandError("no jobs matched", "NO_MATCH")
        return {**chunks.done_frame(files, size), "jobs": sent, "skipped": skipped}

    def _placement(self, job: Job) -> dict[str, str]:
        """What the submitter needs to put the output where the submit file said."""
        out: dict[str, str] = {}
        for k in ("Iwd", "Out", "Err", "TransferOutputRemaps"):
            value = job.get(f"SUBMIT_{k}")
            out[k] = value if isinstance(value, str) else ""
        out["SpoolOut"], out["SpoolErr"] = _text(job, "Out"), _text(job, "Err")
        out["TransferOutput"] = _text(job, "TransferOutput")
        return out

    async def _fetched(self, req: Request, ids: list[str]) -> dict[str, Any]:
        schedd = self.schedd
        now = int(time.time())
        done: list[str] = []
        for text in ids:
            c, _, p = text.partition(".")
            job = schedd.jobs.get((int(c), int(p))) if c.isdigit() and p.isdigit() else None
            if job is None or not schedd.actions.may_act(req, job) or job.status != COMPLETED or not is_spooled(job):
                continue
            job.set(StageOutFinish=now, LeaveJobInQueue=False)
            schedd.store.persist(job)
            schedd.leave_queue(job)
            done.append(text)
        return {"jobs": done}


def _give(path: str, owner: Owner | None) -> None:
    """A root schedd gives the spooled files to the job's owner (the shadow reads and writes
    them as the owner); the directories above stay the schedd's, searchable."""
    if owner is None:
        return
    os.chown(path, owner.uid, owner.gid, follow_symlinks=False)
    if os.path.isdir(path) and not os.path.islink(path):
        for base, dirs, files in os.walk(path):
            for name in dirs + files:
                os.chown(os.path.join(base, name), owner.uid, owner.gid, follow_symlinks=False)

