"""The submitter's side of spooling, over a :class:`htcd.client.schedd.ScheddClient`'s
connection: upload a cluster's input (``htcd submit -spool``) and fetch spooled output
(``htcd transfer_data``), both as chunk streams (``htcd.transfer.chunks``), so no file is ever
read whole into memory and none is limited by the frame size."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import Any

from htcd.classad import ClassAd
from htcd.errors import UserError
from htcd.transfer import chunks, entries
from htcd.transfer.paths import TransferError, is_url, mkdir_as_owner, open_as_owner
from htcd.transfer.shadow_side import in_iwd, input_names, spooled_output_target
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError, WireError
from htcd.wire.framing import encode, recv_frame

SPOOLING_CODE = 16  # HTCondor's HoldReasonCode SpoolingInput (the schedd checks it: htcd/schedd/spool.py)
SPOOLING_REASON = "Spooling input data files"
# condor_submit -spool's LeaveJobInQueue: a completed job waits up to 10 days for its output to be fetched
LEAVE_IN_QUEUE = ("JobStatus == 4 && (CompletionDate =?= UNDEFINED || CompletionDate == 0 || "
                  "((time() - CompletionDate) < 864000))")


# -- submit -spool -----------------------------------------------------------------------
def mark_spooled(cluster_ad: dict[str, str], procs: list[dict[str, str]]) -> None:
    """The cluster is committed held until its input has arrived (as condor_submit -spool);
    the hold reason is each proc's own, so the release after stage-in takes it away."""
    from htcd.classad import unparse

    cluster_ad["JobStatus"] = "5"
    for proc in procs:
        proc.update(HoldReason=unparse(SPOOLING_REASON), HoldReasonCode=str(SPOOLING_CODE), HoldReasonSubCode="0")
    if cluster_ad.get("LeaveJobInQueue", "false").strip().lower() == "false":
        cluster_ad["LeaveJobInQueue"] = LEAVE_IN_QUEUE


def _ads(cluster_ad: dict[str, str], procs: list[dict[str, str]]) -> list[ClassAd]:
    return [ClassAd.from_wire({**cluster_ad, **p}) for p in procs]


def _shared_executable(ads: list[ClassAd]) -> str | None:
    """The executable, when every proc transfers the same one (stored once per cluster)."""
    cmds = {str(ad.get_value("Cmd", "")) for ad in ads if ad.get_value("TransferExecutable", True) is not False}
    if len(cmds) == 1 and all(ad.get_value("TransferExecutable", True) is not False for ad in ads):
        return cmds.pop()
    return None


def _inputs(ad: ClassAd, skip_exec: bool) -> list[tuple[str, str, str]]:
    """(name as listed, local path, name in the spool: "" for a directory's contents)."""
    iwd = str(ad.get_value("Iwd", "") or "")
    out = []
    names = input_names(ad.get_value)
    if skip_exec and ad.get_value("TransferExecutable", True) is not False:
        names = names[1:]
    for name in names:
        if name and not is_url(name):
            out.append((name, in_iwd(iwd, name), "" if name.endswith("/") else entries.base(name)))
    return out


def check_inputs(cluster_ad: dict[str, str], procs: list[dict[str, str]], source: str) -> None:
    """Every input file must exist and be readable now: else the whole submission is refused,
    naming the file (nothing is queued)."""
    if any(k in cluster_ad for k in ("JobMaterializeLimit", "JobMaterializeMaxIdle")):
        raise UserError(f"{source}: -spool cannot be used with max_materialize or max_idle")
    seen: set[str] = set()
    for p, ad in enumerate(_ads(cluster_ad, procs)):
        for name, path, _ in _inputs(ad, skip_exec=False):
            if path in seen:
                continue
            seen.add(path)
            try:
                st = os.stat(path)
                if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                    raise OSError(0, "neither a regular file nor a directory")
                if not os.access(path, os.R_OK):
                    raise OSError(0, "not readable")
            except OSError as exc:
                raise UserError(f"{source}: job {p}: cannot spool input file {path} ({name}): "
                                f"{exc.strerror}") from None


def local_frames(path: str, rel: str) -> Iterator[dict[str, Any]]:
    """The chunk stream of a submitter's file or directory, read as the submitter (links are
    followed at the top and to files inside a directory, as the shadow's own input transfer
    does; links to directories inside are left out)."""
    try:
        fd = open_as_owner(path, None, write=False) if not os.path.isdir(path) else -1
        if fd >= 0:
            yield from chunks.file_frames(fd, rel or entries.base(path), os.fstat(fd).st_mode)
            return
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, exc.filename or path) from None
    if rel:
        yield {"dir": rel, "mode": os.stat(path).st_mode & 0o7777}
    for name in sorted(os.listdir(path)):
        child = os.path.join(path, name)
        sub = f"{rel}/{name}" if rel else name
        st = os.lstat(child)
        if stat.S_ISLNK(st.st_mode):
            try:
                st = os.stat(child)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
        if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
            yield from local_frames(child, sub)


