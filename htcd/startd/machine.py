"""What the machine is, read from the machine itself (psutil, /etc/os-release, /proc), and how busy
it is: load, keyboard and console idle times, the CPU use of a job's process tree.

Configuration overrides the detected sizes: ``NUM_CPUS``, ``MEMORY`` (MB), ``DISK`` (KB),
``RESERVED_MEMORY`` (MB kept for the rest of the machine) and ``RESERVED_DISK`` (MB).
"""

from __future__ import annotations

import contextlib
import glob
import os
import platform
import shutil
import time

import psutil

from htcd.config import Config
from htcd.version import os_release

_ARCH = {"x86_64": "X86_64", "amd64": "X86_64", "aarch64": "aarch64", "arm64": "aarch64",
         "ppc64le": "ppc64le", "i686": "INTEL", "i386": "INTEL"}
# x86-64 microarchitecture levels by the CPU flags each adds (the psABI's levels).
_LEVELS = (("x86_64-v2", {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"}),
           ("x86_64-v3", {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}),
           ("x86_64-v4", {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}))


def os_attributes(info: dict[str, str]) -> dict[str, object]:
    """OpSys* as HTCondor names them: OpSysName Debian, OpSysMajorVer 12, OpSysVer 1200,
    OpSysAndVer Debian12, OpSysLongName from PRETTY_NAME."""
    name = (info.get("NAME") or "Linux").split()[0]
    if name == "Red":  # "Red Hat Enterprise Linux"
        name = "RedHat"
    parts = (info.get("VERSION_ID") or "0").split(".")
    major = int(parts[0]) if parts[0].isdigit() else 0
    minor = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return {"OpSys": "LINUX", "OpSysLegacy": "LINUX", "OpSysName": name, "OpSysShortName": name,
            "OpSysMajorVer": major, "OpSysVer": major * 100 + minor, "OpSysAndVer": f"{name}{major}",
            "OpSysLongName": info.get("PRETTY_NAME") or f"{name} {major}"}


def cpu_flags() -> set[str]:
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.partition(":")[2].split())
    return set()


def microarch(flags: set[str]) -> str | None:
    """The highest x86-64 level whose flags the CPU has (HTCondor's Microarch), else None."""
    if "lm" not in flags:
        return None
    level = "x86_64-v1"
    for name, needs in _LEVELS:
        if not needs <= flags:
            break
        level = name
    return level


def totals(config: Config) -> dict[str, int]:
    """The cpus, memory (MB) and disk (KB) the startd hands out to its slots."""
    detected_mem = psutil.virtual_memory().total // (1024 * 1024)
    cpus = config.get_int("NUM_CPUS", psutil.cpu_count() or 1)
    memory = config.get_int("MEMORY", detected_mem - config.get_int("RESERVED_MEMORY", 0))
    execute = config.get("EXECUTE") or "/tmp"
    os.makedirs(execute, exist_ok=True)
    free_kb = shutil.disk_usage(execute).free // 1024
    disk = config.get_int("DISK", free_kb - config.get_int("RESERVED_DISK", 0) * 1024)
    return {"cpus": max(1, cpus), "memory": max(1, memory), "disk": max(1, disk)}


def detect(config: Config) -> dict[str, object]:
    """Machine-wide attributes, the same in every slot ad."""
    t = totals(config)
    vm = psutil.virtual_memory()
    swap = psutil.swap_memory()
    arch = _ARCH.get(platform.machine().lower(), platform.machine().upper())
    attrs: dict[str, object] = {
        "TotalCpus": t["cpus"], "TotalMemory": t["memory"], "TotalDisk": t["disk"],
        "DetectedCpus": psutil.cpu_count() or 1, "DetectedMemory": vm.total // (1024 * 1024),
        "TotalVirtualMemory": (vm.total + swap.total) // 1024, "VirtualMemory": (vm.available + swap.free) // 1024,
        "Arch": arch, "MachineResources": "Cpus Memory Disk",
        **os_attributes(os_release()),
    }
    if arch == "X86_64":
        flags = cpu_flags()
        level = microarch(flags)
        if level:
            attrs["Microarch"] = level
        for flag, attr in (("sse4_1", "Has_sse4_1"), ("sse4_2", "Has_sse4_2"), ("ssse3", "has_ssse3"),
                           ("avx", "has_avx"), ("avx2", "has_avx2"), ("avx512f", "has_avx512f")):
            if flag in flags:
                attrs[attr] = True
    return attrs


def load_average() -> float:
    return round(os.getloadavg()[0], 3)


def _idle_since(paths: list[str], now: float) -> float | None:
    """Seconds since the most recent access (atime) of any of ``paths``, or None if none exists."""
    newest = None
    for path in paths:
        with contextlib.suppress(OSError):
            atime = os.stat(path).st_atime
            newest = atime if newest is None else max(newest, atime)
    return None if newest is None else max(0.0, now - newest)


def console_devices(config: Config) -> list[str]:
    """``CONSOLE_DEVICES`` (HTCondor's default: mouse, console) under /dev, plus the input devices."""
    names = config.get_list("CONSOLE_DEVICES", ["mouse", "console"])
    return [n if n.startswith("/") else f"/dev/{n}" for n in names] + sorted(glob.glob("/dev/input/*"))


def terminal_devices(config: Config) -> list[str]:
    """The terminals of logged-in users (utmp), or every tty and pty if ``STARTD_HAS_BAD_UTMP``."""
    if config.get_bool("STARTD_HAS_BAD_UTMP", False):
        return sorted(glob.glob("/dev/pts/[0-9]*") + glob.glob("/dev/tty[0-9]*"))
    ttys = []
    with contextlib.suppress(Exception):
        for user in psutil.users():
            if user.terminal:
                ttys.append(user.terminal if user.terminal.startswith("/") else f"/dev/{user.terminal}")
    return ttys


def idle_times(config: Config, watching_since: float, now: float | None = None) -> tuple[int, int]:
    """(KeyboardIdle, ConsoleIdle) in seconds, measured as HTCondor does: the access times of the
    console devices and of the logged-in users' terminals.  What cannot be known (no console, nobody
    logged in) counts as idle since the startd began watching, so a headless machine is idle."""
    now = time.time() if now is None else now
    since_start = max(0.0, now - watching_since)
    console = _idle_since(console_devices(config), now)
    console = since_start if console is None else min(console, since_start)
    terminals = _idle_since(terminal_devices(config), now)
    keyboard = console if terminals is None else min(console, terminals)
    return int(keyboard), int(console)
