"""Reading a job's cgroup from the outside: which groups a process is in, and their limit files."""

from __future__ import annotations

import os

from htcd.starter import cgroup as cgroups

LAYOUT = cgroups.available("htcd") if os.geteuid() == 0 else None
UNLIMITED = 1 << 62  # v1 prints "no limit" as a number near 2**63


def groups_of(pid: int) -> dict[str, str]:
    """controller -> the directory of ``pid``'s group in it (v2: {"": dir})."""
    assert LAYOUT is not None
    out: dict[str, str] = {}
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f.read().splitlines():
            _, controllers, rel = line.split(":", 2)
            if LAYOUT.version == 2 and controllers == "":
                out[""] = LAYOUT.mounts[""] + rel
            for c in controllers.split(","):
                if LAYOUT.version == 1 and c in LAYOUT.mounts:
                    out[c] = LAYOUT.mounts[c] + rel
    return out


def read_value(path: str) -> int | None:
    """A limit file as a number (None for v2's "max" or a missing file)."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except FileNotFoundError:
        return None
    return None if text == "max" else int(text)
