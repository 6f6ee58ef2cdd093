"""One sample of the pool: the collector's current ads reduced, in one pass per ad type, to the
series the view keeps ({series name: {key: value}}) and to the pool at a glance (``Glance``:
what ``htcd status -total`` and ``htcd q -totals`` say).

It reads the collector's stored ads directly (``Entry`` texts by their layout's attribute
positions, each distinct text parsed once) rather than building ClassAds: a 100,000-slot pool
is reduced in a fraction of a second.  ``steps`` is a generator so the daemon can give the loop
back between chunks of ads.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from htcd.classad import parse_expr
from htcd.collector.store import AdStore, Entry, Layout
from htcd.errors import UserError

SLOT_STATES = ("Owner", "Unclaimed", "Matched", "Claimed", "Preempting", "Backfill", "Drained")
ACTIVITIES = ("Idle", "Busy", "Suspended", "Retiring", "Vacating", "Killing", "Benchmarking")
JOB_STATES = ("Idle", "Running", "Held")
#: (Scheduler ad attribute, JSON key) of the queue totals; the job-state series use the first three.
SCHEDD_TOTALS = (("TotalIdleJobs", "idle"), ("TotalRunningJobs", "running"), ("TotalHeldJobs", "held"),
                 ("TotalRemovedJobs", "removed"), ("TotalCompletedJobs", "completed"),
                 ("TotalSuspendedJobs", "suspended"), ("TotalJobAds", "jobs"))
NEGOTIATION = (("duration", ("LastNegotiationCycleDuration0",)), ("matches", ("LastNegotiationCycleMatches0",)),
               ("rejections", ("LastNegotiationCycleRejections0",)),
               ("submitters", ("LastNegotiationCycleNumSchedulers0", "LastNegotiationCycleActiveSubmitterCount0")))
#: The daemon ads whose duty cycle is kept per daemon.  Masters and startds (one per host:
#: thousands in a big pool) are kept as two series over all of them, ``masters/mean`` and
#: ``masters/max``, ``startds/mean`` and ``startds/max``; every slot ad carries its startd's
#: figure, counted once per startd (its ``MyAddress``).
DUTY_TYPES = ("Collector", "Negotiator", "Scheduler")
POOLED_DUTY = (("DaemonMaster", "masters"),)
SERIES = ("slots_by_state", "slots_by_activity", "slots_by_arch", "claimed_by_arch", "cpus_by_state",
          "jobs_by_user", "jobs_by_schedd", "user_priority", "user_usage", "negotiation_cycle", "duty_cycle")
CHUNK = 2000  # entries between two chances to yield the loop

_MISSING = object()


class Values:
    """Each distinct attribute text parsed once: its string or number value (None otherwise)."""

    def __init__(self) -> None:
        self.cache: dict[str, Any] = {}

    def __call__(self, text: str | None) -> Any:
        if text is None:
            return None
        v = self.cache.get(text, _MISSING)
        if v is _MISSING:
            v = self.cache[text] = self._parse(text)
        return v

    @staticmethod
    def _parse(text: str) -> Any:
        if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and "\\" not in text and '"' not in text[1:-1]:
            return text[1:-1]
        try:
            return float(text) if "." in text or "e" in text.lower() else int(text)
        except ValueError:
            pass
        try:
            v = parse_expr(text).eval()
        except (UserError, RecursionError):
            return None
        return v if isinstance(v, (str, int, float)) else None

    def number(self, text: str | None) -> float | None:
        v = self(text)
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass
class Glance:
    """The current pool: slot totals per Arch/OpSys (as ``status -total``) and queue totals
    from the Scheduler ads (as ``q -totals`` summed over the schedds)."""

    time: int
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("Total", *SLOT_STATES), 0))
    queue: dict[str, int] = field(default_factory=lambda: {k: 0 for _, k in SCHEDD_TOTALS})
    by_schedd: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"time": self.time,
                "status_total": {"rows": [{"arch": k, **v} for k, v in sorted(self.rows.items())],
                                 "total": self.total},
                "queue_totals": {**self.queue, "by_schedd": self.by_schedd}}


@dataclass
class Sample:
    """One sample: the series values and the glance, taken at ``time``."""

    time: int
    series: dict[str, dict[str, float]]
    glance: Glance
    ads: int = 0  # ads reduced


def _positions(layout: Layout, names: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(layout.index.get(n, -1) for n in names)


MACHINE_ATTRS = ("state", "activity", "arch", "opsys", "cpus", "myaddress", "recentdaemoncoredutycycle")


def steps(store: AdStore, now: float | None = None) -> Generator[None, None, Sample]:
    """Reduce the store's live ads to a Sample; yields None every CHUNK ads (the caller may let
    other work run), returns the Sample."""
    now = time.time() if now is None else now
    val = Values()
    glance = Glance(int(now))
    by_state: dict[str, float] = dict.fromkeys(SLOT_STATES, 0)
    by_activity: dict[str, float] = dict.fromkeys(ACTIVITIES, 0)
    cpus: dict[str, float] = dict.fromkeys(SLOT_STATES, 0)
    by_arch: dict[str, float] = {}
    claimed_arch: dict[str, float] = {}
    counted = 0

    # Machine ads: counts per (state, activity, arch/opsys) and summed Cpus per state, first by
    # distinct text tuple (slots of a pool share few), then decoded once per tuple.
    groups: dict[tuple[str | None, ...], list[Any]] = {}  # texts -> [slots, summed Cpus]
    startd_duty: dict[str, str] = {}  # a startd's address text -> its duty cycle text (its slots share it)
    plans: dict[int, tuple[int, ...]] = {}
    n = 0
    for e in store.table("Machine").walk(every=CHUNK):
        if e is None:
            yield None
            continue
        if e.expires <= now:
            continue
        layout = e.layout
        pos = plans.get(id(layout))
        if pos is None:
            pos = plans[id(layout)] = _positions(layout, MACHINE_ATTRS)
        values = e.values
        key = tuple(values[i] if i >= 0 else None for i in pos[:4])
        g = groups.get(key)
        if g is None:
            g = groups[key] = [0, 0]
        g[0] += 1
        ci = pos[4]
        if ci >= 0:
            c = val.number(values[ci])
            if c is not None:
                g[1] += c
        ai, di = pos[5], pos[6]
        if ai >= 0 and di >= 0:
            startd_duty.setdefault(values[ai], values[di])
        n += 1
    for (state_t, activity_t, arch_t, opsys_t), (count, ncpus) in groups.items():
        count = int(count)
        state, activity, arch, opsys = val(state_t), val(activity_t), val(arch_t), val(opsys_t)
        if isinstance(state, str):
            by_state[state] = by_state.get(state, 0) + count
            cpus[state] = cpus.get(state, 0) + ncpus
        if isinstance(activity, str):
            by_activity[activity] = by_activity.get(activity, 0) + count
        if isinstance(arch, str) and isinstance(opsys, str):
            plat = f"{arch}/{opsys}"
            by_arch[plat] = by_arch.get(plat, 0) + count
            if state == "Claimed":
                claimed_arch[plat] = claimed_arch.get(plat, 0) + count
            if state in SLOT_STATES:
                row = glance.rows.setdefault(plat, dict.fromkeys(("Total", *SLOT_STATES), 0))
                for counts in (row, glance.total):
                    counts[state] += count
                    counts["Total"] += count
    for plat in by_arch:
        claimed_arch.setdefault(plat, 0)
    counted += n

    jobs_user: dict[str, float] = {}
    jobs_schedd: dict[str, float] = {}
    priority: dict[str, float] = {}
    usage: dict[str, float] = {}
    negotiation: dict[str, float] = {}
    duty: dict[str, float] = {}

    def live(ad_type: str) -> Generator[Entry | None, None, None]:
        for e in store.table(ad_type).walk(every=CHUNK):
            if e is None or e.expires > now:
                yield e

    for e in live("Submitter"):
        if e is None:
            yield None
            continue
        counted += 1
        name = val(e.get("name"))
        if not isinstance(name, str):
            continue
        for attr, state in (("idlejobs", "Idle"), ("runningjobs", "Running"), ("heldjobs", "Held")):
            v = val.number(e.get(attr))
            k = f"{name}/{state}"
            jobs_user[k] = jobs_user.get(k, 0) + (v or 0)
    for e in live("Scheduler"):
        if e is None:
            yield None
            continue
        counted += 1
        name = val(e.get("name"))
        if not isinstance(name, str):
            continue
        mine = glance.by_schedd.setdefault(name, {k: 0 for _, k in SCHEDD_TOTALS})
        for attr, k in SCHEDD_TOTALS:
            v = val.number(e.get(attr.lower()))
            if v is None and k == "jobs":  # no TotalJobAds: the queue is what its states sum to
                v = sum(mine[s] for s in ("idle", "running", "held", "removed", "completed", "suspended"))
            if v is not None:
                mine[k] += int(v)
                glance.queue[k] += int(v)
        for attr, state in zip(("TotalIdleJobs", "TotalRunningJobs", "TotalHeldJobs"), JOB_STATES, strict=True):
            jobs_schedd[f"{name}/{state}"] = val.number(e.get(attr.lower())) or 0
    for e in live("Accounting"):
        if e is None:
            yield None
            continue
        counted += 1
        name = val(e.get("name"))
        if not isinstance(name, str):
            continue
        p = val.number(e.get("priority"))
        if p is not None:
            priority[name] = p
        used = val.number(e.get("resourcesused"))
        if used is not None:
            usage[name] = used
        acc = val.number(e.get("weightedaccumulatedusage"))
        if acc is not None:
            usage[f"{name}/accumulated"] = acc
    for e in live("Negotiator"):
        if e is None:
            continue
        counted += 1
        for k, attrs in NEGOTIATION:
            for attr in attrs:
                v = val.number(e.get(attr.lower()))
                if v is not None:
                    negotiation[k] = v
                    break
    for ad_type in DUTY_TYPES:
        for e in live(ad_type):
            if e is None:
                continue
            name = val(e.get("name"))
            v = val.number(e.get("recentdaemoncoredutycycle"))
            if isinstance(name, str) and v is not None:
                duty[f"{name}/{store.table(ad_type).ad_type}"] = v

    for ad_type, label in POOLED_DUTY:
        seen: list[float] = []
        for e in live(ad_type):
            if e is None:
                yield None
                continue
            v = val.number(e.get("recentdaemoncoredutycycle"))
            if v is not None:
                seen.append(v)
        if seen:
            duty[f"{label}/mean"] = sum(seen) / len(seen)
            duty[f"{label}/max"] = max(seen)
    startds = [v for v in map(val.number, startd_duty.values()) if v is not None]
    if startds:  # the startds' figures, each once, from the Machine pass above
        duty["startds/mean"] = sum(startds) / len(startds)
        duty["startds/max"] = max(startds)

    series = {"slots_by_state": by_state, "slots_by_activity": by_activity, "slots_by_arch": by_arch,
              "claimed_by_arch": claimed_arch, "cpus_by_state": cpus, "jobs_by_user": jobs_user,
              "jobs_by_schedd": jobs_schedd, "user_priority": priority, "user_usage": usage,
              "negotiation_cycle": negotiation, "duty_cycle": duty}
    return Sample(int(now), series, glance, counted)


def take(store: AdStore, now: float | None = None) -> Sample:
    """A sample in one go (tests, the bench)."""
    gen = steps(store, now)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            result: Sample = stop.value
            return result
