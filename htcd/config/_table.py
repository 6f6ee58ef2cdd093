"""The param table (defaults of known knobs) and the knobs computed from the machine.

Both are the lowest layer of a config: anything a file or the environment says wins.
The computed ones are filled in lazily because some (the IP address) cost a system call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NamedTuple

from htcd.version import os_release

_HERE = os.path.dirname(__file__)


class Param(NamedTuple):
    """One row of param_table.tsv; ``default`` None means no default (the knob is undefined).

    ``fallback`` is the value the typed getters (``Config.get_int`` ...) use for a knob left
    undefined, as HTCondor's code does for knobs its param table leaves undefined
    (NEGOTIATOR_CYCLE_DELAY is undefined for ``$(...)`` and config_val, yet means 20): written
    ``-(20)`` in the default column.
    """

    name: str
    type: str
    default: str | None
    reconfig: bool
    description: str
    section: str = ""
    fallback: str | None = None
    #: ``used`` (htcd acts on it), ``unused`` (accepted, not used by htcd) or ``htcd-only``.
    use: str = "used"

    @property
    def acted_on(self) -> bool:
        """Whether htcd's code reads the knob (directly or through a knob it reads)."""
        return self.use != "unused"


#: A line ``# == Title`` starts a section of the table (the grouping of docs/knobs.md).
SECTION = "# == "
#: The table's rows as read, keyed by lower-case name: (section, the whole line).
#: A row becomes a Param when first looked up: a tool that needs a knob or two does not pay for
#: building all 1,300 (bench/config_bench.py shows the cost).
_LINES: dict[str, tuple[str, str]] | None = None
_PARSED: dict[str, Param | None] = {}
_TABLE: dict[str, Param] | None = None
#: Lower-case names of the subsystem-specific rows (``schedd.isschedd``), in table order.
_SUBSYS_KEYS: list[str] = []


