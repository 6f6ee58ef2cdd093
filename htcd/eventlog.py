"""Reading job event logs in HTCondor's classic text format, as `htcd wait` and `htcd q -userlog` do.

An event is a header line ``NNN (CCC.PPP.SSS) DATE TIME text``, body lines, and a line ``...``.
The reader is incremental: it keeps its offset and hands out only events whose ``...`` has been
written, so a log that another process is appending to is read without ever seeing half an event.
Text it does not understand (garbage between events, a truncated last event) is skipped and
counted, never fatal: a tool watching a log must not die because a job wrote to it.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field

from htcd.classad import ClassAd

# Event numbers of HTCondor's user log, those that change a job's state.
SUBMIT, EXECUTE, EXECUTABLE_ERROR, CHECKPOINTED, EVICTED, TERMINATED, IMAGE_SIZE, SHADOW_EXCEPTION = range(8)
ABORTED, SUSPENDED, UNSUSPENDED, HELD, RELEASED = 9, 10, 11, 12, 13
RECONNECT_FAILED = 24

NAMES = {0: "Submit", 1: "Execute", 2: "ExecutableError", 3: "Checkpointed", 4: "JobEvicted",
         5: "JobTerminated", 6: "JobImageSizeUpdate", 7: "ShadowException", 9: "JobAborted",
         10: "JobSuspended", 11: "JobUnsuspended", 12: "JobHeld", 13: "JobReleased",
         21: "RemoteError", 22: "JobDisconnected", 23: "JobReconnected", 24: "JobReconnectFailed",
         28: "JobAdInformation"}

# JobStatus after each event (HTCondor's numbers: 1 idle, 2 running, 3 removed, 4 completed,
# 5 held, 7 suspended).
STATUS_AFTER = {SUBMIT: 1, EXECUTE: 2, EVICTED: 1, TERMINATED: 4, SHADOW_EXCEPTION: 1, ABORTED: 3,
                SUSPENDED: 7, UNSUSPENDED: 2, HELD: 5, RELEASED: 1, RECONNECT_FAILED: 1}
DONE = frozenset({TERMINATED, ABORTED})

_HEADER = re.compile(
    r"(\d{3}) \((\d+)\.(\d+)\.(\d+)\) "
    r"(?:(\d{4})-(\d\d)-(\d\d)|(\d\d)/(\d\d)(?:/(\d{4}))?)[ T](\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[+-]\d\d:?\d\d|Z)? ?(.*)")
_RETURN = re.compile(r"\(1\) Normal termination \(return value (-?\d+)\)")
_SIGNAL = re.compile(r"\(0\) Abnormal termination \(signal (\d+)\)")
_HOLD_CODE = re.compile(r"Code (-?\d+) Subcode (-?\d+)")


@dataclass
class Event:
    """One event: its number, job id, local time stamp, first-line text and body lines."""

    type: int
    cluster: int
    proc: int
    timestamp: float
    text: str
    body: list[str] = field(default_factory=list)
    raw: str = ""

    @property
    def job_id(self) -> tuple[int, int]:
        return (self.cluster, self.proc)

    @property
    def name(self) -> str:
        return NAMES.get(self.type, f"Event{self.type:03d}")

    def attrs(self) -> dict[str, object]:
        """The values a tool shows: ReturnValue / TerminatedBySignal, HoldReason and its codes,
        the aborted or released reason, and the host of an execute event."""
        out: dict[str, object] = {}
        lines = [b.strip() for b in self.body]
        if self.type == TERMINATED:
            for line in lines:
                m = _RETURN.search(line)
                if m:
                    out["ReturnValue"] = int(m.group(1))
                m = _SIGNAL.search(line)
                if m:
                    out["TerminatedBySignal"] = int(m.group(1))
        elif self.type == HELD:
            reason = [x for x in lines if not _HOLD_CODE.fullmatch(x)]
            if reason:
                out["HoldReason"] = reason[0]
            for line in lines:
                m = _HOLD_CODE.fullmatch(line)
                if m:
                    out["HoldReasonCode"], out["HoldReasonSubCode"] = int(m.group(1)), int(m.group(2))
        elif self.type in (ABORTED, RELEASED) and lines:
            out["Reason"] = lines[0]
        elif self.type == EXECUTE:
            host = self.text.partition("host:")[2].strip()
            if host:
                out["ExecuteHost"] = host
        return out


def _timestamp(m: re.Match[str], now: time.struct_time) -> float:
    if m.group(5):
        year, month, day = int(m.group(5)), int(m.group(6)), int(m.group(7))
    else:  # the old MM/DD form has no year: this year, unless that lies in the future
        month, day = int(m.group(8)), int(m.group(9))
        year = int(m.group(10)) if m.group(10) else now.tm_year
        if not m.group(10) and (month, day) > (now.tm_mon, now.tm_mday):
            year -= 1
    hh, mm, ss = int(m.group(11)), int(m.group(12)), int(m.group(13))
    try:
        return time.mktime((year, month, day, hh, mm, ss, 0, 0, -1))
    except (OverflowError, ValueError):
        return 0.0


def parse_events(text: str) -> tuple[list[Event], int, int]:
    """Complete events in ``text``: (events, characters consumed, lines skipped).

    Consumption stops before an event whose ``...`` line has not been written yet."""
    events: list[Event] = []
    skipped = consumed = pos = start = 0
    now = time.localtime()
    current: Event | None = None
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            break
        line = text[pos:nl]
        nxt = nl + 1
        m = _HEADER.match(line) if current is None or line[:1].isdigit() else None
        if m:
            if current is not None:  # an event without its "..." line: dropped
                skipped += 1 + len(current.body)
            current = Event(int(m.group(1)), int(m.group(2)), int(m.group(3)), _timestamp(m, now),
                            m.group(14).strip())
            start = pos
        elif current is None:
            if line.strip():
                skipped += 1
            consumed = nxt
        elif line.rstrip() == "...":
            current.raw = text[start:nxt]
            events.append(current)
            current = None
            consumed = nxt
        else:
            current.body.append(line)
        pos = nxt
    return events, consumed, skipped


class LogFollower:
    """Reads a log incrementally; each ``poll`` returns the events completed since the last."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        self.skipped = 0
        self._pending = b""

    def poll(self) -> list[Event]:
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < self.offset:  # truncated or replaced: start again
                    self.offset, self._pending = 0, b""
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        buf = self._pending + data
        text = buf.decode("utf-8", "surrogateescape")
        events, consumed, skipped = parse_events(text)
        self.skipped += skipped
        self._pending = text[consumed:].encode("utf-8", "surrogateescape")
        return events


