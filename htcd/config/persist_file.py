"""Where a daemon's persistent settings (``config_val -set``) live, and whether they are on.

Kept apart from :mod:`htcd.config.persist` because the loader reads this file while it builds a
Config; it needs only the few knob readers described by :class:`Knobs`."""

from __future__ import annotations

import os
from typing import Protocol


class Knobs(Protocol):
    """What the persistent-file rules read of a config."""

    @property
    def subsystem(self) -> str: ...

    @property
    def local_name(self) -> str | None: ...

    def get(self, name: str, default: str | None = None) -> str | None: ...

    def get_bool(self, name: str, default: bool = False) -> bool: ...


def persistent_file(cfg: Knobs) -> str | None:
    """The persistent-config file of the daemon ``cfg`` is loaded for, or None when disabled."""
    reason = persistent_disabled(cfg)
    if reason is not None:
        return None
    folder = cfg.get("PERSISTENT_CONFIG_DIR") or ""
    return os.path.join(folder, f".config.{cfg.local_name or cfg.subsystem}")


def persistent_disabled(cfg: Knobs) -> str | None:
    """Why persistent config is off for ``cfg`` (naming the knob), or None when it is on."""
    if not cfg.get_bool("ENABLE_PERSISTENT_CONFIG", False):
        return "ENABLE_PERSISTENT_CONFIG is not true"
    if not cfg.get("PERSISTENT_CONFIG_DIR"):
        return "PERSISTENT_CONFIG_DIR is not set"
    return None
