"""The defrag policy as the DEFRAG_* knobs say it, read and checked once per (re)config.

A knob htcd cannot honour stops the daemon with the knob's file and line (HTCondor's defrag
EXCEPTs on a bad expression or schedule too)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from htcd.classad import Expr, parse_expr
from htcd.config import Config, ConfigError
from htcd.defrag.rate import Rate
from htcd.errors import UserError

SCHEDULES = ("graceful", "quick", "fast")
#: What every machine considered must be (HTCondor adds it to each query).
BASE_SLOT = "PartitionableSlot && Offline =!= true"


def quote(text: str) -> str:
    """``text`` as a ClassAd string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Policy:
    name: str
    interval: int
    update_interval: int
    rate: Rate
    max_draining: int
    max_whole: int
    requirements: str | None
    whole_machine: str
    cancel_requirements: str | None
    rank: Expr | None
    rank_text: str
    schedule: str
    start_expr: str | None
    state_file: str

    @property
    def drain_reason(self) -> str:
        return f"Defrag {self.name}"

    @property
    def drained_by_me(self) -> str:
        """Machines not draining for someone else (another defrag, or an admin's own reason)."""
        return f"(DrainReason is undefined || DrainReason == {quote(self.drain_reason)})"

    @property
    def draining_constraint(self) -> str:
        return f"{BASE_SLOT} && Draining && {self.drained_by_me}"

    @property
    def whole_constraint(self) -> str:
        return f"({self.whole_machine}) && {BASE_SLOT} && {self.drained_by_me}"

    @property
    def cancel_constraint(self) -> str | None:
        if not self.cancel_requirements:
            return None
        return f"{self.draining_constraint} && ({self.cancel_requirements})"

    def reason_not_to_drain(self, to_drain: int, real: float, draining: set[str] | None,
                            whole: set[str] | None) -> str | None:
        """Why this poll drains nothing (the log's "Doing nothing, because ..."), or None.
        ``draining`` / ``whole``: this poll's machines, None when the query failed."""
        if to_drain <= 0:
            return f"number to drain in next {self.interval}s is calculated to be {real:.3f}"
        if self.rate.per_hour <= 0:
            return f"DEFRAG_DRAINING_MACHINES_PER_HOUR={self.rate.per_hour:f}"
        if self.max_draining == 0:
            return "DEFRAG_MAX_CONCURRENT_DRAINING=0"
        if self.max_whole == 0:
            return "DEFRAG_MAX_WHOLE_MACHINES=0"
        if self.max_draining > 0:
            if draining is None:
                return (f"DEFRAG_MAX_CONCURRENT_DRAINING={self.max_draining} and the query to count draining "
                        "machines failed")
            if len(draining) >= self.max_draining:
                return (f"DEFRAG_MAX_CONCURRENT_DRAINING={self.max_draining} and there are {len(draining)} "
                        "draining machines")
        if self.max_whole > 0 and whole is not None and len(whole) >= self.max_whole:
            return f"DEFRAG_MAX_WHOLE_MACHINES={self.max_whole} and there are {len(whole)} whole machines"
        if whole is None:
            return "the query to find whole machines failed"
        return None

    @property
    def candidate_constraint(self) -> str:
        text = f"{BASE_SLOT} && Draining =!= true"
        return f"{text} && ({self.requirements})" if self.requirements else text


def _fail(cfg: Config, knob: str, why: str) -> ConfigError:
    where = cfg.where(knob)
    return ConfigError(f"{knob} = {cfg.get(knob)}: {why}", source=where[0] if where else None,
                       line=where[1] if where else None)


def schedule_knob(cfg: Config) -> str:
    """DEFRAG_SCHEDULE (the name HTCondor's manual gives) when set, else DEFRAG_DRAINING_SCHEDULE
    (the name HTCondor's daemon reads, graceful by default)."""
    for knob in ("DEFRAG_SCHEDULE", "DEFRAG_DRAINING_SCHEDULE"):
        value = cfg.get(knob)
        if value:
            if value.strip().lower() not in SCHEDULES:
                raise _fail(cfg, knob, f"not a draining schedule (one of {', '.join(SCHEDULES)})")
            return value.strip().lower()
    return "graceful"


def load(cfg: Config, local_name: str | None, hostname: str) -> Policy:
    """The policy of ``cfg``; a ConfigError naming the knob, its file and line, when one is bad."""
    name = cfg.get("DEFRAG_NAME") or local_name or ""
    name = f"{name}@{hostname}" if name and "@" not in name else (name or hostname)
    exprs: dict[str, str | None] = {}
    for knob in ("DEFRAG_REQUIREMENTS", "DEFRAG_WHOLE_MACHINE_EXPR", "DEFRAG_CANCEL_REQUIREMENTS",
                 "DEFRAG_RANK", "DEFRAG_DRAINING_START_EXPR"):
        exprs[knob] = cfg.get_expr(knob)
    whole = exprs["DEFRAG_WHOLE_MACHINE_EXPR"]
    if not whole:
        raise ConfigError("DEFRAG_WHOLE_MACHINE_EXPR is empty: the defrag daemon needs it to tell whole "
                          "machines from fragmented ones")
    interval = cfg.get_int("DEFRAG_INTERVAL", 600)
    per_hour = cfg.get_float("DEFRAG_DRAINING_MACHINES_PER_HOUR", 0.0)
    if per_hour < 0:
        raise _fail(cfg, "DEFRAG_DRAINING_MACHINES_PER_HOUR", "a rate cannot be negative")
    update_interval = cfg.get_int("DEFRAG_UPDATE_INTERVAL", 300)
    if update_interval <= 0:
        raise _fail(cfg, "DEFRAG_UPDATE_INTERVAL", "must be a positive number of seconds")
    rank_text = exprs["DEFRAG_RANK"] or ""
    try:
        rank = parse_expr(rank_text) if rank_text else None
    except UserError as exc:  # get_expr checked it; kept for the type checker
        raise _fail(cfg, "DEFRAG_RANK", exc.message) from None
    state_file = cfg.get("DEFRAG_STATE_FILE") or os.path.join(
        cfg.get("LOCK") or cfg.get("LOG") or ".", f"{local_name or 'defrag'}_state")
    return Policy(
        name=name, interval=interval, update_interval=update_interval,
        rate=Rate.of(per_hour, max(interval, 1)),
        max_draining=max(-1, cfg.get_int("DEFRAG_MAX_CONCURRENT_DRAINING", -1)),
        max_whole=max(-1, cfg.get_int("DEFRAG_MAX_WHOLE_MACHINES", -1)),
        requirements=exprs["DEFRAG_REQUIREMENTS"], whole_machine=whole,
        cancel_requirements=exprs["DEFRAG_CANCEL_REQUIREMENTS"], rank=rank, rank_text=rank_text,
        schedule=schedule_knob(cfg), start_expr=exprs["DEFRAG_DRAINING_START_EXPR"], state_file=state_file)
