"""``JobEventLog``: the events of a job event log (HTCondor's classic text format, what htcd's
schedd and shadow write), read as they are appended, as htcondor2 reads them.

Each event becomes a :class:`JobEvent`: a mapping with htcondor2's attribute names (``Cluster``,
``Proc``, ``EventTime``, ``ReturnValue``, ``HoldReason``...), plus ``type``, ``cluster``,
``proc`` and ``timestamp``.  An event is handed out only once its ``...`` line is written, so a
log another process is writing is never seen half-written.  Text that is no event (garbage, a
JSON or XML log) is refused with the file and line, not skipped: a script must not wait
forever for events the reader quietly dropped."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from htcd.classad import ClassAdSyntaxError, parse_old_ad

from .classad import ClassAd
from .enums import JobEventType
from .errors import HTCondorException

POLL = 0.1  # seconds between looks at a log that has no new event yet

_HEADER = re.compile(
    r"(\d{3}) \((-?\d+)\.(-?\d+)\.(-?\d+)\) (\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-]\d\d:?\d\d)? ?(.*)")
_USAGE = re.compile(r"(Usr \d+ \d\d:\d\d:\d\d, Sys \d+ \d\d:\d\d:\d\d)\s+-\s+(Run|Total) (Remote|Local) Usage")
_TABLE = re.compile(r"Partitionable Resources :|\s*\w[\w ()]*?\s+:(\s+\S+){0,3}\s*$")  # its heading and rows
_BYTES = re.compile(r"(-?[\d.]+)\s+-\s+(Run|Total) Bytes (Sent|Received) By Job")
_SIZE = re.compile(r"(-?\d+)\s+-\s+(MemoryUsage|ResidentSetSize|ProportionalSetSizeKb) of job")
_HOLD_CODE = re.compile(r"Code (-?\d+) Subcode (-?\d+)")

_MY_TYPE = {0: "SubmitEvent", 1: "ExecuteEvent", 2: "ExecutableErrorEvent", 3: "CheckpointedEvent",
            4: "JobEvictedEvent", 5: "JobTerminatedEvent", 6: "JobImageSizeEvent", 7: "ShadowExceptionEvent",
            8: "GenericEvent", 9: "JobAbortedEvent", 10: "JobSuspendedEvent", 11: "JobUnsuspendedEvent",
            12: "JobHeldEvent", 13: "JobReleaseEvent", 21: "RemoteErrorEvent", 22: "JobDisconnectedEvent",
            23: "JobReconnectedEvent", 24: "JobReconnectFailedEvent", 28: "JobAdInformationEvent",
            35: "ClusterSubmitEvent", 36: "ClusterRemoveEvent", 37: "FactoryPausedEvent",
            38: "FactoryResumedEvent"}


class JobEvent(Mapping[str, Any]):
    """One event: a read-only mapping of its attributes (htcondor2's ``JobEvent``)."""

    def __init__(self, data: ClassAd, event_text: str) -> None:
        self._data = data
        self._event_text = event_text

    @property
    def type(self) -> JobEventType:
        return JobEventType(self._data["EventTypeNumber"])

    @property
    def cluster(self) -> int:
        return int(self._data.get("Cluster", -1))

    @property
    def proc(self) -> int:
        return int(self._data.get("Proc", -1))

    @property
    def timestamp(self) -> int:
        """Seconds since the epoch (EventTime is the writer's local time, as HTCondor writes it)."""
        return int(self._data.get("_timestamp", 0))

    def __getitem__(self, key: str) -> Any:
        if key.lower() == "_timestamp":
            raise KeyError(key)
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._data if k.lower() != "_timestamp")

    def __len__(self) -> int:
        return len(self._data) - 1

    def __repr__(self) -> str:
        return f"JobEvent(type={self.type}, cluster={self.cluster}, proc={self.proc}, timestamp={self.timestamp})"

    def __str__(self) -> str:
        return self._event_text


