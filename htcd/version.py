"""The version and platform strings, in the form HTCondor's tools and daemons use.

``htcd version`` prints them and every daemon publishes them (``CondorVersion`` and
``CondorPlatform`` in its ad), so they live here, below both, and the version itself is only
``htcd.__version__``.  HTCondor's form (25.x; older releases wrote the date ``Oct 03 2024``)::

    $CondorVersion: 25.14.1 2026-09-24 BuildID: UW_Python_Wheel_Build $
    $CondorVersion: 24.0.1 2024-10-03 BuildID: 757453 PackageID: 24.0.1-1 $
    $CondorPlatform: X86_64-AlmaLinux_8.10 $

htcd fills it as honestly as a Python package can: the date is the day ``htcd/__init__.py``
was written (when the package was built or installed, or last edited in a checkout), there is
no build number (BuildID says ``htcd``), and PackageID is the version.  See docs/upgrade.md.
"""

from __future__ import annotations

import functools
import os
import time

from htcd import __version__


def build_date(path: str | None = None) -> str:
    """``YYYY-MM-DD`` (UTC) of the package's ``__init__.py``: the nearest thing to a build date."""
    if path is None:
        import htcd

        path = htcd.__file__
    try:
        stamp = os.stat(path).st_mtime
    except OSError:
        stamp = time.time()
    return time.strftime("%Y-%m-%d", time.gmtime(stamp))


def os_release(path: str = "/etc/os-release") -> dict[str, str]:
    """The distribution's /etc/os-release as a dict (NAME, VERSION_ID, PRETTY_NAME...); empty if unreadable."""
    out: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, sep, value = line.strip().partition("=")
                if sep:
                    out[key] = value.strip().strip('"')
    except OSError:
        pass
    return out


def platform_name(os_release_path: str = "/etc/os-release") -> str:
    """``<ARCH>-<distribution>_<version>`` as HTCondor names its platform (``X86_64-Debian_12``,
    ``X86_64-AlmaLinux_8.10``); the kernel's name (``X86_64-Linux``) where the distribution is not
    known."""
    info = os_release(os_release_path)
    distro = (info.get("NAME") or "").split(" ")[0].replace("/", "")
    release = info.get("VERSION_ID") or ""
    import platform  # here, not at the top: the config imports this module for os_release only

    name = (f"{distro}_{release}" if release else distro) if distro else platform.system() or "Unknown"
    return f"{(platform.machine() or 'unknown').upper()}-{name}"


@functools.cache
def version_string() -> str:
    """``$CondorVersion: <version> <YYYY-MM-DD> BuildID: htcd PackageID: <version> $``."""
    return f"$CondorVersion: {__version__} {build_date()} BuildID: htcd PackageID: {__version__} $"


@functools.cache
def platform_string() -> str:
    """``$CondorPlatform: <ARCH>-<distribution>_<version> $``."""
    return f"$CondorPlatform: {platform_name()} $"
