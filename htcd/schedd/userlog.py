"""Job event logs in HTCondor's classic text format, appended with O_APPEND and no locks.

Each event is one ``write`` of the whole text, so concurrent writers never interleave inside
an event.  Dates are ISO (``2026-11-22 20:30:00``), HTCondor's default format.
"""

from __future__ import annotations

import os
import time

SUBMIT, EXECUTE, EVICTED, TERMINATED, ABORTED, HELD, RELEASED = 0, 1, 4, 5, 9, 12, 13


def _header(code: int, cluster: int, proc: int, when: float | None) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() if when is None else when))
    return f"{code:03d} ({cluster:03d}.{proc:03d}.000) {stamp} "


def _usage(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 86400} {s % 86400 // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def submit(cluster: int, proc: int, host: str, when: float | None = None) -> str:
    return _header(SUBMIT, cluster, proc, when) + f"Job submitted from host: {host}\n...\n"


def execute(cluster: int, proc: int, host: str, slot: str = "", when: float | None = None) -> str:
    extra = f"\tSlotName: {slot}\n" if slot else ""
    return _header(EXECUTE, cluster, proc, when) + f"Job executing on host: {host}\n{extra}...\n"


def terminated(cluster: int, proc: int, *, exit_code: int | None, signal: int | None,
               user_cpu: float = 0.0, sys_cpu: float = 0.0, sent: int = 0, received: int = 0,
               when: float | None = None) -> str:
    if signal is not None:
        how = f"\t(0) Abnormal termination (signal {signal})\n\t(0) No core file\n"
    else:
        how = f"\t(1) Normal termination (return value {exit_code})\n"
    remote = f"Usr {_usage(user_cpu)}, Sys {_usage(sys_cpu)}"
    local = f"Usr {_usage(0)}, Sys {_usage(0)}"
    return (_header(TERMINATED, cluster, proc, when) + "Job terminated.\n" + how
            + f"\t\t{remote}  -  Run Remote Usage\n\t\t{local}  -  Run Local Usage\n"
            + f"\t\t{remote}  -  Total Remote Usage\n\t\t{local}  -  Total Local Usage\n"
            + f"\t{sent}  -  Run Bytes Sent By Job\n\t{received}  -  Run Bytes Received By Job\n"
            + f"\t{sent}  -  Total Bytes Sent By Job\n\t{received}  -  Total Bytes Received By Job\n...\n")


def aborted(cluster: int, proc: int, reason: str, when: float | None = None) -> str:
    return _header(ABORTED, cluster, proc, when) + f"Job was aborted.\n\t{reason}\n...\n"


def held(cluster: int, proc: int, reason: str, code: int = 0, subcode: int = 0, when: float | None = None) -> str:
    return (_header(HELD, cluster, proc, when)
            + f"Job was held.\n\t{reason}\n\tCode {code} Subcode {subcode}\n...\n")


def released(cluster: int, proc: int, reason: str, when: float | None = None) -> str:
    return _header(RELEASED, cluster, proc, when) + f"Job was released.\n\t{reason}\n...\n"


def evicted(cluster: int, proc: int, reason: str, when: float | None = None) -> str:
    return (_header(EVICTED, cluster, proc, when)
            + f"Job was evicted.\n\t(0) Job was not checkpointed.\n\t{reason}\n...\n")


def append(path: str, text: str, uid: int | None = None, gid: int | None = None) -> None:
    """Append one event; a new file is given to the job's owner when we can."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if uid is not None and os.fstat(fd).st_size == 0 and os.geteuid() == 0:
            os.fchown(fd, uid, gid if gid is not None else -1)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
