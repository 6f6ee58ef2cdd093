"""The startd's commands for looking inside a running job: ``STARTER_PEEK`` (htcd tail) and
``CHIRP`` (htcd chirp, from inside the job).

For a peek the tool names the job (cluster and proc, read from the schedd's ad); the startd finds
the slot running it, lets only the job's owner or a queue superuser in (htcd/starter/peek.py) and
answers from the starter's files.  A chirp carries the cookie of the job's ``.chirp.config``
(htcd/starter/chirp.py); the startd relays it to the job's schedd with the job's claim id
(``CHIRP_JOB``), which proves to the schedd that the request comes from where the job runs.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from htcd.starter import peek, shell
from htcd.starter.starter import STDERR, STDOUT, Starter
from htcd.wire.client import AsyncConnection
from htcd.wire.errors import CommandError, WireError
from htcd.wire.server import Request

if TYPE_CHECKING:
    from htcd.startd.daemon import Startd
    from htcd.startd.slot import Claim

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

    def _chirper(self, cookie: str) -> tuple[Starter, Claim]:
        """The starter whose job holds ``cookie``, and its claim."""
        given = cookie.encode("utf-8", "surrogatepass")
        for slot in self.startd.all_slots():
            starter = slot.starter
            if starter is None or slot.claim is None or not starter.chirp_cookie:
                continue
            if secrets.compare_digest(starter.chirp_cookie.encode(), given):
                return starter, slot.claim
        raise CommandError("no running job holds that chirp cookie (the job has ended, or its .chirp.config "
                           "is not this execute point's)", "PERMISSION_DENIED")

    async def _schedd(self, host: str) -> str:
        """The address of the schedd that claimed the slot (its host, from the claim request),
        from the collector."""
        if not host:
            raise CommandError("the claim does not say which schedd holds it", "FAILED")
        quoted = host.replace("\\", "\\\\").replace('"', '\\"')
        ads = await self.startd.send_to_collector("QUERY_ADS", ad_type="Scheduler",
                                                  constraint=f'Name == "{quoted}" || Machine == "{quoted}"',
                                                  projection=["MyAddress"])
        text = str((ads or [{}])[0].get("MyAddress", "") or "").strip('"')
        if not text:
            raise CommandError(f"the collector knows no schedd on {host}", "FAILED")
        return text

    async def cmd_chirp(self, req: Request) -> dict[str, Any]:
        """``CHIRP {cookie, op, attr?, value?, text?}`` from inside a job with ``WantIOProxy``."""
        starter, claim = self._chirper(req.arg_str("cookie", required=True))
        job = starter.job_ad
        args = {k: req.args[k] for k in ("op", "attr", "value", "text") if isinstance(req.args.get(k), str)}
        self.startd.log.info("job %s.%s chirps %s", job.get_value("ClusterId"), job.get_value("ProcId"),
                             args.get("op"))
        try:
            conn = await AsyncConnection.open(await self._schedd(claim.client), timeout=30)
            try:
                reply = await conn.call("CHIRP_JOB", cluster=job.get_value("ClusterId"), proc=job.get_value("ProcId"),
                                        claim_id=claim.id, **args)
            finally:
                await conn.close()
        except WireError as exc:
            raise CommandError(f"the job's schedd did not take the chirp: {exc}", "FAILED") from None
        return reply if isinstance(reply, dict) else {}

    async def cmd_ssh_to_job(self, req: Request) -> dict[str, Any]:
        """``SSH_TO_JOB {cluster, proc, remote_command?, tty?: [rows, cols]}``: a shell or a command in the
        job's sandbox, as the job's user; output as partial replies, the exit code last."""
        if not self.startd.config.get_bool("ENABLE_SSH_TO_JOB", True):
            raise CommandError(f"ENABLE_SSH_TO_JOB is false on {self.startd.hostname}: this execute point does "
                               "not allow ssh_to_job", "PERMISSION_DENIED")
        starter = self.running(req, "ssh to")
        runas = starter.runas
        tty = req.args.get("tty")
        size = (int(tty[0]), int(tty[1])) if isinstance(tty, list) and len(tty) == 2 else None
        argv = shell.argv_for(starter.environment, req.arg_str("remote_command", ""), size is not None)
        session = shell.Session(argv, starter.workdir or starter.sandbox, dict(starter.environment),
                                runas.uid if runas else None, runas.gid if runas else None, size,
                                **shell.for_job(starter))
        self.startd.log.info("ssh_to_job: %s runs %s in job %s.%s's sandbox", req.identity, argv,
                             req.args["cluster"], req.args["proc"])
        try:
            await session.start()
        except OSError as exc:
            raise CommandError(f"cannot start {argv[0]} in the job's sandbox: {exc.strerror or exc}", "FAILED") from None
        code = await session.relay(req.conn.reader, req.send_partial)  # says {started} first
        return {"exit": code}