def _event_time(m: re.Match[str]) -> tuple[str, float]:
    y, mo, d, hh, mm, ss = (int(m.group(i)) for i in range(5, 11))
    iso = f"{y:04d}-{mo:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}{m.group(11) or ''}"
    return iso, time.mktime((y, mo, d, hh, mm, ss, 0, 0, -1))


def _body_attrs(kind: int, text: str, lines: list[str], ad: ClassAd, where: str) -> None:
    """The attributes htcondor2 reads from an event's header text and body lines."""
    body = [b.strip() for b in lines]
    if kind == 0:
        ad["SubmitHost"] = text.partition("host:")[2].strip()
        notes = [b.strip() for b in lines if b.startswith("    ") and b.strip()]
        if notes:
            ad["LogNotes"] = notes[0]
        if len(notes) > 1:
            ad["UserNotes"] = notes[1]
    elif kind == 1:
        ad["ExecuteHost"] = text.partition("host:")[2].strip()
        for b in body:
            k, sep, v = b.partition(": ")
            if sep and re.fullmatch(r"\w+", k):
                ad[k] = v.strip()
    elif kind == 6:
        ad["Size"] = int(text.rpartition(":")[2] or 0)
        for b in body:
            m = _SIZE.match(b)
            if m:
                ad[m.group(2)] = int(m.group(1))
    elif kind == 12:
        reason = [b for b in body if b and not _HOLD_CODE.fullmatch(b)]
        if reason:
            ad["HoldReason"] = reason[0]
        for b in body:
            m = _HOLD_CODE.fullmatch(b)
            if m:
                ad["HoldReasonCode"], ad["HoldReasonSubCode"] = int(m.group(1)), int(m.group(2))
    elif kind in (9, 13) and body and body[0]:
        ad["Reason"] = body[0]
    elif kind in (4, 5, 7):
        if kind == 4:
            ad["Checkpointed"] = any(b.startswith("(1) Job was checkpointed") for b in body)
            ad["TerminatedAndRequeued"] = False
            ad["TerminatedNormally"] = False
        if kind == 7 and body:
            ad["Message"] = body[0]
        for b in body:
            if m := re.match(r"\(1\) Normal termination \(return value (-?\d+)\)", b):
                ad["TerminatedNormally"], ad["ReturnValue"] = True, int(m.group(1))
            elif m := re.match(r"\(0\) Abnormal termination \(signal (\d+)\)", b):
                ad["TerminatedNormally"], ad["TerminatedBySignal"] = False, int(m.group(1))
            elif m := re.match(r"\(1\) Corefile in: (.*)", b):
                ad["CoreFile"] = m.group(1)
            elif m := _USAGE.match(b):
                ad[f"{m.group(2)}{m.group(3)}Usage"] = m.group(1)
            elif m := _BYTES.match(b):
                ad[("Total" if m.group(2) == "Total" else "") + m.group(3) + "Bytes"] = float(m.group(1))
            elif kind == 4 and b and not b.startswith("(") and not _TABLE.match(b):
                ad["Reason"] = b  # why the job was evicted, after the figures
    elif kind == 22:
        ad["EventDescription"] = text
        if body:
            ad["DisconnectReason"] = body[0]
        for b in body:
            if m := re.match(r"Trying to reconnect to (\S+) (\S+)", b):
                ad["StartdName"], ad["StartdAddr"] = m.group(1), m.group(2)
    elif kind == 23:
        ad["EventDescription"] = "Job reconnected"
        ad["StartdName"] = text.partition("reconnected to")[2].strip()
        for b in body:
            k, _, v = b.partition(":")
            if k == "startd address":
                ad["StartdAddr"] = v.strip()
            elif k == "starter address":
                ad["StarterAddr"] = v.strip()
    elif kind == 24:
        ad["EventDescription"] = "Job reconnect impossible: rescheduling job"  # what HTCondor's reader sets
        if body:
            ad["Reason"] = body[0]
        for b in body:
            if m := re.match(r"Can not reconnect to ([^,\s]+)", b):
                ad["StartdName"] = m.group(1)
    elif kind == 28:
        try:
            ad.update(parse_old_ad("\n".join(lines)))
        except ClassAdSyntaxError as exc:
            raise HTCondorException(f"{where}: the job ad information event holds no ClassAd: {exc}") from None


