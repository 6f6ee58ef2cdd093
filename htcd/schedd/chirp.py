"""Chirp from a running job (condor_chirp): the job's own ad read and changed, lines in its user log.

HTCondor's job talks to its starter, which relays to the shadow, which changes the schedd's ad.
In htcd the startd relays a job's chirp here with ``CHIRP_JOB`` (level DAEMON) and the job's
claim id: only the execute point that holds the job's claim may speak for it (docs/inside.md).
"""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any

from htcd.schedd.attrcheck import check_edit
from htcd.schedd.jobs import RUNNING, Job
from htcd.schedd.query import PRIVATE
from htcd.schedd.queue import update_procs
from htcd.wire.errors import CommandError
from htcd.wire.server import Request

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd

OPERATIONS = ("set_job_attr", "get_job_attr", "ulog")


def generic_event(cluster: int, proc: int, text: str, when: float | None = None) -> str:
    """A generic event (008): one line of the job's own text."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() if when is None else when))
    line = " ".join(text.splitlines())
    return f"008 ({cluster:03d}.{proc:03d}.000) {stamp} {line}\n...\n"


class Chirp:
    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd

    def _job(self, req: Request) -> Job:
        cluster, proc = req.arg_int("cluster", required=True), req.arg_int("proc", required=True)
        job = self.schedd.jobs.get((cluster, proc))
        claim = req.arg_str("claim_id", required=True).encode("utf-8", "surrogatepass")
        held = str(job.get("ClaimId", "") or "").encode() if job is not None else b""
        if job is None or job.get("JobStatus") != RUNNING or not held or not secrets.compare_digest(held, claim):
            raise CommandError(f"job {cluster}.{proc} is not running on the claim that sent this chirp",
                               "NOT_RUNNING")
        return job

    async def cmd_chirp_job(self, req: Request) -> dict[str, Any]:
        """``CHIRP_JOB {cluster, proc, claim_id, op, attr?, value?, text?}``."""
        job = self._job(req)
        op = req.arg_str("op", required=True)
        if op == "get_job_attr":
            attr = req.arg_str("attr", required=True)
            if attr.lower() in (p.lower() for p in PRIVATE):  # the claim's secret, as no query shows it
                return {"value": None}
            return {"value": job.text(attr)}
        if op == "ulog":
            self.schedd.events.event(job, generic_event(job.cluster.id, job.proc_id, req.arg_str("text", "")))
            return {}
        if op != "set_job_attr":
            raise CommandError(f"unknown chirp operation {op!r} (one of {', '.join(OPERATIONS)})", "BAD_REQUEST")
        attr, value = req.arg_str("attr", required=True), req.arg_str("value", required=True)
        why = check_edit(attr, value)
        if why:
            raise CommandError(why, "BAD_REQUEST")
        changed = {job.id: {**job.proc, attr: value}}
        await self.schedd.store.commit(lambda cur: update_procs(cur, changed))
        job.proc[attr] = value
        return {}
