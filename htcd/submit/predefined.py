"""The macros condor_submit defines before reading a submit file (the manual's "pre-defined macros").

``$(ARCH)``, ``$(OPSYS)``, ``$(OPSYSVER)``, ``$(OPSYSANDVER)``, ``$(OPSYSMAJORVER)`` (the
configuration's value, else this machine's, as a slot would advertise it), ``$(IsLinux)``,
``$(IsWindows)``, ``$(SUBMIT_FILE)``, ``$(SUBMIT_TIME)`` and ``$(Year)``/``$(Month)``/``$(Day)``
of the submit time.  A submit file's own setting of the same name wins.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable

from htcd.version import os_release

_ARCH = {"x86_64": "X86_64", "amd64": "X86_64", "i686": "INTEL", "i386": "INTEL",
         "aarch64": "aarch64", "arm64": "aarch64", "ppc64le": "ppc64le"}


def default_arch(config_get: Callable[[str], str | None]) -> str:
    """``ARCH`` from the configuration, else the name HTCondor gives this machine's architecture."""
    machine = platform.machine().lower()
    return config_get("ARCH") or _ARCH.get(machine, machine.upper())


def default_opsys(config_get: Callable[[str], str | None]) -> str:
    return config_get("OPSYS") or platform.system().upper()


def _os_version() -> tuple[str, int, int]:
    """(name, major, minor) from /etc/os-release, named as HTCondor's OpSysAndVer names it."""
    info = os_release()
    name = (info.get("NAME") or "Linux").split()[0]
    if name == "Red":  # "Red Hat Enterprise Linux"
        name = "RedHat"
    parts = (info.get("VERSION_ID") or "0").split(".")
    major = int(parts[0]) if parts[0].isdigit() else 0
    minor = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return name, major, minor


def predefined(submit_file: str, qdate: int, config_get: Callable[[str], str | None]) -> dict[str, str]:
    """The predefined macros (lower-case names) for a submit at ``qdate``."""
    name, major, minor = _os_version()
    opsys = default_opsys(config_get)
    when = time.localtime(qdate)
    return {
        "arch": default_arch(config_get),
        "opsys": opsys,
        "opsysandver": config_get("OPSYSANDVER") or f"{name}{major}",
        "opsysmajorver": config_get("OPSYSMAJORVER") or str(major),
        "opsysver": config_get("OPSYSVER") or str(major * 100 + minor),
        "islinux": "1" if opsys == "LINUX" else "0",
        "iswindows": "1" if opsys == "WINDOWS" else "0",
        "submit_file": submit_file,
        "submit_time": str(qdate),
        "year": f"{when.tm_year:04d}",
        "month": f"{when.tm_mon:02d}",
        "day": f"{when.tm_mday:02d}",
    }
