"""Daemon logs in HTCondor's format: ``11/22/26 20:30:00 message``, rotated to ``.old``."""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys

FORMAT = "%(asctime)s %(message)s"
DATEFMT = "%m/%d/%y %H:%M:%S"

# HTCondor's daemon log file names, keyed by subsystem.
LOG_NAMES = {
    "MASTER": "MasterLog", "COLLECTOR": "CollectorLog", "NEGOTIATOR": "NegotiatorLog",
    "SCHEDD": "SchedLog", "STARTD": "StartLog", "SHADOW": "ShadowLog", "STARTER": "StarterLog",
    "MATCH": "MatchLog",
}


class _Formatter(logging.Formatter):
    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        if record.levelno >= logging.WARNING:
            record.message = f"{record.levelname}: {record.message}"  # greppable, as HTCondor's
        return super().formatMessage(record)


_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2, "g": 1024**3, "gb": 1024**3}


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


def open_log(name: str, path: str, max_bytes: int, debug: bool, terminal: bool) -> logging.Logger:
    """A logger writing to ``path`` (rotated at ``max_bytes`` to ``path.old``)."""
    logger = logging.getLogger(f"htcd.{name}")
    logger.handlers.clear()
    logger.propagate = False
    logger.setLevel(logging.DEBUG if debug else logging.INFO)
    fmt = _Formatter(FORMAT, DATEFMT)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if max_bytes > 0:
        handler: logging.Handler = logging.handlers.RotatingFileHandler(path, maxBytes=max_bytes, backupCount=1)
        handler.namer = lambda n: n[:-2] + ".old" if n.endswith(".1") else n  # type: ignore[attr-defined]
    else:
        handler = logging.FileHandler(path)
    handler.setFormatter(fmt)
    logger.addHandler(handler)
    if terminal:
        stream = logging.StreamHandler(sys.stderr)
        stream.setFormatter(fmt)
        logger.addHandler(stream)
    return logger
