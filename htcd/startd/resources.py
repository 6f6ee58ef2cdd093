"""Custom machine resources, HTCondor's ``MACHINE_RESOURCE_<Name>`` and
``MACHINE_RESOURCE_INVENTORY_<Name>``: GPUs and anything else an admin wants slots to carry.

A resource is either a count (fungible: ``MACHINE_RESOURCE_Bandwidth = 100``) or a list of ids
(``MACHINE_RESOURCE_GPUs = CUDA0, CUDA1``), which slots hand out by name so a job knows which
devices are its own.  An inventory command prints ``Detected<Name> = ...`` (a count or
``"id, id"``), optionally ``Offline<Name>`` and other attributes the slot ads carry.
``OFFLINE_MACHINE_RESOURCE_<Name>`` takes ids out of service.  ``MACHINE_RESOURCE_NAMES``, when
set, lists the resources to use; the others are ignored, as in HTCondor.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field

from htcd.classad import ClassAd, ClassAdSyntaxError, parse_old_ad
from htcd.config import Config
from htcd.errors import UserError

_PREFIX = "MACHINE_RESOURCE_"
_INVENTORY = "MACHINE_RESOURCE_INVENTORY_"
#: Names the startd's own resources have: a custom resource may not take them.
_BUILTIN = {"cpus", "cpu", "memory", "mem", "disk", "swap", "slot"}
INVENTORY_TIMEOUT = 60.0  # seconds an inventory command may take before the startd gives up on it
#: The discovery program HTCondor ships; htcd's own (``htcd gpu_discovery``) stands in for it.
GPU_DISCOVERY = "condor_gpu_discovery"


@dataclass
class Resource:
    """One custom resource of the machine: its name as the config spells it, its ids (None for a
    plain count), the count usable by slots and what the inventory reported besides."""

    name: str
    count: int
    ids: list[str] | None = None
    detected: str | int = 0  # Detected<Name>: the ids as one string, or the count
    offline: list[str] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)  # further inventory attributes (expression text)


def _error(config: Config, knob: str, message: str) -> UserError:
    where = config.where(knob)
    return UserError(f"{knob} = {config.get(knob)}: {message}",
                     source=where[0] if where else None, line=where[1] if where else None)


def split_ids(text: str) -> list[str]:
    return [t for t in re.split(r"[,\s]+", text.strip()) if t]


def parse_amount(text: str) -> tuple[int, list[str] | None]:
    """A MACHINE_RESOURCE value: a count (``4``) or ids (``CUDA0, CUDA1``); ValueError if neither."""
    items = split_ids(text)
    if not items:
        raise ValueError("the value is empty: give a count or a list of ids")
    if len(items) == 1 and re.fullmatch(r"[-+]?\d+(\.\d*)?([eE][-+]?\d+)?", items[0]):
        if not re.fullmatch(r"\+?\d+", items[0]):
            raise ValueError(f"{items[0]} is not a count (a whole number, 0 or more)")
        return int(items[0]), None
    dupes = sorted({i for i in items if items.count(i) > 1})
    if dupes:
        raise ValueError(f"the id list names {', '.join(dupes)} more than once")
    return len(items), items


def inventory_argv(command: str) -> list[str]:
    """The inventory command's argv; HTCondor's condor_gpu_discovery (``$(LIBEXEC)/...``, as
    ``use FEATURE : GPUs`` writes it) is htcd's ``gpu_discovery`` unless the program exists."""
    argv = shlex.split(command)
    if argv and os.path.basename(argv[0]) == GPU_DISCOVERY and not os.access(argv[0], os.X_OK):
        argv = [sys.executable, "-m", "htcd", "gpu_discovery", *argv[1:]]
    return argv


def run_inventory(config: Config, knob: str) -> ClassAd:
    """Run ``knob``'s command; its output as a ClassAd (``Detected<name>`` required)."""
    command = config.get(knob) or ""
    argv = inventory_argv(command)
    if not argv:
        raise _error(config, knob, "the command is empty")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=INVENTORY_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        raise _error(config, knob, f"the program {argv[0]} does not exist") from None
    except PermissionError:
        raise _error(config, knob, f"the program {argv[0]} is not executable") from None
    except subprocess.TimeoutExpired:
        raise _error(config, knob, f"the command did not finish within {INVENTORY_TIMEOUT:g} s") from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [""])[-1]
        raise _error(config, knob, f"the command exited with status {done.returncode}" + (f": {why}" if why else ""))
    try:
        ad = parse_old_ad(done.stdout)
    except ClassAdSyntaxError as exc:
        raise _error(config, knob, f"its output is not a ClassAd ({exc})") from None
    return ad


