"""Whether a process that left a mark (a lock file, a cgroup's name) is still alive."""

from __future__ import annotations

import contextlib
import os


def pid_alive(pid: int) -> bool:
    """True while ``pid`` names a live process (one we may not signal counts); a zombie, whose
    parent has not reaped it yet, has ended and does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as f:
        if f.read().rsplit(")", 1)[-1].split()[0] == "Z":
            return False
    return True
