"""The accountant: each customer's (submitter's or accounting group's) usage and priority.

HTCondor's formulas: every update the real user priority (RUP) of a customer moves toward the
weighted resources it uses now, ``prio = beta * prio + (1 - beta) * in_use`` with
``beta = 0.5 ** (dt / PRIORITY_HALFLIFE)``, never below 0.5; the effective priority (EUP) is the RUP
times the customer's priority factor (``DEFAULT_PRIO_FACTOR`` unless set with ``userprio
-setfactor``; ``GROUP_PRIO_FACTOR_<group>`` for a group, ``NICE_USER_PRIO_FACTOR`` for
``nice-user.*``, ``REMOTE_PRIO_FACTOR`` outside ``ACCOUNTANT_LOCAL_DOMAIN``).  Accumulated usage
(resource-seconds, plain and weighted) never decays: it is what ``userprio`` reports as usage.

The records live in a small SQLite file in SPOOL, written in one transaction per update: a
negotiator killed mid-write keeps the previous state whole, and a restart keeps priorities.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, field

MIN_PRIORITY = 0.5


@dataclass
class Customer:
    name: str
    priority: float = MIN_PRIORITY  # real priority
    factor: float | None = None  # set explicitly (userprio -setfactor); None: the configured default
    accumulated: float = 0.0  # resource-seconds, unweighted (AccumulatedUsage)
    weighted_accumulated: float = 0.0  # slot-weight-seconds (WeightedAccumulatedUsage)
    begin_usage: int = 0
    last_usage: int = 0
    resources_used: int = 0  # slots in use at the last update
    weighted_used: float = 0.0
    is_group: bool = False
    extra: dict[str, object] = field(default_factory=dict)


@dataclass
class FactorRules:
    """Where a customer's priority factor comes from when none was set for it."""

    default: float = 1000.0
    nice_user: float = 1e10
    remote: float = 1e7
    local_domain: str | None = None
    group_factors: dict[str, float] = field(default_factory=dict)  # group name (lower) -> factor

    def factor_for(self, name: str, is_group: bool) -> float:
        user, _, domain = name.rpartition("@")
        user = user or name
        if is_group and user.lower() in self.group_factors:
            return self.group_factors[user.lower()]
        if user.lower().startswith("nice-user."):
            return self.nice_user
        if self.local_domain and domain and domain.lower() != self.local_domain.lower():
            return self.remote
        return self.default


def decay(priority: float, in_use: float, dt: float, halflife: float) -> float:
    """One step of HTCondor's real-priority formula over ``dt`` seconds."""
    beta = 0.5 ** (dt / halflife) if halflife > 0 else 0.0
    return max(MIN_PRIORITY, beta * priority + (1.0 - beta) * in_use)