def _lines() -> dict[str, tuple[str, str]]:
    global _LINES
    if _LINES is None:
        rows: dict[str, tuple[str, str]] = {}
        section = ""
        with open(os.path.join(_HERE, "param_table.tsv"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("#") or line == "\n":
                    if line.startswith(SECTION):
                        section = line[len(SECTION):].strip()
                    continue
                key = line[:line.index("\t")].lower()
                if "." in key:
                    _SUBSYS_KEYS.append(key)
                rows[key] = (section, line.rstrip("\n"))
        _LINES = rows
    return _LINES


def _row(key: str) -> Param | None:
    """The Param of lower-case ``key``, built from its line once."""
    try:
        return _PARSED[key]
    except KeyError:
        pass
    found = _lines().get(key)
    p = None
    if found is not None:
        section, line = found
        name, typ, default, when, use, desc = line.split("\t")
        if "\\n" in default:  # a default of several lines (HTCondor's CATALOG_SPACE)
            default = default.replace("\\n", "\n")
        fallback = default[2:-1] if default.startswith("-(") and default.endswith(")") else None
        p = Param(name, typ, None if default == "-" or fallback is not None else default, when == "reconfig", desc,
                  section, fallback, use)
    _PARSED[key] = p
    return p


def table() -> dict[str, Param]:
    """The param table keyed by lower-case name, in table order (the subsystem-specific rows
    apart, see ``lookup``)."""
    global _TABLE
    if _TABLE is None:
        rows: dict[str, Param] = {}
        for key in _lines():
            p = _row(key)
            if p is not None and "." not in key:
                rows[key] = p
        _TABLE = rows
    return _TABLE


def subsystem_rows() -> list[Param]:
    """The subsystem-specific rows (``SCHEDD.IsSchedd``), in table order."""
    _lines()
    return [p for p in map(_row, _SUBSYS_KEYS) if p is not None]


def lookup(key: str, subsystem: str) -> Param | None:
    """The row of lower-case ``key`` as daemon ``subsystem`` sees it: HTCondor gives a few knobs a
    default of their own per subsystem (IsSchedd is true for the schedd only)."""
    lines = _lines()
    if _SUBSYS_KEYS:
        own = f"{subsystem.lower()}.{key}"
        if own in lines:
            return _row(own)
    return _row(key) if "." not in key else None


def fallback(name: str) -> str | None:
    """The param table's value for ``name`` where it is read but left undefined (``-(...)``);
    a ``SUBSYS.`` or local-name prefix is looked through."""
    p = _row(name.lower().rsplit(".", 1)[-1])
    return None if p is None else p.fallback


def _reset() -> None:
    """Forget the table read (for measuring a cold read)."""
    global _LINES, _TABLE
    _LINES, _TABLE = None, None
    _PARSED.clear()
    _SUBSYS_KEYS.clear()


def _hostname() -> str:
    import socket

    return socket.gethostname()


def _ip_address() -> str:
    """The address of the interface holding the default route (no packet is sent)."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def _cpus() -> str:
    try:
        return str(len(os.sched_getaffinity(0)))
    except AttributeError:
        return str(os.cpu_count() or 1)


def _memory() -> str:
    try:
        return str(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024))
    except (ValueError, OSError, AttributeError):
        return "0"


def _username() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return os.environ.get("USER", "")


def _arch() -> str:
    arch = os.uname().machine.upper()
    return {"AMD64": "X86_64", "AARCH64": "AARCH64", "ARM64": "AARCH64"}.get(arch, arch)


def _physical_cpus() -> str:
    """Cores without their hyperthreads: distinct (physical id, core id) pairs of /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return _cpus()
    cores = set()
    for block in text.split("\n\n"):
        fields = dict(line.split(":", 1) for line in block.splitlines() if ":" in line)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        if "core id" in fields:
            cores.add((fields.get("physical id", "0"), fields["core id"]))
    return str(len(cores)) if cores else _cpus()


def _os_name() -> str:
    """The distribution's name as HTCondor's OPSYSNAME gives it on Debian-like systems: the first
    word of os-release's NAME (``Debian GNU/Linux`` -> ``Debian``)."""
    words = os_release().get("NAME", "").split()
    return words[0] if words else os.uname().sysname


def _os_major() -> str:
    return os_release().get("VERSION_ID", "0").split(".")[0]


def _os_ver() -> str:
    """Major * 100 + minor (``12`` -> 1200, ``9.4`` -> 904)."""
    parts = [*os_release().get("VERSION_ID", "0").split("."), "0"][:2]
    try:
        return str(int(parts[0]) * 100 + int(parts[1]))
    except ValueError:
        return "0"


def _ipv6() -> str:
    """The address of the interface holding the IPv6 default route, "" without one."""
    import socket

    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            s.connect(("2001:db8::1", 9))
            return str(s.getsockname()[0])
    except OSError:
        return ""


COMPUTED: dict[str, tuple[str, Callable[[], str]]] = {
    "full_hostname": ("FULL_HOSTNAME", _hostname),
    "hostname": ("HOSTNAME", lambda: _hostname().split(".", 1)[0]),
    "ip_address": ("IP_ADDRESS", _ip_address),
    "detected_cpus": ("DETECTED_CPUS", _cpus),
    "detected_cores": ("DETECTED_CORES", _cpus),
    "detected_memory": ("DETECTED_MEMORY", _memory),
    "opsys": ("OPSYS", lambda: os.uname().sysname.upper()),
    "arch": ("ARCH", _arch),
    "username": ("USERNAME", _username),
    "detected_physical_cpus": ("DETECTED_PHYSICAL_CPUS", _physical_cpus),
    "ipv4_address": ("IPV4_ADDRESS", _ip_address),
    "ipv6_address": ("IPV6_ADDRESS", _ipv6),
    "ip_address_is_ipv6": ("IP_ADDRESS_IS_IPV6", lambda: "false"),
    "utsname_sysname": ("UTSNAME_SYSNAME", lambda: os.uname().sysname),
    "utsname_nodename": ("UTSNAME_NODENAME", lambda: os.uname().nodename),
    "utsname_release": ("UTSNAME_RELEASE", lambda: os.uname().release),
    "utsname_version": ("UTSNAME_VERSION", lambda: os.uname().version),
    "utsname_machine": ("UTSNAME_MACHINE", lambda: os.uname().machine),
    "uname_arch": ("UNAME_ARCH", lambda: os.uname().machine),
    "uname_opsys": ("UNAME_OPSYS", lambda: os.uname().sysname),
    "opsyslegacy": ("OPSYSLEGACY", lambda: os.uname().sysname.upper()),
    "opsysname": ("OPSYSNAME", _os_name),
    "opsysshortname": ("OPSYSSHORTNAME", _os_name),
    "opsyslongname": ("OPSYSLONGNAME", lambda: f"{os_release().get('NAME', os.uname().sysname)} "
                                                f"{os_release().get('VERSION_ID', '')}".strip()),
    "opsysmajorver": ("OPSYSMAJORVER", _os_major),
    "opsysver": ("OPSYSVER", _os_ver),
    "opsysandver": ("OPSYSANDVER", lambda: _os_name() + _os_major()),
    "pid": ("PID", lambda: str(os.getpid())),
    "ppid": ("PPID", lambda: str(os.getppid())),
    "real_uid": ("REAL_UID", lambda: str(os.getuid())),
    "real_gid": ("REAL_GID", lambda: str(os.getgid())),
}
