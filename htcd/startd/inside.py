"""The startd's commands for looking inside a running job: ``STARTER_PEEK`` (htcd tail).

The tool names the job (cluster, proc and its ``User``, read from the schedd's ad); the startd
finds the slot running it, lets only the job's owner or a queue superuser in (htcd/starter/peek.py)
and answers from the starter's files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from htcd.starter import peek
from htcd.starter.starter import STDERR, STDOUT, Starter
from htcd.wire.errors import CommandError
from htcd.wire.server import Request

if TYPE_CHECKING:
    from htcd.startd.daemon import Startd

MAX_PEEK = 1024 * 1024  # the most one STARTER_PEEK returns of a file


class Inside:
    def __init__(self, startd: Startd) -> None:
        self.startd = startd

    def running(self, req: Request, what: str) -> Starter:
        """The starter of the job the request names, once the caller may ``what`` it."""
        cluster, proc = req.arg_int("cluster", required=True), req.arg_int("proc", required=True)
        for slot in self.startd.all_slots():
            starter = slot.starter
            if starter is None or slot.claim is None:
                continue
            job = starter.job_ad
            if (job.get_value("ClusterId"), job.get_value("ProcId")) != (cluster, proc):
                continue
            why = peek.refusal(self.startd.config, req.identity, job, what)
            if why is not None:
                self.startd.log.info("%s refused: %s", req.command, why)
                raise CommandError(why, "PERMISSION_DENIED")
            if starter.pid is None or not starter.sandbox:
                raise CommandError(f"job {cluster}.{proc} is not running yet on {slot.name}", "NOT_RUNNING")
            return starter
        raise CommandError(f"job {cluster}.{proc} is not running on this machine", "NOT_RUNNING")

    async def cmd_starter_peek(self, req: Request) -> dict[str, Any]:
        """``STARTER_PEEK {cluster, proc, file, offset?, maxbytes?}``: bytes of the job's stdout,
        stderr or an output file, with the offset to ask from next time."""
        starter = self.running(req, "tail")
        which = req.arg_str("file", "stdout")
        if which not in ("stdout", "stderr") and which not in peek.output_names(starter.job_ad):
            raise CommandError(f"{which} is not in job {req.args['cluster']}.{req.args['proc']}'s "
                               "transfer_output_files: only those files may be tailed", "BAD_REQUEST")
        maxbytes = min(max(req.arg_int("maxbytes", peek.DEFAULT_MAXBYTES), 0), MAX_PEEK)
        offset = req.args.get("offset")
        if offset is not None and (not isinstance(offset, int) or isinstance(offset, bool) or offset < 0):
            raise CommandError("STARTER_PEEK: argument 'offset' must be a non-negative integer", "BAD_REQUEST")
        shared = bool(starter.io is not None and starter.io.shared_fs)
        path = peek.path_of(starter.job_ad, starter.sandbox, shared, which, STDOUT, STDERR)
        data, after = peek.read(path, offset, maxbytes)
        return {"data": data, "offset": after}
