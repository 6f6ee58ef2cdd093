"""Settings made from outside a daemon: ``config_val -set`` (persistent) and ``-rset`` (runtime).

HTCondor's rules: persistent settings are honoured only where ENABLE_PERSISTENT_CONFIG is true
and PERSISTENT_CONFIG_DIR is set; they live in one file per daemon
(``$(PERSISTENT_CONFIG_DIR)/.config.<LOCAL_NAME or SUBSYSTEM>``), which the loader reads after
the local config files and before environment overrides, so they survive restarts and take
effect on the next reconfig.  Which knobs a client may set is limited by
``<SUBSYS>_SETTABLE_ATTRS_<LEVEL>`` or else ``SETTABLE_ATTRS_<LEVEL>``; without such a list
nothing may be set, as in HTCondor.  Every setting is checked (syntax, expansion, and the type
the param table gives the knob) before anything is stored.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import tempfile
from typing import TYPE_CHECKING

from htcd.config._expand import ConfigError
from htcd.config._lines import assignment
from htcd.config._table import table
from htcd.config.persist_file import persistent_disabled, persistent_file

if TYPE_CHECKING:
    from htcd.config._core import Config

#: Knobs that decide who may change the config; a remote client never sets them.
_PROTECTED = ("ENABLE_PERSISTENT_CONFIG", "PERSISTENT_CONFIG_DIR", "ENABLE_RUNTIME_CONFIG", "*SETTABLE_ATTRS*")
HEADER = "# Persistent settings made with 'htcd config_val -set'; rewritten by the daemon, do not edit.\n"


def format_assignment(name: str, raw: str) -> list[str]:
    """One knob as config text; a multi-line value is written with ``@=`` so it reads back."""
    if "\n" not in raw:
        return [f"{name} = {raw}"]
    tag = "end"
    while f"@{tag}" in raw:
        tag += "x"
    return [f"{name} @={tag}", *raw.split("\n"), f"@{tag}"]


def parse_setting(item: str) -> tuple[str, str]:
    """``"NAME = value"`` -> (NAME, value); anything else is a ConfigError saying the form."""

    name, op, rest = assignment(item.strip())
    if name is None or op != "=":
        raise ConfigError(f"{item!r}: expected NAME = value")
    return name, rest.strip()


def _settable_list(cfg: Config, level: str) -> tuple[str, list[str]] | None:
    for knob in (f"{cfg.subsystem}_SETTABLE_ATTRS_{level}", f"SETTABLE_ATTRS_{level}"):
        if cfg.get(knob) is not None:
            return knob, cfg.get_list(knob)
    return None


def check_settable(cfg: Config, name: str, level: str = "CONFIG") -> None:
    """Refuse ``name`` unless a SETTABLE_ATTRS list of ``level`` names it (``*`` patterns allowed)."""
    daemon = cfg.subsystem.lower()
    up = name.upper()
    base = up.split(".", 1)[1] if "." in up else up
    if any(fnmatch.fnmatchcase(base, p) for p in _PROTECTED):
        raise ConfigError(f"{up} cannot be set remotely: it controls who may change the config; "
                          "change it in a config file")
    found = _settable_list(cfg, level)
    if found is None:
        raise ConfigError(f"no knob may be set remotely on the {daemon}: list the knobs to allow in "
                          f"SETTABLE_ATTRS_{level} (or {cfg.subsystem}_SETTABLE_ATTRS_{level}) in a "
                          f"config file, e.g. SETTABLE_ATTRS_{level} = {base}")
    knob, allowed = found
    if not any(fnmatch.fnmatchcase(n, p.upper()) for p in allowed for n in (up, base)):
        raise ConfigError(f"{up} may not be set remotely on the {daemon}: it is not in {knob} "
                          f"({', '.join(allowed) or 'empty'})")


_GETTERS = {"int": "get_int", "bool": "get_bool", "float": "get_float", "size": "get_size", "expr": "get_expr"}


def check_values(cfg: Config, settings: dict[str, str], source: str) -> None:
    """Apply ``settings`` to a copy of ``cfg`` and read each with the getter its param-table
    type calls for; a value that does not expand or has the wrong type raises ConfigError."""
    trial = cfg.copy()
    for name, raw in settings.items():
        trial.define(name, raw, source, 0)
    trial._cache = {}
    for name, raw in settings.items():
        base = name.split(".", 1)[1] if "." in name else name
        p = table().get(base.lower())
        getter = _GETTERS.get(p.type if p is not None else "", "get")
        try:
            getattr(trial, getter)(name)
        except ConfigError as err:
            raise ConfigError(f"{name.upper()} = {raw}: {_reason(err, name, raw)}") from None


def _reason(err: ConfigError, name: str, raw: str) -> str:
    """The reason of a getter's error without its ``NAME = value:`` prefix (added back once)."""
    msg = err.message
    for prefix in (f"{name.upper()} = ", f"{name} = "):
        if msg.startswith(prefix) and ": " in msg:
            return msg.split(": ", 1)[1]
    return msg


def read_settings(path: str) -> dict[str, str]:
    """The settings of a persistent file as written (no expansion), in file order."""

    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror}") from None
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        name, op, rest = assignment(line)
        if name is None:
            raise ConfigError(f"not a setting: {line}", source=path, line=i)
        if op == "@=":
            tag, body = "@" + rest.strip(), []
            while i < len(lines) and lines[i].strip() != tag:
                body.append(lines[i])
                i += 1
            i += 1
            out[name.upper()] = "\n".join(body)
        else:
            out[name.upper()] = rest.strip()
    return out


def write_settings(path: str, settings: dict[str, str]) -> None:
    """Replace ``path`` atomically (temp file, fsync, rename); no settings removes it."""
    folder = os.path.dirname(path) or "."
    if not settings:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    os.makedirs(folder, mode=0o755, exist_ok=True)
    text = HEADER + "".join(line + "\n" for n, v in settings.items() for line in format_assignment(n, v))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dfd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def parse_changes(cfg: Config, set_items: list[str], unset: list[str], level: str = "CONFIG"
                  ) -> tuple[dict[str, str], list[str]]:
    """Check a request: (settings to make, names to remove), or ConfigError for the first bad one."""
    settings: dict[str, str] = {}
    for item in set_items:
        name, raw = parse_setting(str(item))
        check_settable(cfg, name, level)
        settings[name.upper()] = raw
    names = []
    for name in unset:
        n = str(name).strip().upper()
        if not n or not n.replace("_", "").replace(".", "").isalnum():
            raise ConfigError(f"{name!r}: not a knob name")
        check_settable(cfg, n, level)
        names.append(n)
    if settings:
        check_values(cfg, settings, "<config_val>")
    return settings, names


def persist_changes(cfg: Config, set_items: list[str], unset: list[str], level: str = "CONFIG") -> str:
    """``config_val -set/-unset`` on the daemon of ``cfg``: check, then rewrite its file.

    Returns the file written.  Nothing is written when any item is refused.
    """
    reason = persistent_disabled(cfg)
    if reason is not None:
        raise ConfigError(f"the {cfg.subsystem.lower()} refuses persistent config: {reason} (set "
                          "ENABLE_PERSISTENT_CONFIG = TRUE and PERSISTENT_CONFIG_DIR in a config file)")
    path = persistent_file(cfg)
    assert path is not None
    settings, names = parse_changes(cfg, set_items, unset, level)
    current = read_settings(path)
    for n in names:
        current.pop(n, None)
    current.update(settings)
    try:
        write_settings(path, current)
    except OSError as err:
        raise ConfigError(f"cannot write {path}: {err.strerror}") from None
    return path
