"""The slot layout from the config, in HTCondor's syntax: ``NUM_SLOTS``, ``SLOT_TYPE_<n>``,
``NUM_SLOTS_TYPE_<n>`` and ``SLOT_TYPE_<n>_PARTITIONABLE``.

Pure: the config and the machine's totals in, one ``SlotSpec`` per slot out.  A slot type is a
list of ``resource=share`` items (``cpus=2, memory=25%, disk=1/4``) or one share for every
resource (``1/4``, ``50%``); a share is an absolute amount (cpus; memory in MB; disk in KB;
memory and disk take K/M/G/T units), a percentage, a fraction, or ``auto`` -- an even part of
what the other slots leave (the default for every resource a type does not name).  Custom
resources (``MACHINE_RESOURCE_<Name>``, see resources.py) are shared the same way by name
(``gpus=2``, ``bandwidth=25%``); a custom share is a count, and a slot may get none of one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from htcd.config import Config
from htcd.errors import UserError

_RESOURCE_NAMES = {"cpus": "cpus", "cpu": "cpus", "c": "cpus", "memory": "memory", "mem": "memory",
                   "ram": "memory", "m": "memory", "disk": "disk", "d": "disk", "swap": "", "s": ""}
RESOURCES = ("cpus", "memory", "disk")
_UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4}
_BASE = {"memory": 1024 ** 2, "disk": 1024}  # the unit of a bare number: MB of memory, KB of disk


@dataclass(frozen=True)
class SlotSpec:
    type_id: int  # 0: the default layout (no SLOT_TYPE_<n>)
    cpus: int
    memory: int  # MB
    disk: int  # KB
    partitionable: bool = False
    custom: dict[str, int] = field(default_factory=dict)  # custom resource (lower case) -> count


@dataclass(frozen=True)
class Share:
    kind: str  # "abs", "frac" or "auto"
    value: float = 0.0


def _error(config: Config, knob: str, message: str) -> UserError:
    where = config.where(knob)
    return UserError(f"{knob} = {config.get(knob)}: {message}",
                     source=where[0] if where else None, line=where[1] if where else None)


def parse_share(text: str, resource: str) -> Share:
    """One share: ``auto``, ``25%``, ``1/4`` or an absolute amount; ValueError if it is none."""
    t = text.strip()
    if t.lower() == "auto":
        return Share("auto")
    if t.endswith("%"):
        pct = float(t[:-1])
        if not 0 < pct <= 100:
            raise ValueError(f"{t} is not a percentage between 0 and 100")
        return Share("frac", pct / 100)
    if "/" in t:
        num, _, den = t.partition("/")
        frac = float(num) / float(den)
        if not 0 < frac <= 1:
            raise ValueError(f"{t} is not a fraction between 0 and 1")
        return Share("frac", frac)
    if resource not in _BASE:  # cpus and custom resources: a whole count
        if not re.fullmatch(r"\d+", t):
            raise ValueError(f"{t!r} is not a count, a percentage, a fraction or auto")
        return Share("abs", int(t))
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)B?", t, re.IGNORECASE)
    if m is None:
        raise ValueError(f"{t!r} is not an amount, a percentage, a fraction or auto")
    amount = float(m.group(1)) * _UNITS[m.group(2).upper()] / _BASE[resource] if m.group(2) else float(m.group(1))
    return Share("abs", int(amount))


def parse_slot_type(text: str, custom: tuple[str, ...] = ()) -> dict[str, Share]:
    """``cpus=2, memory=25%, disk=1/4`` or ``1/4``: a share per resource (unnamed ones are auto).
    ``custom`` are the machine's custom resource names (lower case).  A share without a name
    (``cogs=50%, 50%``) is the share of every resource the type does not name, as in HTCondor."""
    items = [i for i in re.split(r"[,\s]+", text.strip()) if i]
    names = (*RESOURCES, *custom)
    shares = {r: Share("auto") for r in names}
    named: set[str] = set()
    rest: Share | None = None
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            share = parse_share(item, "cpus" if item.lower() == "auto" else "memory")
            if share.kind == "abs":
                raise ValueError(f"{item} without a resource name must be a fraction, a percentage or auto")
            rest = share
            continue
        key = name.strip().lower()
        resource = _RESOURCE_NAMES.get(key, key if key in custom else None)
        if resource is None:
            known = ", ".join(("cpus", "memory", "disk", *custom))
            raise ValueError(f"{item!r}: {name.strip()} is not a resource of this machine (resources: {known})")
        if resource:  # swap is accepted and ignored
            shares[resource] = parse_share(value, resource)
            named.add(resource)
    if rest is not None:
        for r in names:
            if r not in named:
                shares[r] = rest
    return shares


def _type_ids(config: Config) -> list[int]:
    ids = set()
    for name in config.names():
        m = re.fullmatch(r"(?:NUM_SLOTS_TYPE_|SLOT_TYPE_)(\d+)(?:_PARTITIONABLE)?", name, re.IGNORECASE)
        if m:
            ids.add(int(m.group(1)))
    return sorted(ids)


def layout(config: Config, totals: dict[str, int], custom: dict[str, int] | None = None) -> list[SlotSpec]:
    """The slots the config asks for, or a UserError naming the knob, its file and line.
    ``custom``: the machine's custom resources (lower-case name -> count)."""
    custom = custom or {}
    totals = {**totals, **custom}
    wanted: list[tuple[int, dict[str, Share], bool]] = []
    for n in _type_ids(config):
        count = config.get_int(f"NUM_SLOTS_TYPE_{n}", 0)
        if count <= 0:
            continue
        text = config.get(f"SLOT_TYPE_{n}") or "auto"
        try:
            shares = parse_slot_type(text, tuple(custom))
        except ValueError as exc:
            raise _error(config, f"SLOT_TYPE_{n}", str(exc)) from None
        wanted += [(n, shares, config.get_bool(f"SLOT_TYPE_{n}_PARTITIONABLE", False))] * count
    if not wanted:
        n = max(1, config.get_int("NUM_SLOTS", totals["cpus"]))
        cpus = max(1, totals["cpus"] // n)  # more slots than cpus: each still gets one
        return [SlotSpec(0, cpus, totals["memory"] // n, totals["disk"] // n,
                         custom={r: c // n for r, c in custom.items()}) for _ in range(n)]
    amounts: list[dict[str, int]] = [{} for _ in wanted]
    for res in (*RESOURCES, *custom):
        optional = res in custom  # a slot may have none of a custom resource
        fixed = 0
        autos = []
        for i, (n, shares, _) in enumerate(wanted):
            share = shares[res]
            if share.kind == "auto":
                autos.append(i)
                continue
            amount = int(share.value if share.kind == "abs" else share.value * totals[res])
            if amount < 1 and not optional:
                raise _error(config, f"SLOT_TYPE_{n}", f"gives a slot no {res} (the machine has {totals[res]})")
            amounts[i][res] = amount
            fixed += amount
        left = totals[res] - fixed
        if left < 0:
            knobs = ", ".join(sorted({f"SLOT_TYPE_{n}" for n, _, _ in wanted}))
            raise _error(config, f"SLOT_TYPE_{wanted[0][0]}",
                         f"the slot types ({knobs}) ask for {fixed} {res} but the machine has {totals[res]}")
        for i in autos:
            amounts[i][res] = left // len(autos)
            if amounts[i][res] < 1 and not optional:
                raise _error(config, f"SLOT_TYPE_{wanted[i][0]}",
                             f"no {res} is left for its auto share (the machine has {totals[res]}, "
                             f"{fixed} given to fixed shares, {len(autos)} auto shares)")
    return [SlotSpec(n, a["cpus"], a["memory"], a["disk"], part, {r: a[r] for r in custom})
            for (n, _, part), a in zip(wanted, amounts, strict=True)]
