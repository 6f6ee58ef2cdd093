"""What the machine is, read from the machine itself (psutil), overridable by config."""

from __future__ import annotations

import os
import platform
import shutil

import psutil

from htcd.config import Config

_ARCH = {"x86_64": "X86_64", "amd64": "X86_64", "aarch64": "aarch64", "arm64": "aarch64",
         "ppc64le": "ppc64le", "i686": "INTEL", "i386": "INTEL"}


def os_release() -> tuple[str, str]:
    """(name, major version) from /etc/os-release, e.g. ('Debian', '12')."""
    info: dict[str, str] = {}
    try:
        with open("/etc/os-release") as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                info[k] = v.strip('"')
    except OSError:
        pass
    name = info.get("NAME", "Linux").split()[0]
    return name, info.get("VERSION_ID", "0").split(".")[0]


def detect(config: Config) -> dict[str, object]:
    """Machine-wide attributes (the same for every slot)."""
    cpus = config.get_int("NUM_CPUS", psutil.cpu_count() or 1)
    memory = config.get_int("MEMORY", psutil.virtual_memory().total // (1024 * 1024))
    execute = config.get("EXECUTE") or "/tmp"
    os.makedirs(execute, exist_ok=True)
    disk_kb = config.get_int("DISK", shutil.disk_usage(execute).free // 1024)
    name, major = os_release()
    return {
        "TotalCpus": cpus, "TotalMemory": memory, "TotalDisk": disk_kb,
        "DetectedCpus": psutil.cpu_count() or 1,
        "DetectedMemory": psutil.virtual_memory().total // (1024 * 1024),
        "Arch": _ARCH.get(platform.machine().lower(), platform.machine().upper()),
        "OpSys": "LINUX", "OpSysName": name, "OpSysMajorVer": int(major) if major.isdigit() else 0,
        "OpSysAndVer": f"{name}{major}", "OpSysShortName": name,
    }


def load_average() -> float:
    return round(os.getloadavg()[0], 3)
