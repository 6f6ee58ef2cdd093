"""What the defrag daemon counts and publishes in its ad (the Defrag ClassAd attributes), and the
part of it kept in the state file across restarts."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from htcd.classad import ClassAd
from htcd.defrag.policy import quote

RECENT_LIST_LENGTH = 10  # RecentDrainsList / RecentCancelsList hold the last ten commands
#: Counters kept in the state file, by attribute name.
KEPT = ("DrainSuccesses", "DrainFailures", "DrainedMachines", "MachinesDrainingPeak", "WholeMachinesPeak")


@dataclass
class Command:
    """One drain or cancel this daemon sent: an entry of RecentDrainsList / RecentCancelsList."""

    when: int
    who: str
    what: str = ""  # the schedule of a drain; empty for a cancel

    def text(self) -> str:
        what = f"; what = {quote(self.what)}" if self.what else ""
        return f"[ when = {self.when}; who = {quote(self.who)}{what} ]"


@dataclass
class DefragStats:
    counters: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KEPT, 0))
    machines_draining: int = 0
    whole_machines: int = 0
    drains: list[Command] = field(default_factory=list)
    cancels: list[Command] = field(default_factory=list)
    outcomes: list[tuple[float, bool]] = field(default_factory=list)  # (when, succeeded) within the window
    window: int = 6000  # RecentStatsLifetime's limit: ten polling intervals, as HTCondor's
    started: float = field(default_factory=time.time)
    prev_whole: set[str] = field(default_factory=set)
    prev_draining: set[str] = field(default_factory=set)
    last_arrival: int = 0
    arrival_sum: float = 0.0  # machine-seconds between arrivals of whole machines
    arrivals_timed: int = 0
    mean_squared: float = 0.0
    mean_arrival: float | None = None
    sd_arrival: float | None = None

    # -- what a poll observes --------------------------------------------------------------
    def observe(self, draining: set[str] | None, whole: set[str] | None, now: int) -> list[str]:
        """Record one poll's draining and whole machines (None: the query failed); the machines
        newly drained since the last poll (newly whole, or no longer draining)."""
        self.machines_draining = -1 if draining is None else len(draining)
        self.whole_machines = -1 if whole is None else len(whole)
        peaks = self.counters
        peaks["MachinesDrainingPeak"] = max(peaks["MachinesDrainingPeak"], self.machines_draining)
        peaks["WholeMachinesPeak"] = max(peaks["WholeMachinesPeak"], self.whole_machines)
        if draining is None or whole is None:
            return []
        arrived = sorted((whole - self.prev_whole) | {m for m in self.prev_draining - draining})
        newly = len(whole - self.prev_whole) + len(self.prev_draining - draining)
        self.prev_whole, self.prev_draining = set(whole), set(draining)
        if newly:
            self.counters["DrainedMachines"] += newly
            rate = 0.0
            if self.last_arrival:
                gap = max(1, now - self.last_arrival)
                self.arrivals_timed += newly
                self.arrival_sum += newly * gap
                rate = newly / gap
            self.last_arrival = now
            if self.arrival_sum > 0:
                mean = self.arrivals_timed / self.arrival_sum
                self.mean_squared += (rate - mean) ** 2
                self.mean_arrival = mean
                self.sd_arrival = math.sqrt(self.mean_squared / self.arrivals_timed)
        return arrived

    def drain_sent(self, who: str, schedule: str, ok: bool, now: int) -> None:
        self.counters["DrainSuccesses" if ok else "DrainFailures"] += 1
        self.outcomes.append((now, ok))
        self.drains = [*self.drains, Command(now, who, schedule)][-RECENT_LIST_LENGTH:]

    def cancel_sent(self, who: str, now: int) -> None:
        self.cancels = [*self.cancels, Command(now, who)][-RECENT_LIST_LENGTH:]

    # -- the ad ----------------------------------------------------------------------------
    def publish(self, ad: ClassAd, now: float) -> None:
        self.outcomes = [(t, ok) for t, ok in self.outcomes if t > now - self.window]
        for name, value in self.counters.items():
            ad[name] = value
        ad["MachinesDraining"] = self.machines_draining
        ad["WholeMachines"] = self.whole_machines
        ad["RecentDrainSuccesses"] = sum(1 for _, ok in self.outcomes if ok)
        ad["RecentDrainFailures"] = sum(1 for _, ok in self.outcomes if not ok)
        ad["StatsLifetime"] = int(now - self.started)
        ad["RecentStatsLifetime"] = int(min(self.window, now - self.started))
        if self.mean_arrival is not None:
            ad["MeanDrainedArrival"] = self.mean_arrival
            ad["MeanDrainedArrivalSD"] = self.sd_arrival or 0.0
        ad.set_expr("RecentDrainsList", "{ " + ", ".join(c.text() for c in self.drains) + " }")
        ad.set_expr("RecentCancelsList", "{ " + ", ".join(c.text() for c in self.cancels) + " }")

    # -- the state file ----------------------------------------------------------------------
    def save(self, ad: ClassAd) -> None:
        for name, value in self.counters.items():
            ad[name] = value
        ad["PreviousWholeMachines"] = sorted(self.prev_whole)
        ad["PreviousDrainingMachines"] = sorted(self.prev_draining)
        ad["LastWholeMachineArrival"] = self.last_arrival
        ad.set_expr("RecentDrainsList", "{ " + ", ".join(c.text() for c in self.drains) + " }")
        ad.set_expr("RecentCancelsList", "{ " + ", ".join(c.text() for c in self.cancels) + " }")

    def restore(self, ad: ClassAd) -> None:
        for name in KEPT:
            value = ad.get_value(name)
            if isinstance(value, int) and not isinstance(value, bool):
                self.counters[name] = value
        self.prev_whole = _names(ad.get_value("PreviousWholeMachines"))
        self.prev_draining = _names(ad.get_value("PreviousDrainingMachines"))
        last = ad.get_value("LastWholeMachineArrival")
        self.last_arrival = last if isinstance(last, int) and not isinstance(last, bool) else 0
        self.drains = _commands(ad.get_value("RecentDrainsList"))
        self.cancels = _commands(ad.get_value("RecentCancelsList"))


def _names(value: object) -> set[str]:
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _commands(value: object) -> list[Command]:
    out = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, ClassAd):
            when, who, what = item.get_value("when"), item.get_value("who"), item.get_value("what")
            if isinstance(when, int) and isinstance(who, str):
                out.append(Command(when, who, what if isinstance(what, str) else ""))
    return out[-RECENT_LIST_LENGTH:]