class Accountant:
    def __init__(self, path: str | None, rules: FactorRules | None = None, halflife: float = 86400.0) -> None:
        self.path = path
        self.rules = rules or FactorRules()
        self.halflife = halflife
        self.customers: dict[str, Customer] = {}
        self.last_update = 0.0
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        if path:
            self._open(path)

    # -- persistence ------------------------------------------------------------------------
    def _open(self, path: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("CREATE TABLE IF NOT EXISTS customers (name TEXT PRIMARY KEY, record TEXT NOT NULL)")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for name, record in self._db.execute("SELECT name, record FROM customers"):
            data = json.loads(record)
            data["name"] = name
            self.customers[name] = Customer(**data)
        row = self._db.execute("SELECT value FROM meta WHERE key = 'last_update'").fetchone()
        self.last_update = float(row[0]) if row else 0.0

    def snapshot(self) -> tuple[list[tuple[str, str]], float]:
        """The records as rows, taken in the caller's thread (``write`` may run in another)."""
        rows = [(c.name, json.dumps({k: v for k, v in asdict(c).items() if k != "name"}))
                for c in self.customers.values()]
        return rows, self.last_update

    def write(self, snapshot: tuple[list[tuple[str, str]], float]) -> None:
        """Replace the stored records by ``snapshot`` in one transaction."""
        rows, last_update = snapshot
        with self._lock:
            db = self._db
            if db is None:
                return
            db.execute("BEGIN")
            try:
                db.execute("DELETE FROM customers")
                db.executemany("INSERT INTO customers (name, record) VALUES (?, ?)", rows)
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_update', ?)", (repr(last_update),))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def save(self) -> None:
        self.write(self.snapshot())

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- the figures --------------------------------------------------------------------------
    def customer(self, name: str, is_group: bool = False) -> Customer:
        c = self.customers.get(name)
        if c is None:
            c = self.customers[name] = Customer(name, is_group=is_group)
        return c

    def factor(self, name: str) -> float:
        c = self.customers.get(name)
        if c is not None and c.factor is not None:
            return c.factor
        return self.rules.factor_for(name, c.is_group if c is not None else False)

    def real_priority(self, name: str) -> float:
        c = self.customers.get(name)
        return c.priority if c is not None else MIN_PRIORITY

    def effective_priority(self, name: str) -> float:
        return self.real_priority(name) * self.factor(name)

    def update(self, in_use: dict[str, tuple[int, float]], now: float | None = None,
               groups: set[str] | None = None) -> None:
        """Charge each customer for what it used since the last update and decay priorities;
        ``in_use`` maps a customer to (slots, weighted slots) it holds now."""
        now = time.time() if now is None else now
        dt = max(0.0, now - self.last_update) if self.last_update else 0.0
        for name in in_use:
            self.customer(name, is_group=name in (groups or ()))
        for c in self.customers.values():
            slots, weighted = in_use.get(c.name, (0, 0.0))
            if dt > 0:
                c.priority = decay(c.priority, weighted, dt, self.halflife)
                # the usage since the last update is charged at the rate seen then
                c.accumulated += c.resources_used * dt
                c.weighted_accumulated += c.weighted_used * dt
            if slots:
                if not c.begin_usage:
                    c.begin_usage = int(now)
                c.last_usage = int(now)
            c.resources_used, c.weighted_used = slots, weighted
        self.last_update = now

    # -- administration (userprio) ----------------------------------------------------------
    def set_factor(self, name: str, factor: float) -> None:
        if factor < 1.0:
            raise ValueError("the priority factor must be at least 1.0")
        self.customer(name).factor = factor

    def set_priority(self, name: str, priority: float) -> None:
        if priority < MIN_PRIORITY:
            raise ValueError(f"the priority must be at least {MIN_PRIORITY}")
        self.customer(name).priority = priority

    def reset_usage(self, name: str, now: float | None = None) -> None:
        c = self.customer(name)
        c.accumulated = c.weighted_accumulated = 0.0
        c.priority = MIN_PRIORITY
        c.begin_usage = int(time.time() if now is None else now)

    def delete(self, name: str) -> bool:
        return self.customers.pop(name, None) is not None

    def record(self, name: str) -> dict[str, object]:
        """One customer as HTCondor's Accounting ad attributes."""
        c = self.customers.get(name) or Customer(name)
        user = name.rpartition("@")[0]
        real = c.priority
        factor = self.factor(name)
        return {"Name": name, "Priority": round(real * factor, 6), "PriorityFactor": factor,
                "RealPriority": round(real, 6), "ResourcesUsed": c.resources_used,
                "WeightedResourcesUsed": c.weighted_used, "AccumulatedUsage": c.accumulated,
                "WeightedAccumulatedUsage": c.weighted_accumulated, "BeginUsageTime": c.begin_usage,
                "LastUsageTime": c.last_usage, "IsAccountingGroup": c.is_group,
                "AccountingGroup": (user or name).rsplit(".", 1)[0] if "." in (user or name) else (user or name)}
