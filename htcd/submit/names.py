"""Which names condor_submit reads as commands, and the other spellings it accepts for each.

condor_submit looks a command up under its own name and then under other names: the job
attribute it sets (``LeaveJobInQueue = true`` is ``leave_in_queue = true``, ``cmd`` is
``executable``) and a few older spellings (``prio``, ``stdout``, ``arguments2``...).  The facts
come from ``htcd.submit.condor_commands`` (generated from HTCondor's sources); the older spellings
are listed here.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools

from htcd.submit.condor_commands import ATTRIBUTE_ALIASES, MANUAL_COMMANDS, PATTERNS, SUBMIT_KEYS

# Spellings condor_submit reads for the same command (its submit keys), beyond the attribute names.
_OTHER_SPELLINGS: tuple[tuple[str, ...], ...] = (
    ("priority", "prio"),
    ("rank", "preferences"),
    ("initialdir", "initial_dir", "job_iwd", "iwd"),
    ("input", "stdin"), ("output", "stdout"), ("error", "stderr"),
    ("arguments", "args", "arguments2"),
    ("environment", "env", "environment2"),
    ("max_idle", "materialize_max_idle"),
    ("coresize", "core_size"),
    ("deferral_window", "cron_window"),
    ("deferral_prep_time", "cron_prep_time"),
    ("transfer_input_files", "transferinputfiles"),
    ("transfer_output_files", "transferoutputfiles"),
    ("use_scitokens", "use_scitoken"),
    ("node_count", "nodecount"),
)


# Attribute names in condor_submit's keyword table that it does not read as commands (condor_submit
# 24 ignores ``in = x``, ``TransferInput = x``...: checked against its own code by the oracle).
_NOT_READ = frozenset({"in", "out", "err", "concurrencylimits", "transferinput", "transferoutput"})


def _classes() -> dict[str, tuple[str, ...]]:
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    for group in _OTHER_SPELLINGS:
        for other in group[1:]:
            union(group[0], other)
    for alias, command in ATTRIBUTE_ALIASES.items():
        if alias not in _NOT_READ:
            union(command, alias)
    members: dict[str, list[str]] = {}
    for name in list(parent):
        members.setdefault(find(name), []).append(name)
    return {name: tuple(sorted(group)) for group in members.values() for name in group}


_CLASS = _classes()

#: Every name condor_submit reads as a command (lower case), patterns aside.
CONDOR_NAMES: frozenset[str] = frozenset((MANUAL_COMMANDS | SUBMIT_KEYS | set(_CLASS)) - _NOT_READ)


@functools.lru_cache(maxsize=1024)
def spellings(command: str) -> tuple[str, ...]:
    """``command`` first, then the other names condor_submit reads for it."""
    return (command, *(n for n in _CLASS.get(command, ()) if n != command))


def is_condor_name(name: str) -> bool:
    """Whether condor_submit reads ``name`` (lower case) as a command."""
    return name in CONDOR_NAMES or any(fnmatch.fnmatchcase(name, p) for p in PATTERNS)


def close_command(name: str, commands: frozenset[str] | set[str]) -> str | None:
    """The command ``name`` is most likely a typo of, for a did-you-mean."""
    close = difflib.get_close_matches(name, sorted(commands), n=1, cutoff=0.8)
    return close[0] if close else None
