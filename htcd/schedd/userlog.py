"""Job event logs in HTCondor's classic text format, appended with O_APPEND and no locks.

Each event is one ``write`` of the whole text, so concurrent writers never interleave inside
an event.  Dates are ISO (``2026-11-22 20:30:00``), HTCondor's default format; every event
ends with a ``...`` line, which readers need to see the event at all.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence

SUBMIT, EXECUTE, EVICTED, TERMINATED, IMAGE_SIZE, ABORTED, HELD, RELEASED, JOB_AD_INFORMATION = (
    0, 1, 4, 5, 6, 9, 12, 13, 28)
DISCONNECTED, RECONNECTED, RECONNECT_FAILED = 22, 23, 24

# Partitionable Resources table rows: (resource, label); HTCondor prints these three.
_RESOURCES = (("Cpus", "Cpus"), ("Disk", "Disk (KB)"), ("Memory", "Memory (MB)"))


def _header(code: int, cluster: int, proc: int, when: float | None) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() if when is None else when))
    return f"{code:03d} ({cluster:03d}.{proc:03d}.000) {stamp} "


def _usage(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 86400} {s % 86400 // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _usage_line(user: float, sys_: float, label: str) -> str:
    return f"\t\tUsr {_usage(user)}, Sys {_usage(sys_)}  -  {label}\n"


def _one_line(text: str) -> str:
    """A reason is one line in the log; a newline would end the event's text early."""
    return " ".join(text.split())


def resources_table(usage: Mapping[str, object], request: Mapping[str, object],
                    allocated: Mapping[str, object]) -> str:
    """HTCondor's ``Partitionable Resources`` table (Usage / Request / Allocated columns)."""

    def cell(d: Mapping[str, object], key: str) -> str:
        v = d.get(key)
        if v is None:
            return ""
        if isinstance(v, float):
            return f"{v:.2f}" if not v.is_integer() else str(int(v))
        return str(v)

    lines = ["\tPartitionable Resources :    Usage  Request Allocated \n"]
    for key, label in _RESOURCES:
        lines.append(f"\t   {label:<20} : {cell(usage, key):>8} {cell(request, key):>8} {cell(allocated, key):>9} \n")
    return "".join(lines)


def submit(cluster: int, proc: int, host: str, when: float | None = None, notes: str = "",
           user_notes: str = "") -> str:
    """Job submitted; ``notes`` (SubmitEventNotes, submit_event_notes) and ``user_notes``
    (SubmitEventUserNotes) each follow on a line of their own, indented, as HTCondor prints them."""
    extra = "".join(f"    {_one_line(n)[:8191]}\n" for n in (notes, user_notes) if n)
    return _header(SUBMIT, cluster, proc, when) + f"Job submitted from host: {host}\n{extra}...\n"


def submit_notes(text: Callable[[str], str | None], get: Callable[[str], object]) -> dict[str, str]:
    """The submit event's notes of a job (``text``: an attribute's expression text, looked at
    first so that a job without notes costs no ClassAd; ``get``: its value)."""
    out: dict[str, str] = {}
    for key, attr in (("notes", "SubmitEventNotes"), ("user_notes", "SubmitEventUserNotes")):
        if text(attr) is None:
            continue
        value = get(attr)
        if isinstance(value, str) and value:
            out[key] = value
    return out


def execute(cluster: int, proc: int, host: str, slot: str = "", when: float | None = None) -> str:
    extra = f"\tSlotName: {slot}\n" if slot else ""
    return _header(EXECUTE, cluster, proc, when) + f"Job executing on host: {host}\n{extra}...\n"


def terminated(cluster: int, proc: int, *, exit_code: int | None, signal: int | None,
               user_cpu: float = 0.0, sys_cpu: float = 0.0, sent: int = 0, received: int = 0,
               total_user_cpu: float | None = None, total_sys_cpu: float | None = None,
               total_sent: int | None = None, total_received: int | None = None,
               core_file: str = "", usage: Mapping[str, object] | None = None,
               request: Mapping[str, object] | None = None, allocated: Mapping[str, object] | None = None,
               when: float | None = None) -> str:
    """Job terminated: normal (return value) or abnormal (signal), usage, bytes and resources.

    The Total lines cover every run of the job; they default to this run's figures.  The
    Partitionable Resources table is printed when ``request`` or ``allocated`` is given.
    """
    if signal is not None:
        core = f"\t(1) Corefile in: {core_file}\n" if core_file else "\t(0) No core file\n"
        how = f"\t(0) Abnormal termination (signal {signal})\n" + core
    else:
        how = f"\t(1) Normal termination (return value {exit_code})\n"
    tu = user_cpu if total_user_cpu is None else total_user_cpu
    ts = sys_cpu if total_sys_cpu is None else total_sys_cpu
    text = (_header(TERMINATED, cluster, proc, when) + "Job terminated.\n" + how
            + _usage_line(user_cpu, sys_cpu, "Run Remote Usage") + _usage_line(0, 0, "Run Local Usage")
            + _usage_line(tu, ts, "Total Remote Usage") + _usage_line(0, 0, "Total Local Usage")
            + f"\t{sent}  -  Run Bytes Sent By Job\n\t{received}  -  Run Bytes Received By Job\n"
            + f"\t{sent if total_sent is None else total_sent}  -  Total Bytes Sent By Job\n"
            + f"\t{received if total_received is None else total_received}  -  Total Bytes Received By Job\n")
    if request is not None or allocated is not None:
        text += resources_table(usage or {}, request or {}, allocated or {})
    return text + "...\n"


