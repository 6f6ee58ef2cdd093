"""The open-file ceiling (RLIMIT_NOFILE) the master and its daemons run with.

A schedd with tens of thousands of jobs and connections runs out of descriptors at the usual
soft limit of 1024 long before anything else; the hard limit is what the host grants.  So the
master raises its soft limit to the hard limit (as root, first the hard limit to what the kernel
allows, ``/proc/sys/fs/nr_open``, at most ``HARD_CAP``) before it starts a daemon, and the
daemons inherit it.  ``MAX_FILE_DESCRIPTORS`` (HTCondor's knob) asks for a value instead, and
``<SUBSYS>_MAX_FILE_DESCRIPTORS`` for one daemon; neither can pass the hard limit unless the
master runs as root, as in HTCondor.
"""

from __future__ import annotations

import logging
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass

from htcd.config import Config

HARD_CAP = 1 << 20  # systemd's and most distributions' ceiling; more only wastes kernel tables
NR_OPEN = "/proc/sys/fs/nr_open"


@dataclass(frozen=True)
class Limit:
    soft: int
    hard: int


def current() -> Limit:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return Limit(soft, hard)


def host_ceiling(path: str = NR_OPEN) -> int:
    """What root may raise the hard limit to: the kernel's nr_open, at most HARD_CAP."""
    try:
        with open(path) as f:
            return min(int(f.read().strip()), HARD_CAP)
    except (OSError, ValueError):
        return HARD_CAP


def _unlimited(value: int) -> int:
    return HARD_CAP if value == resource.RLIM_INFINITY else value


def wanted(config: Config, subsys: str | None, log: logging.Logger) -> int | None:
    """The descriptor count asked for by ``<SUBSYS>_MAX_FILE_DESCRIPTORS`` or
    ``MAX_FILE_DESCRIPTORS``, or None (then: the hard limit)."""
    for knob in ([f"{subsys}_MAX_FILE_DESCRIPTORS"] if subsys else []) + ["MAX_FILE_DESCRIPTORS"]:
        text = config.get(knob)
        if not text:
            continue
        try:
            value = int(text)
        except ValueError:
            log.warning("%s = %s is not a whole number: ignored", knob, text)
            continue
        if value <= 0:
            log.warning("%s = %s must be positive: ignored", knob, text)
            continue
        return value
    return None


def target(have: Limit, want: int | None, root: bool, ceiling: int) -> Limit:
    """The limit to set: the soft limit at ``want`` (default: the hard limit); root may first
    raise the hard limit up to ``ceiling``, anyone else gets at most the hard limit."""
    hard = _unlimited(have.hard)
    if root:
        hard = max(hard, min(ceiling, want if want is not None else ceiling))
    soft = hard if want is None else min(want, hard)
    return Limit(soft, hard if root else have.hard)


def raise_limit(config: Config, log: logging.Logger) -> Limit:
    """Set the master's own limit before it starts its daemons (they inherit it); log what changed."""
    have = current()
    want = wanted(config, "MASTER", log)
    goal = target(have, want, os.geteuid() == 0, host_ceiling())
    if goal == have:
        log.info("RLIMIT_NOFILE: soft %d, hard %d (unchanged)", have.soft, have.hard)
        return have
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (goal.soft, goal.hard))
    except (ValueError, OSError) as exc:
        # root without CAP_SYS_RESOURCE (a container): the soft limit can still reach the hard one
        fallback = target(have, want, False, 0)
        log.warning("RLIMIT_NOFILE: cannot raise the hard limit to %d (%s); raising the soft limit to %d",
                    goal.hard, exc, fallback.soft)
        goal = fallback
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (goal.soft, goal.hard))
        except (ValueError, OSError) as again:
            log.warning("RLIMIT_NOFILE: cannot set soft %d (have soft %d, hard %d): %s",
                        goal.soft, have.soft, have.hard, again)
            return have
    if want is not None and goal.soft < want:
        log.warning("RLIMIT_NOFILE: MAX_FILE_DESCRIPTORS = %d is above the hard limit %d; using %d "
                    "(only root can raise the hard limit)", want, goal.hard, goal.soft)
    log.info("RLIMIT_NOFILE: soft %d -> %d, hard %d -> %d", have.soft, goal.soft, have.hard, goal.hard)
    return goal


def for_child(config: Config, subsys: str, log: logging.Logger) -> Callable[[], None] | None:
    """What to run in a daemon's process before it starts when ``<SUBSYS>_MAX_FILE_DESCRIPTORS``
    asks for a limit other than the master's; None when it inherits the master's."""
    text = config.get(f"{subsys}_MAX_FILE_DESCRIPTORS")
    if not text:
        return None
    want = wanted(config, subsys, log)
    if want is None:
        return None
    have = current()
    goal = target(have, want, os.geteuid() == 0, host_ceiling())
    if goal == have:
        return None
    if goal.soft < want:
        log.warning("RLIMIT_NOFILE: %s_MAX_FILE_DESCRIPTORS = %d is above the hard limit %d; %s gets %d",
                    subsys, want, goal.hard, subsys, goal.soft)
    log.info("RLIMIT_NOFILE of %s: soft %d, hard %d", subsys, goal.soft, goal.hard)

    def apply() -> None:  # runs in the child between fork and exec: system calls, nothing else
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (goal.soft, goal.hard))
        except (ValueError, OSError):  # no CAP_SYS_RESOURCE: the hard limit stays
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(goal.soft, have.hard), have.hard))

    return apply
