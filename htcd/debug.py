"""HTCondor's debug categories (``D_COMMAND``, ``D_SECURITY:2``...) and :func:`dprintf`.

Below the wire and the daemon core, so both can log under a category: a daemon's log
(``htcd.daemon.log``) registers each logger's :class:`DebugFlags` here when it opens it, and
:func:`dprintf` and :func:`enabled` read them.  A logger nobody registered writes D_ALWAYS,
D_ERROR and D_STATUS.

``<SUBSYS>_DEBUG`` and ``ALL_DEBUG`` syntax: a comma, ``|`` or space separated list of
``D_NAME[:n]``, ``:1`` (the default) for a category's normal messages, ``:2`` for its verbose ones
too, ``:0`` (or a leading ``-``) to turn it off; ``D_FULLDEBUG`` is ``D_ALWAYS:2`` and, when no
``:n`` is used anywhere in the knob, makes every listed category verbose.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

# HTCondor's debug categories (messages are written under exactly one of them).
CATEGORIES = (
    "D_ALWAYS", "D_ERROR", "D_STATUS", "D_GENERAL", "D_JOB", "D_MACHINE", "D_CONFIG", "D_PROTOCOL",
    "D_PRIV", "D_DAEMONCORE", "D_SECURITY", "D_COMMAND", "D_MATCH", "D_NETWORK", "D_KEYBOARD",
    "D_PROCFAMILY", "D_IDLE", "D_THREADS", "D_ACCOUNTANT", "D_SYSCALLS", "D_CKPT", "D_HOSTNAME",
    "D_PERF_TRACE", "D_LOAD", "D_PROC", "D_NFS", "D_CRON", "D_STATS", "D_AUDIT", "D_TEST",
)
# Options that change every line's header rather than choosing messages.
HEADER_OPTIONS = {"D_PID": "D_PID", "D_FDS": "D_FDS", "D_CAT": "D_CAT", "D_CATEGORY": "D_CAT",
                  "D_LEVEL": "D_CAT", "D_TIMESTAMP": "D_TIMESTAMP", "D_SUB_SECOND": "D_SUB_SECOND",
                  "D_EXPR": "D_EXPR"}
ALWAYS_ON = frozenset({"D_ALWAYS", "D_ERROR", "D_STATUS"})


@dataclass
class DebugFlags:
    """What one log writes: categories on (``basic``), categories whose verbose (``:2``) messages
    are on too, header options, and the names a knob gave that mean nothing."""

    basic: set[str] = field(default_factory=lambda: set(ALWAYS_ON))
    verbose: set[str] = field(default_factory=set)
    header: set[str] = field(default_factory=set)
    unknown: list[tuple[str, str]] = field(default_factory=list)

    def enabled(self, category: str, verbose: bool = False) -> bool:
        return category in (self.verbose if verbose else self.basic)

    def merge(self, knob: str, text: str | None) -> None:
        """Apply one knob's value (``ALL_DEBUG``, then ``<SUBSYS>_DEBUG``), as HTCondor does."""
        if not text:
            return
        fulldebug = False
        individual = False
        for token in re.split(r"[\s,|]+", text.strip()):
            if not token:
                continue
            level = 1
            if token.startswith("-"):
                token, level = token[1:], 0
            name, colon, digit = token.partition(":")
            if colon:
                individual = True
                if digit[:1].isdigit():
                    level = int(digit[:1])
            name = name.upper()
            bits: set[str] = set()
            hdr: set[str] = set()
            if name == "D_ALL":
                bits, hdr = set(CATEGORIES), {"D_PID", "D_FDS", "D_CAT"}
            elif name == "D_ANY":
                bits = set(CATEGORIES)
            elif name in HEADER_OPTIONS:
                hdr = {HEADER_OPTIONS[name]}
            elif name == "D_FULLDEBUG":
                fulldebug = level > 0
                level *= 2  # D_FULLDEBUG:1 is D_ALWAYS:2
                bits = {"D_ALWAYS"}
            elif name == "D_FAILURE":
                bits = {"D_ERROR"}
            elif name in CATEGORIES:
                bits = {name}
            else:
                self.unknown.append((knob, token))
                continue
            if level:
                self.header |= hdr
                self.basic |= bits
                if level > 1:
                    self.verbose |= bits
            else:
                self.header -= hdr
                self.basic -= bits
                self.verbose -= bits
        if fulldebug and not individual:
            self.verbose |= self.basic

    def warnings(self) -> list[str]:
        return [f"{knob}: unknown debug category {name!r} ignored (known: {', '.join(CATEGORIES)}, "
                f"D_FULLDEBUG, D_FAILURE, D_ANY, D_ALL, {', '.join(sorted(HEADER_OPTIONS))})"
                for knob, name in self.unknown]


def parse_debug(settings: list[tuple[str, str | None]]) -> DebugFlags:
    """``[(knob, value), ...]`` merged in order into one set of flags."""
    flags = DebugFlags()
    for knob, text in settings:
        flags.merge(knob, text)
    return flags


# -- messages under a category ---------------------------------------------------------------

_FLAGS: dict[str, DebugFlags] = {}  # logger name -> its flags


def register(logger_name: str, flags: DebugFlags) -> None:
    """The flags ``logger_name`` writes by, from now on (set when a daemon log is opened)."""
    _FLAGS[logger_name] = flags


def flags_of(logger_name: str) -> DebugFlags | None:
    return _FLAGS.get(logger_name)


def _split(flag: str) -> tuple[str, bool]:
    name, _, level = flag.partition(":")
    name = name.upper()
    if name == "D_FULLDEBUG":
        return "D_ALWAYS", True
    return name, level == "2"


def enabled(log: logging.Logger, flag: str) -> bool:
    """Whether ``log`` writes messages of ``flag`` (``D_COMMAND``, ``D_COMMAND:2``, ``D_FULLDEBUG``);
    check it before building an expensive message."""
    flags = _FLAGS.get(log.name)
    cat, verbose = _split(flag)
    return flags.enabled(cat, verbose) if flags is not None else (cat in ALWAYS_ON and not verbose)


def dprintf(log: logging.Logger, flag: str, msg: str, *args: object) -> None:
    """Log ``msg`` under an HTCondor category: ``dprintf(log, "D_COMMAND", "...")``; ``D_X:2`` is
    the category's verbose level."""
    cat, verbose = _split(flag)
    flags = _FLAGS.get(log.name)
    if flags is not None and not flags.enabled(cat, verbose):
        return
    log.log(logging.DEBUG if verbose else logging.INFO, msg, *args, extra={"dflag": (cat, verbose)},
            stacklevel=2)
