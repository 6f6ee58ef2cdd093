"""Daemon logs as HTCondor writes them: its line format, its debug categories, its rotation.

A line is ``11/22/26 20:30:00 message`` (``DEBUG_TIME_FORMAT``; ``D_TIMESTAMP`` or
``LOGS_USE_TIMESTAMP`` print Unix seconds, ``D_SUB_SECOND`` adds milliseconds, ``D_FDS``,
``D_PID`` and ``D_CAT`` add ``(fd:N)``, ``(pid:N)`` and the message's category).

``<SUBSYS>_DEBUG`` and ``ALL_DEBUG`` pick the categories written (parsed by :mod:`htcd.debug`,
which the wire layer logs through too); ``D_ALWAYS``, ``D_ERROR`` and ``D_STATUS`` are on unless
turned off.  Python's levels map onto them: ``info`` is D_ALWAYS, ``debug`` is D_FULLDEBUG,
``warning`` and above are D_ERROR; other categories go through :func:`htcd.debug.dprintf`.  An
unknown name is reported in the log as a warning naming the knob, and ignored.

A file rotates at ``MAX_<SUBSYS>_LOG`` (a size, or a time such as ``1 Hr``) to ``<log>.old``, or
with ``MAX_NUM_<SUBSYS>_LOG`` above 1 to ``<log>.YYYYMMDDTHHMMSS`` files, the oldest renamed to
``<log>.old`` so that at most that many old files remain (HTCondor's naming).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import time
from dataclasses import dataclass, field

from htcd.debug import DebugFlags, flags_of, register

DEFAULT_TIME_FORMAT = "%m/%d/%y %H:%M:%S"

# HTCondor's daemon log file names, keyed by subsystem.
LOG_NAMES = {
    "MASTER": "MasterLog", "COLLECTOR": "CollectorLog", "NEGOTIATOR": "NegotiatorLog",
    "SCHEDD": "SchedLog", "STARTD": "StartLog", "SHADOW": "ShadowLog", "STARTER": "StarterLog",
    "MATCH": "MatchLog",
}


def _category_of(record: logging.LogRecord) -> tuple[str, bool]:
    cat = getattr(record, "dflag", None)
    if cat is not None:
        return cat
    if record.levelno >= logging.WARNING:
        return "D_ERROR", False
    return "D_ALWAYS", record.levelno < logging.INFO


class _CategoryFilter(logging.Filter):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.logger_name = name

    def filter(self, record: logging.LogRecord) -> bool:
        flags = flags_of(self.logger_name)
        if flags is None:
            return True
        cat, verbose = _category_of(record)
        return flags.enabled(cat, verbose)


# -- the line format ---------------------------------------------------------------------------

class LineFormatter(logging.Formatter):
    """HTCondor's header (time, then the options of ``D_FDS``, ``D_PID``, ``D_CAT``), then the
    message; warnings and errors carry their level name so they can be grepped."""

    def __init__(self, header: set[str] | frozenset[str] = frozenset(), time_format: str = DEFAULT_TIME_FORMAT,
                 unix_time: bool = False) -> None:
        super().__init__("%(message)s")
        self.header = frozenset(header)
        self.time_format = time_format
        self.unix_time = unix_time or "D_TIMESTAMP" in self.header

    def stamp(self, created: float) -> str:
        text = str(int(created)) if self.unix_time else time.strftime(self.time_format, time.localtime(created))
        if "D_SUB_SECOND" in self.header:
            text += f".{int(created * 1000) % 1000:03d}"
        return text

    def formatMessage(self, record: logging.LogRecord) -> str:  # logging's name
        parts = [self.stamp(record.created)]
        if self.header:
            if "D_FDS" in self.header:
                parts.append(f"(fd:{getattr(record, 'log_fd', -1)})")
            if "D_PID" in self.header:
                parts.append(f"(pid:{record.process})")
            if "D_CAT" in self.header:
                cat, verbose = _category_of(record)
                parts.append("(D_FULLDEBUG)" if verbose and cat == "D_ALWAYS"
                             else f"({cat}{':2' if verbose else ''})")
        message = record.message
        if record.levelno >= logging.WARNING:
            message = f"{record.levelname}: {message}"
        parts.append(message)
        return " ".join(parts)


# -- sizes and limits --------------------------------------------------------------------------

_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2, "g": 1024**3, "gb": 1024**3}
_BYTE_UNITS = {"": 1, "b": 1, "byte": 1, "bytes": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2,
               "g": 1024**3, "gb": 1024**3, "t": 1024**4, "tb": 1024**4}
_TIME_UNITS = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "min": 60, "mins": 60, "minute": 60,
               "minutes": 60, "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
               "d": 86400, "day": 86400, "days": 86400, "w": 604800, "wk": 604800, "wks": 604800,
               "week": 604800, "weeks": 604800}


def parse_size(text: str | None, default: int) -> int:
    """``10 Mb``, ``500000``, ``2G`` -> bytes (HTCondor's MAX_<SUBSYS>_LOG accepts units)."""
    if not text:
        return default
    t = text.strip().lower().replace(" ", "")
    num = t.rstrip("bkmg")
    unit = t[len(num):]
    try:
        return int(float(num) * _UNITS[unit])
    except (ValueError, KeyError):
        from htcd.errors import UserError
        raise UserError(f"{text!r} is not a size (a number with an optional K, M or G)") from None


@dataclass(frozen=True)
class LogLimit:
    """When a log rotates: past ``size`` bytes, or ``seconds`` after it was opened (0 = never)."""

    size: int = 10 * 1024 * 1024
    seconds: int = 0


def parse_limit(text: str | None, default: int = 10 * 1024 * 1024) -> LogLimit:
    """``MAX_<SUBSYS>_LOG``: bytes (``10 Mb``, ``512K``, ``0`` = no limit) or a time (``30 Sec``,
    ``5 Min``, ``1 Hr``, ``1 Day``, ``1 Wk``)."""
    if text is None or not text.strip():
        return LogLimit(size=default)
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([A-Za-z]*)\s*", text)
    if not m:
        from htcd.errors import UserError
        raise UserError(f"{text!r} is not a log size or time (a number with Kb, Mb, Gb, Sec, Min, Hr, Day or Wk)")
    value, unit = float(m.group(1)), m.group(2)
    lower = unit.lower()
    if lower in _BYTE_UNITS:
        return LogLimit(size=int(value * _BYTE_UNITS[lower]))
    if lower in _TIME_UNITS:
        return LogLimit(size=0, seconds=int(value * _TIME_UNITS[lower]))
    from htcd.errors import UserError
    raise UserError(f"{text!r}: unknown unit {unit!r} (Kb, Mb, Gb, Tb, Sec, Min, Hr, Day or Wk)")


# -- the file handler --------------------------------------------------------------------------

_STAMP_RE = re.compile(r"^\d{8}T\d{6}$")


def rotated_files(path: str) -> list[str]:
    """Rotated copies of ``path`` (``.old`` and ``.YYYYMMDDTHHMMSS``), oldest first."""
    directory, base = os.path.split(path)
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return []
    out = []
    for name in names:
        if name.startswith(base + "."):
            rest = name[len(base) + 1:]
            if rest == "old" or _STAMP_RE.match(rest):
                out.append(os.path.join(directory, name))
    return sorted(out)  # timestamps sort before "old", as in HTCondor; see rotate()


class DaemonLogHandler(logging.Handler):
    """Append lines to one file (one ``write`` per line, ``O_APPEND``), rotating it as HTCondor
    does.  ``keep_open`` false opens and closes the file around each line (``<SUBSYS>_LOG_KEEP_OPEN``)."""

    lines_written = 0  # every line of every daemon log of this process (statistic DCDebugOuts)

    def __init__(self, path: str, limit: LogLimit, max_num: int = 1, keep_open: bool = True,
                 truncate: bool = False) -> None:
        super().__init__()
        self.path = path
        self.limit = limit
        self.max_num = max(1, max_num)
        self.keep_open = keep_open
        self.fd: int | None = None
        self.size = 0
        self.opened = time.time()
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        if truncate:
            with open(path, "w"):
                pass
        self._open()
        if not keep_open:
            self._close_fd()

    def _open(self) -> int:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self.size = os.fstat(fd).st_size
        self.fd = fd
        return fd

    def _close_fd(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None

    def _due(self, more: int) -> bool:
        if self.limit.size > 0 and self.size > 0 and self.size + more > self.limit.size:
            return True
        return self.limit.seconds > 0 and time.time() - self.opened >= self.limit.seconds and self.size > 0

    def rotate(self) -> None:
        """Rename the file away (``.old``, or a timestamp when more than one old file is kept)
        and start a new one; then keep at most ``max_num`` old files, the oldest named ``.old``."""
        self._close_fd()
        if self.max_num <= 1:
            target = f"{self.path}.old"
        else:
            stamp = time.strftime("%Y%m%dT%H%M%S")
            newest = max((p[len(self.path) + 1:] for p in rotated_files(self.path) if not p.endswith(".old")),
                         default="")
            if newest >= stamp:  # rotated within the same second: the name after the newest, so
                later = time.mktime(time.strptime(newest, "%Y%m%dT%H%M%S")) + 1  # names keep their order
                stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(later))
            target = f"{self.path}.{stamp}"
        with contextlib.suppress(FileNotFoundError):
            os.replace(self.path, target)
        old = rotated_files(self.path)
        while len(old) > self.max_num and not old[0].endswith(".old"):
            os.replace(old[0], f"{self.path}.old")
            old = rotated_files(self.path)
        self.opened = time.time()
        self.size = 0

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fd = self.fd if self.fd is not None else self._open()
            record.log_fd = fd
            data = (self.format(record) + "\n").encode("utf-8", "replace")
            if self._due(len(data)):
                self.rotate()
                fd = self._open()
            os.write(fd, data)
            self.size += len(data)
            DaemonLogHandler.lines_written += 1
            if not self.keep_open:
                self._close_fd()
        except Exception:
            self.handleError(record)

    def close(self) -> None:
        self.acquire()
        try:
            self._close_fd()
        finally:
            self.release()
        super().close()


# -- opening a log -----------------------------------------------------------------------------

@dataclass
class LogSettings:
    """Everything the config says about one log."""

    path: str
    flags: DebugFlags
    limit: LogLimit = field(default_factory=LogLimit)
    max_num: int = 1
    truncate: bool = False
    keep_open: bool = True
    time_format: str = DEFAULT_TIME_FORMAT
    unix_time: bool = False


def open_log(name: str, settings: LogSettings, terminal: bool = False, first: bool = True) -> logging.Logger:
    """The logger ``htcd.<name>`` writing to ``settings.path``.  Called again (reconfig), it
    closes and reopens its handlers with the new settings; ``first`` alone truncates
    (``TRUNC_<SUBSYS>_LOG_ON_OPEN``).  Unknown debug categories are logged as warnings."""
    logger = logging.getLogger(f"htcd.{name}")
    for old in list(logger.handlers):
        logger.removeHandler(old)
        old.close()
    logger.filters = [f for f in logger.filters if not isinstance(f, _CategoryFilter)]
    logger.propagate = False
    flags = settings.flags
    register(logger.name, flags)
    logger.setLevel(logging.DEBUG if flags.verbose else logging.INFO)
    logger.addFilter(_CategoryFilter(logger.name))
    fmt = LineFormatter(flags.header, settings.time_format, settings.unix_time)
    handler = DaemonLogHandler(settings.path, settings.limit, settings.max_num, settings.keep_open,
                               truncate=settings.truncate and first)
    handler.setFormatter(fmt)
    logger.addHandler(handler)
    if terminal:
        stream = logging.StreamHandler(sys.stderr)
        stream.setFormatter(fmt)
        logger.addHandler(stream)
    for warning in flags.warnings():
        logger.warning(warning)
    return logger