def input_frames(cid: int, cluster_ad: dict[str, str], procs: list[dict[str, str]]) -> Iterator[dict[str, Any]]:
    """The whole upload of a cluster: its executable once, then each proc's other input."""
    ads = _ads(cluster_ad, procs)
    exe = _shared_executable(ads)
    files = size = 0

    def counted(frames: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        nonlocal files, size
        for frame in frames:
            if "end" in frame:
                files += 1
                size += int(frame["size"])
            yield frame

    if exe:
        yield {"ickpt": cid}
        yield from counted(local_frames(exe, entries.base(exe)))
    for p, ad in enumerate(ads):
        yield {"job": f"{cid}.{p}"}
        for _, path, rel in _inputs(ad, skip_exec=exe is not None):
            yield from counted(local_frames(path, rel))
    yield chunks.done_frame(files, size)


def send_stream(conn: Connection, command: str, frames: Iterator[dict[str, Any]], **args: Any) -> Any:
    """Send ``command`` followed by the frames of a chunk stream, then read its reply.  A local
    file that fails mid-way ends the connection, which the daemon takes as a broken upload."""
    sock = conn.sock
    try:
        sock.sendall(encode({"cmd": command, "args": args}))
        go = recv_frame(sock)
        if not go.get("ok") or not go.get("more"):  # refused before anything was sent
            raise UserError(str(go.get("error") or "the schedd refused the upload"))
        for frame in frames:
            sock.sendall(encode(frame))
    except OSError as exc:
        if isinstance(exc, (BrokenPipeError, ConnectionResetError)):
            try:  # the daemon refused and said why before closing
                reply = recv_frame(sock)
            except (OSError, WireError):
                raise UserError(f"the schedd closed the connection during the upload: {exc}") from None
            if not reply.get("ok"):
                raise UserError(str(reply.get("error"))) from None
        conn.close()
        raise UserError(f"cannot read {exc.filename or 'an input file'}: {exc.strerror or exc}") from None
    except TransferError as exc:
        conn.close()
        raise UserError(str(exc)) from None
    except WireError as exc:
        raise UserError(f"the schedd closed the connection: {exc}") from None
    try:
        reply = recv_frame(sock)
    except (OSError, WireError) as exc:
        raise UserError(f"the schedd did not answer the upload: {exc}") from None
    if not reply.get("ok"):
        raise UserError(str(reply.get("error") or "the upload was refused"))
    return reply.get("result")


def upload(conn: Connection, cid: int, cluster_ad: dict[str, str], procs: list[dict[str, str]]) -> dict[str, Any]:
    return dict(send_stream(conn, "SPOOL_JOB_FILES", input_frames(cid, cluster_ad, procs), cluster_id=cid))


# -- transfer_data ------------------------------------------------------------------------
def fetch(conn: Connection, ids: list[str], constraint: str | None) -> tuple[list[str], dict[str, str], int, int]:
    """Fetch the spooled output of the selected jobs into the places their submit files said;
    (jobs fetched whole, {job: why not}, files, bytes)."""
    place: dict[str, str] = {}
    receiver: chunks.Receiver | None = None
    fetched: list[str] = []
    failed: dict[str, str] = {}
    current = ""
    final: dict[str, Any] = {}

    def open_file(rel: str, mode: int) -> int:
        return open_as_owner(spooled_output_target(place, rel), None, write=True, mode=mode & 0o777)

    def make_dir(rel: str, mode: int) -> None:
        mkdir_as_owner(spooled_output_target(place, rel), None, mode & 0o777 or 0o755)

    def finish() -> None:
        if current and current not in failed and receiver is not None:
            fetched.append(current)

    try:
        for frame in conn.stream("TRANSFER_DATA", ids=ids, constraint=constraint):
            if not isinstance(frame, dict):
                continue
            if "job" in frame:
                finish()
                if receiver is not None:
                    receiver.close()
                current, place = str(frame["job"]), {k: str(v) for k, v in frame.items()}
                receiver = chunks.Receiver(open_file, make_dir, f"the output of job {current}")
                continue
            if frame.get("done") and "jobs" in frame:
                final = frame
                continue
            if receiver is None or current in failed:
                continue
            try:
                receiver.feed(frame)
            except TransferError as exc:
                failed[current] = str(exc)
                receiver.close()
        finish()
    except RemoteError as exc:
        if exc.code == "NO_MATCH":
            raise UserError("no jobs matched") from None
        raise UserError(f"the schedd refused: {exc}") from None
    except WireError as exc:
        raise UserError(f"fetching spooled output failed: {exc}") from None
    finally:
        if receiver is not None:
            receiver.close()
    skipped = dict(final.get("skipped") or {})
    skipped.update(failed)
    done = [j for j in fetched if j in set(final.get("jobs") or [])]
    if done:
        try:
            conn.call("TRANSFER_DATA", fetched=done)
        except WireError as exc:
            raise UserError(f"the output arrived, but the schedd could not be told: {exc}") from None
    return done, skipped, int(final.get("files") or 0), int(final.get("bytes") or 0)