def _from_inventory(config: Config, knob: str, name: str) -> Resource:
    ad = run_inventory(config, knob)
    spelled = ad.name_of(f"Detected{name}")
    if spelled is None:
        raise _error(config, knob, f"its output has no Detected{name} attribute")
    value = ad.get_value(spelled)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise _error(config, knob, f"Detected{name} = {ad.expr_text(spelled)} is neither a count nor a "
                                   "string of ids")
    try:
        count, ids = parse_amount(str(value)) if value != "" else (0, None)
    except ValueError as exc:
        raise _error(config, knob, f"Detected{name}: {exc}") from None
    offline: list[str] = []
    attrs: dict[str, str] = {}
    for attr in ad:
        low = attr.lower()
        if low == f"detected{name.lower()}":
            continue
        if low == f"offline{name.lower()}":
            off = ad.get_value(attr)
            offline = split_ids(off) if isinstance(off, str) else []
        attrs[attr] = ad.expr_text(attr)
    detected: str | int = ",".join(ids) if ids is not None else count
    return Resource(name, count, ids, detected, offline, attrs)


def _names(config: Config) -> dict[str, tuple[str, str]]:
    """Resource name (lower case) -> (name as spelled, the knob that defines it).  The inventory
    wins over a plain MACHINE_RESOURCE_<name> as in HTCondor."""
    found: dict[str, tuple[str, str]] = {}
    for knob in config.names():
        upper = knob.upper()
        if upper.startswith(_INVENTORY):
            name = knob[len(_INVENTORY):]
            found[name.lower()] = (name, knob)
        elif upper.startswith(_PREFIX) and upper != "MACHINE_RESOURCE_NAMES":
            name = knob[len(_PREFIX):]
            if name.lower() not in found:
                found[name.lower()] = (name, knob)
    return found


def read(config: Config) -> dict[str, Resource]:
    """The machine's custom resources, keyed by lower-case name; a UserError names the knob, its
    file and line for a value htcd cannot use."""
    wanted = config.get("MACHINE_RESOURCE_NAMES")
    allowed = {n.lower() for n in split_ids(wanted)} if wanted is not None else None
    out: dict[str, Resource] = {}
    for low, (name, knob) in sorted(_names(config).items()):
        if allowed is not None and low not in allowed:
            continue
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
            raise _error(config, knob, f"{name!r} is not a resource name (letters, digits and _)")
        if low in _BUILTIN:
            raise _error(config, knob, f"{name} is one of the startd's own resources (cpus, memory, disk, swap): "
                                       "set NUM_CPUS, MEMORY or DISK instead")
        if (config.get(knob) or "").strip() == "":
            continue  # an empty definition turns the resource off, as an unset one
        if knob.upper().startswith(_INVENTORY):
            res = _from_inventory(config, knob, name)
        else:
            try:
                count, ids = parse_amount(config.get(knob) or "")
            except ValueError as exc:
                raise _error(config, knob, str(exc)) from None
            res = Resource(name, count, ids, ",".join(ids) if ids is not None else count)
        offline_knob = f"OFFLINE_MACHINE_RESOURCE_{name}"
        if config.get(offline_knob) is not None:
            res.offline = sorted(set(res.offline) | set(split_ids(config.get(offline_knob) or "")))
        if res.ids is not None and res.offline:
            res.ids = [i for i in res.ids if i not in res.offline]
            res.count = len(res.ids)
        out[low] = res
    return out


def knob_values(config: Config) -> dict[str, str | None]:
    """The knobs that define the custom resources, as set now: a reconfig that changes them is
    told to restart the startd (HTCondor too reads them only at start)."""
    return {k.upper(): config.get(k) for k in config.names()
            if k.upper().startswith((_PREFIX, "OFFLINE_" + _PREFIX))}