def image_size(cluster: int, proc: int, size_kb: int, memory_usage_mb: int | None = None,
               rss_kb: int | None = None, pss_kb: int | None = None, when: float | None = None) -> str:
    text = _header(IMAGE_SIZE, cluster, proc, when) + f"Image size of job updated: {size_kb}\n"
    if memory_usage_mb is not None:
        text += f"\t{memory_usage_mb}  -  MemoryUsage of job (MB)\n"
    if rss_kb is not None:
        text += f"\t{rss_kb}  -  ResidentSetSize of job (KB)\n"
    if pss_kb is not None:
        text += f"\t{pss_kb}  -  ProportionalSetSizeKb of job (KB)\n"
    return text + "...\n"


def aborted(cluster: int, proc: int, reason: str, when: float | None = None) -> str:
    return _header(ABORTED, cluster, proc, when) + f"Job was aborted.\n\t{_one_line(reason)}\n...\n"


def held(cluster: int, proc: int, reason: str, code: int = 0, subcode: int = 0, when: float | None = None) -> str:
    return (_header(HELD, cluster, proc, when)
            + f"Job was held.\n\t{_one_line(reason)}\n\tCode {code} Subcode {subcode}\n...\n")


def released(cluster: int, proc: int, reason: str, when: float | None = None) -> str:
    return _header(RELEASED, cluster, proc, when) + f"Job was released.\n\t{_one_line(reason)}\n...\n"


def evicted(cluster: int, proc: int, reason: str = "", *, user_cpu: float = 0.0, sys_cpu: float = 0.0,
            sent: int = 0, received: int = 0, usage: Mapping[str, object] | None = None,
            request: Mapping[str, object] | None = None, allocated: Mapping[str, object] | None = None,
            when: float | None = None) -> str:
    """Job evicted (not checkpointed), with this run's usage and bytes; ``reason`` on its own line,
    then, as HTCondor writes it after the reason, the Partitionable Resources table (when
    ``request`` or ``allocated`` is given)."""
    why = f"\t{_one_line(reason)}\n" if reason.strip() else ""
    text = (_header(EVICTED, cluster, proc, when) + "Job was evicted.\n\t(0) Job was not checkpointed.\n"
            + _usage_line(user_cpu, sys_cpu, "Run Remote Usage") + _usage_line(0, 0, "Run Local Usage")
            + f"\t{sent}  -  Run Bytes Sent By Job\n\t{received}  -  Run Bytes Received By Job\n" + why)
    if request is not None or allocated is not None:
        text += resources_table(usage or {}, request or {}, allocated or {})
    return text + "...\n"


def disconnected(cluster: int, proc: int, reason: str, startd_name: str, startd_addr: str,
                 when: float | None = None) -> str:
    """Event 22: the shadow lost the job's starter and tries to reconnect within the job lease."""
    return (_header(DISCONNECTED, cluster, proc, when) + "Job disconnected, attempting to reconnect\n"
            + f"    {_one_line(reason)}\n    Trying to reconnect to {startd_name} {startd_addr}\n...\n")


def reconnected(cluster: int, proc: int, startd_name: str, startd_addr: str, starter_addr: str,
                when: float | None = None) -> str:
    """Event 23: the shadow found the running job again."""
    return (_header(RECONNECTED, cluster, proc, when) + f"Job reconnected to {startd_name}\n"
            + f"    startd address: {startd_addr}\n    starter address: {starter_addr}\n...\n")


def reconnect_failed(cluster: int, proc: int, reason: str, startd_name: str, when: float | None = None) -> str:
    """Event 24: the job could not be found again (its lease ran out); it is rescheduled."""
    return (_header(RECONNECT_FAILED, cluster, proc, when) + "Job reconnection failed\n"
            + f"    {_one_line(reason)}\n    Can not reconnect to {startd_name}, rescheduling job\n...\n")


def job_ad_information(cluster: int, proc: int, attrs: Mapping[str, str], when: float | None = None) -> str:
    """Event 28: ``attrs`` maps attribute name -> ClassAd expression text, one per line."""
    body = "".join(f"{name} = {_one_line(text)}\n" for name, text in attrs.items())
    return _header(JOB_AD_INFORMATION, cluster, proc, when) + "Job ad information event triggered.\n" + body + "...\n"


def information_attrs(job: Mapping[str, str], extra: Sequence[str] = ()) -> dict[str, str]:
    """The attributes a job asks to log (``job_ad_information_attrs``, a comma/space list) plus
    ``extra`` ones the event itself carries; those the job lacks are left out."""
    wanted = [*extra]
    raw = job.get("JobAdInformationAttrs", "").strip().strip('"')
    wanted += [w for w in raw.replace(",", " ").split() if w]
    return {name: job[name] for name in dict.fromkeys(wanted) if name in job}


def event_mask(value: object) -> frozenset[int] | None:
    """DAGManNodesMask (``"0,1,2,4,5"``): the event numbers a nodes log gets; None: all."""
    if not isinstance(value, str):
        return None
    numbers = [w.strip() for w in value.split(",") if w.strip()]
    if not numbers or not all(w.isdigit() for w in numbers):
        return None
    return frozenset(int(w) for w in numbers)


def only_events(text: str, mask: frozenset[int]) -> str:
    """The events of ``text`` (each ending with its ``...`` line) whose number is in ``mask``."""
    out = []
    for event in text.split("...\n"):
        if not event.strip():
            continue
        head = event.lstrip()[:3]
        if head.isdigit() and int(head) in mask:
            out.append(event + "...\n")
    return "".join(out)


def append(path: str, text: str, uid: int | None = None, gid: int | None = None) -> None:
    """Append one event; a new file is given to the job's owner when we can."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if uid is not None and os.fstat(fd).st_size == 0 and os.geteuid() == 0:
            os.fchown(fd, uid, gid if gid is not None else -1)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
