"""What the master looks at every so often besides its children: the installation it runs
from (a new one means restarting everything) and the free space under LOG and SPOOL (a full
disk means stopping everything cleanly before the daemons fail in odd ways)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import htcd
from htcd.config import Config

#: Restart modes of MASTER_NEW_BINARY_RESTART, as HTCondor spells them.
RESTART_MODES = ("GRACEFUL", "PEACEFUL", "FAST", "NEVER")
MIN_FREE_DISK_MB = 5


def watch_file(config: Config) -> str:
    """The file whose modification marks a new installation: ``MASTER_WATCH_FILE``, by default
    ``htcd/__init__.py`` (it holds the version, and every install rewrites it): the counterpart
    of the condor_master binary HTCondor's master watches."""
    return config.get("MASTER_WATCH_FILE") or os.path.abspath(htcd.__file__)


def timestamp(path: str) -> float | None:
    """The modification time of ``path``, or None while it is missing (e.g. mid-install)."""
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def restart_mode(config: Config) -> tuple[str, str | None]:
    """(mode, complaint): MASTER_NEW_BINARY_RESTART, GRACEFUL when unset or not a mode."""
    raw = (config.get("MASTER_NEW_BINARY_RESTART") or "GRACEFUL").strip().upper()
    if raw in ("NONE", "NO"):  # HTCondor's synonyms of NEVER
        raw = "NEVER"
    if raw not in RESTART_MODES:
        return "GRACEFUL", f"{raw} is not a valid value for MASTER_NEW_BINARY_RESTART, using GRACEFUL"
    return raw, None


@dataclass(frozen=True)
class LowDisk:
    knob: str
    path: str
    free_mb: float
    need_mb: float

    def __str__(self) -> str:
        return (f"the file system holding {self.knob} ({self.path}) has {self.free_mb:.1f} MB free, "
                f"less than MASTER_MIN_FREE_DISK ({self.need_mb:g} MB)")


def free_mb(path: str) -> float | None:
    """Megabytes an unprivileged process may still write under ``path``, or None if unknown."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize / (1024 * 1024)


def low_disk(config: Config) -> LowDisk | None:
    """The first of LOG and SPOOL whose file system is below MASTER_MIN_FREE_DISK megabytes."""
    need = config.get_float("MASTER_MIN_FREE_DISK", MIN_FREE_DISK_MB)
    if need <= 0:
        return None
    for knob in ("LOG", "SPOOL"):
        path = config.get(knob)
        free = free_mb(path) if path else None
        if free is not None and free < need:
            return LowDisk(knob, path or "", free, need)
    return None
