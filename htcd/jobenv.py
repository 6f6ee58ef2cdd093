"""What a job ad says about starting and stopping its process: argv, environment, kill signal,
core file limit.

Shared by everything that runs a job -- the starter in the startd, the schedd's local universe,
the startd's cron jobs -- so it sits in the runtime layer, below the daemons.

In a job ad, the new syntax (``Arguments``, ``Environment``) separates words by whitespace, groups with
single quotes and writes a literal single quote as two; the old syntax (``Args``, ``Env``)
splits on whitespace, and ``Env`` on semicolons.
"""

from __future__ import annotations

import contextlib
import resource
import signal

from htcd.classad.functions import split_v2_words


def split_v2(text: str) -> list[str]:
    """Words of a job ad's canonical new-syntax value.  Unlike the submit file's syntax
    (htcd.submit.quoting), a job ad has no ``""`` escape: ClassAd string quoting already
    carried any double quote.  A quote left open runs to the end of the text."""
    words = split_v2_words(text)
    return words if words is not None else split_v2_words(text + "'") or []


def arguments(ad_args_v2: str | None, ad_args_v1: str | None) -> list[str]:
    if ad_args_v2:
        return split_v2(ad_args_v2)
    if ad_args_v1:
        return ad_args_v1.split()
    return []


def environment(env_v2: str | None, env_v1: str | None) -> dict[str, str]:
    env: dict[str, str] = {}
    if env_v2:
        items = split_v2(env_v2)
    elif env_v1:
        items = [e for e in env_v1.split(";") if e]
    else:
        items = []
    for item in items:
        k, sep, v = item.partition("=")
        if sep and k:
            env[k] = v
    return env


def kill_signal(value: object) -> int:
    """A job's KillSig (``SIGTERM``, ``TERM`` or a number) as a signal number; SIGTERM if unknown."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < signal.NSIG:
        return value
    if isinstance(value, str):
        name = value.strip().upper()
        if name.isdigit():
            return kill_signal(int(name))
        with contextlib.suppress(KeyError):
            return int(signal.Signals[name if name.startswith("SIG") else f"SIG{name}"])
    return int(signal.SIGTERM)


def core_size(value: object) -> int:
    """The job's core file limit in bytes (``RLIMIT_CORE``) from its CoreSize: as HTCondor's
    starter, unset means 0 (no core file) and a negative size means unlimited."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return resource.RLIM_INFINITY if value < 0 else int(value)