def read_events(path: str) -> list[Event]:
    """Every complete event of a log (OSError if it cannot be read)."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "surrogateescape")
    return parse_events(text)[0]


@dataclass
class JobView:
    """What a log tells about one job."""

    cluster: int
    proc: int
    status: int = 1
    submitted: float = 0.0
    started: float = 0.0
    finished: float = 0.0
    attrs: dict[str, object] = field(default_factory=dict)


def job_states(events: list[Event]) -> dict[tuple[int, int], JobView]:
    """Each job's state after the events, in order of first appearance."""
    jobs: dict[tuple[int, int], JobView] = {}
    for ev in events:
        job = jobs.get(ev.job_id)
        if job is None:
            job = jobs[ev.job_id] = JobView(ev.cluster, ev.proc, submitted=ev.timestamp)
        status = STATUS_AFTER.get(ev.type)
        if status is not None:
            job.status = status
        if ev.type == SUBMIT:
            job.submitted = ev.timestamp
        elif ev.type == EXECUTE:
            job.started = ev.timestamp
        elif ev.type in DONE:
            job.finished = ev.timestamp
        job.attrs.update(ev.attrs())
    return jobs


def job_ads(path: str) -> list[ClassAd]:
    """Job ads built from a log alone (``htcd q -userlog``): ids, JobStatus, dates, exit values.
    A log does not name the owner; the log file's owner stands in for it."""
    import pwd

    st = os.stat(path)
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = str(st.st_uid)
    ads = []
    for job in job_states(read_events(path)).values():
        ad = ClassAd({"ClusterId": job.cluster, "ProcId": job.proc, "JobStatus": job.status,
                      "QDate": int(job.submitted), "Owner": owner, "UserLog": os.path.abspath(path)})
        if job.started:
            ad["JobStartDate"] = int(job.started)
        if job.finished:
            ad["CompletionDate"] = int(job.finished)
        for k, v in job.attrs.items():
            if k == "ReturnValue":
                ad["ExitCode"] = v
            elif k == "Reason":
                ad["RemoveReason" if job.status == 3 else "ReleaseReason"] = v
            else:
                ad[k] = v
        ads.append(ad)
    return ads