def _event(lines: list[str], path: str, line_no: int) -> JobEvent:
    m = _HEADER.fullmatch(lines[0].rstrip("\r"))
    if m is None:
        raise HTCondorException(f"{path}:{line_no}: not a job event header: {lines[0][:80]!r} (htcd reads "
                                "event logs in HTCondor's classic text format)")
    kind = int(m.group(1))
    iso, stamp = _event_time(m)
    ad = ClassAd()
    ad["MyType"] = _MY_TYPE.get(kind, f"{JobEventType(kind).name.title().replace('_', '')}Event"
                                if kind in JobEventType._value2member_map_ else "GenericEvent")
    ad["EventTypeNumber"] = kind
    ad["Cluster"], ad["Proc"], ad["Subproc"] = int(m.group(2)), int(m.group(3)), int(m.group(4))
    ad["EventTime"] = iso
    _body_attrs(kind, m.group(13).strip(), lines[1:], ad, f"{path}:{line_no}")
    ad["_timestamp"] = stamp
    return JobEvent(ad, "\n".join(lines) + "\n...\n")


class JobEventLog:
    """The events of one log file, in order; iterate it (blocking for new events) or use
    :meth:`events` to say how long to wait (htcondor2's ``JobEventLog``)."""

    def __init__(self, filename: str) -> None:
        if not isinstance(filename, str):
            raise TypeError("filename must be a string")
        if not filename:
            raise ValueError("filename must not be empty")
        self._filename = filename
        self._deadline: float = 0.0
        self._pending: list[JobEvent] = []
        self._offset = 0
        self._line = 1
        self._closed = False
        try:
            self._file = open(filename, "rb")  # noqa: SIM115 - kept open to follow the log; closed by close()
        except OSError as exc:
            raise HTCondorException(f"cannot open the job event log {filename}: {exc.strerror}") from None

    def events(self, stop_after: int | None = None) -> JobEventLog:
        """Iterate the events: ``None`` waits for new ones forever, ``0`` never waits, ``N``
        waits up to N seconds from now for each next event."""
        if stop_after is None:
            self._deadline = 0.0
        elif isinstance(stop_after, (int, float)) and not isinstance(stop_after, bool):
            self._deadline = time.time() + stop_after
        else:
            raise TypeError("deadline must be an integer")
        return self

    def close(self) -> None:
        if not self._closed:
            self._file.close()
            self._closed = True

    def __del__(self) -> None:
        if getattr(self, "_file", None) is not None:  # scripts rarely close a log they follow
            self.close()

    def __enter__(self) -> JobEventLog:
        self._deadline = 0.0
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False

    def __iter__(self) -> JobEventLog:
        return self

    def __next__(self) -> JobEvent:
        while True:
            if self._pending:
                return self._pending.pop(0)
            if self._closed:
                raise StopIteration
            self._read()
            if self._pending:
                continue
            if self._deadline and time.time() >= self._deadline:
                raise StopIteration
            time.sleep(POLL)  # nothing new yet: look again (the writer is another process)

    def _read(self) -> None:
        """Parse the complete events appended since the last read."""
        if os.fstat(self._file.fileno()).st_size < self._offset:
            raise HTCondorException(f"the job event log {self._filename} was truncated while being read")
        self._file.seek(self._offset)
        data = self._file.read()
        end = data.rfind(b"\n...\n")
        if end < 0 and not data.startswith(b"...\n"):
            return
        end = end + 5 if end >= 0 else 4
        text = data[:end].decode("utf-8", "surrogateescape")
        self._offset += end
        lines = text.split("\n")[:-1]
        block: list[str] = []
        start = self._line
        for i, line in enumerate(lines):
            if line.rstrip("\r") == "...":
                if not block:
                    raise HTCondorException(f"{self._filename}:{self._line + i}: '...' with no event before it")
                self._pending.append(_event(block, self._filename, start))
                block = []
                continue
            if not block:
                if not line.strip():
                    continue
                start = self._line + i
            block.append(line)
        self._line += len(lines)

