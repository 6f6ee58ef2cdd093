"""Looking inside a running job: where it runs (from the schedd's ad) and the startd's
``STARTER_PEEK`` (htcd tail)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from htcd.client.schedd import ScheddClient
from htcd.errors import UserError
from htcd.wire.address import Address
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError, WireError
from htcd.wire.framing import encode

RUNNING = 2
STATUS_NAMES = {1: "idle", 2: "running", 3: "removed", 4: "completed", 5: "held", 6: "transferring output",
                7: "suspended"}


@dataclass
class Where:
    """A job's place as the schedd's ad says (``JobStatus``; ``StartdIpAddr`` while it runs)."""

    cluster: int
    proc: int
    status: int
    startd: str
    host: str


class NotStartedThere(UserError):
    """The job's startd does not run it (yet): the schedd's ad ran ahead of the starter, or the
    job has just left.  Worth asking again while the schedd says the job runs."""


def parse_job_id(text: str) -> tuple[int, int | None]:
    """``cluster.proc`` or ``cluster`` (its first job)."""
    head, _, tail = text.partition(".")
    try:
        return int(head), (int(tail) if tail else None)
    except ValueError:
        raise UserError(f"{text!r} is not a job id (cluster.proc or cluster)") from None


def locate(schedd: Address, job: str) -> Where:
    """The job's status and, while it runs, its startd, from the schedd's queue."""
    cluster, proc = parse_job_id(job)
    constraint = f"ClusterId == {cluster}" + (f" && ProcId == {proc}" if proc is not None else "")
    with ScheddClient(schedd, timeout=30.0) as client:
        ads = [ad for chunk in client.query(constraint, ["ClusterId", "ProcId", "JobStatus", "StartdIpAddr",
                                                         "RemoteHost"]) for ad in chunk]
    if not ads:
        raise UserError(f"job {job} is not in the queue")
    ad = ads[0]

    def text(key: str) -> str:
        value = ad.get(key, "")
        return value[1:-1] if value.startswith('"') and value.endswith('"') else value

    return Where(int(text("ClusterId")), int(text("ProcId")), int(text("JobStatus") or 0), text("StartdIpAddr"),
                 text("RemoteHost"))


def not_running(where: Where) -> str:
    state = STATUS_NAMES.get(where.status, f"in status {where.status}")
    return f"job {where.cluster}.{where.proc} is not running (it is {state})"


def locate_running(schedd: Address, job: str, auto_retry: bool, period: float = 2.0) -> Where:
    """Where ``job`` runs; with ``auto_retry`` (condor_tail's and condor_ssh_to_job's
    -auto-retry) ask again every ``period`` seconds until it runs, else refuse as not running."""
    where = locate(schedd, job)
    while where.status != RUNNING or not where.startd:
        if not auto_retry:
            raise UserError(not_running(where))
        time.sleep(period)  # a user's wait for the job, not a test's timing
        where = locate(schedd, job)
    return where


def peek(where: Where, file: str, offset: int | None, maxbytes: int) -> tuple[bytes, int]:
    """``STARTER_PEEK`` on the job's startd: (bytes, next offset)."""
    args: dict[str, Any] = {"cluster": where.cluster, "proc": where.proc, "file": file, "maxbytes": maxbytes}
    if offset is not None:
        args["offset"] = offset
    try:
        with Connection(Address.parse(where.startd), timeout=30.0) as conn:
            reply = conn.call("STARTER_PEEK", **args)
    except WireError as exc:
        raise UserError(f"cannot tail job {where.cluster}.{where.proc} on {where.host}: {exc}") from None
    return bytes(reply.get("data") or b""), int(reply.get("offset") or 0)



CHIRP_CONFIG = ".chirp.config"


def chirp_config(environ: dict[str, str]) -> tuple[Address, str]:
    """(startd address, cookie) from the job's ``.chirp.config``: ``_CONDOR_CHIRP_CONFIG``, else the
    file in ``_CONDOR_SCRATCH_DIR``, else in the current directory."""
    path = environ.get("_CONDOR_CHIRP_CONFIG") or \
        f"{environ.get('_CONDOR_SCRATCH_DIR') or '.'}/{CHIRP_CONFIG}"
    try:
        with open(path) as f:
            words = f.read().split()
    except FileNotFoundError:
        raise UserError(f"{path} does not exist: chirp works only inside a running job submitted with "
                        "+WantIOProxy = true (want_io_proxy = true)") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None
    if len(words) != 2:
        raise UserError(f"{path}:1: not a chirp configuration (expected ADDRESS COOKIE)")
    return Address.parse(words[0]), words[1]


def chirp(environ: dict[str, str], op: str, **args: str) -> dict[str, Any]:
    """One chirp request through the job's startd; its reply."""
    address, cookie = chirp_config(environ)
    try:
        with Connection(address, timeout=60.0) as conn:
            reply = conn.call("CHIRP", cookie=cookie, op=op, **args)
    except WireError as exc:
        raise UserError(f"chirp {op} failed: {exc}") from None
    return reply if isinstance(reply, dict) else {}


def ssh(where: Where, command: str, tty: tuple[int, int] | None, stdin_fd: int,
        write: Callable[[str, bytes], None], window: Callable[[], tuple[int, int] | None] | None = None) -> int:
    """``SSH_TO_JOB`` on the job's startd: relays ``stdin_fd`` to the process (a thread) and its
    output to ``write(stream, data)``; the process's exit code."""
    import contextlib
    import os
    import signal
    import threading

    args: dict[str, Any] = {"cluster": where.cluster, "proc": where.proc, "remote_command": command}
    if tty is not None:
        args["tty"] = list(tty)
    try:
        conn = Connection(Address.parse(where.startd), timeout=None)
    except WireError as exc:
        raise UserError(f"cannot reach job {where.cluster}.{where.proc} on {where.host}: {exc}") from None

    lock, done = threading.Lock(), threading.Event()

    def send(frame: dict[str, Any], last: bool = False) -> None:
        with lock:
            if done.is_set():
                return
            if last:
                done.set()
            with contextlib.suppress(OSError):  # the connection is gone: the reply loop says so
                conn.sock.sendall(encode(frame))

    def pump() -> None:
        while True:
            try:
                data = os.read(stdin_fd, 65536)
            except OSError:
                data = b""
            if not data:
                send({"eof": True})
                return
            send({"stdin": data})

    if window is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGWINCH, lambda *_: send({"winch": list(window() or (24, 80))}))
    code = 0
    started = False
    try:
        for part in conn.stream("SSH_TO_JOB", **args):
            if isinstance(part, dict):
                if part.get("started"):  # the startd reads input from now on
                    started = True
                    threading.Thread(target=pump, daemon=True, name="stdin").start()
                for key in ("out", "err"):
                    if isinstance(part.get(key), bytes):
                        write(key, part[key])
                if "exit" in part:
                    code = int(part["exit"])
                    send({"bye": True}, last=True)
    except WireError as exc:
        if not started and isinstance(exc, RemoteError) and exc.code == "NOT_RUNNING":
            raise NotStartedThere(f"ssh_to_job {where.cluster}.{where.proc}: {exc}") from None
        raise UserError(f"ssh_to_job {where.cluster}.{where.proc}: {exc}") from None
    finally:
        conn.close()
    return code
