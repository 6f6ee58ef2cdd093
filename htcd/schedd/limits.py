"""What the schedd refuses at submit: job-count limits and the admin's submit requirements.

A submit over a limit, or with a job failing a ``SUBMIT_REQUIREMENT_<Name>``, is refused whole
with the reason; ``SUBMIT_WARNING_<Name>`` (or a requirement with ``_IS_WARNING``) only warns.
"""

from __future__ import annotations

from collections.abc import Iterable

from htcd.classad import ClassAd, ClassAdSyntaxError, Expr, is_true, parse_expr
from htcd.config import Config
from htcd.wire.errors import CommandError


def _int(config: Config, name: str) -> int | None:
    text = config.get(name)
    if not text:
        return None
    try:
        return int(float(text))
    except ValueError:
        return None


def check_counts(config: Config, new: int, queued: int, owner_queued: int) -> None:
    """Refuse a submit of ``new`` jobs that would pass MAX_JOBS_PER_SUBMISSION,
    MAX_JOBS_SUBMITTED or MAX_JOBS_PER_OWNER."""
    for knob, have, what in (("MAX_JOBS_PER_SUBMISSION", 0, "jobs in one submission"),
                             ("MAX_JOBS_SUBMITTED", queued, "jobs in the queue"),
                             ("MAX_JOBS_PER_OWNER", owner_queued, "jobs of one owner in the queue")):
        limit = _int(config, knob)
        if limit is not None and have + new > limit:
            raise CommandError(f"submit refused: {have + new} {what} would exceed {knob} = {limit}",
                               "LIMIT")


def materialize_room(config: Config, live: int, owner_queued: int, queued: int) -> int | None:
    """How many more procs a factory may materialize under the schedd's limits, as HTCondor: its
    materialized procs count against MAX_MATERIALIZED_JOBS_PER_CLUSTER and MAX_JOBS_PER_SUBMISSION,
    and with everything else queued against MAX_JOBS_PER_OWNER and MAX_JOBS_SUBMITTED (the procs
    still to come count against none: a factory may hold millions)."""
    room: int | None = None
    for knob, have in (("MAX_MATERIALIZED_JOBS_PER_CLUSTER", live), ("MAX_JOBS_PER_SUBMISSION", live),
                       ("MAX_JOBS_PER_OWNER", owner_queued), ("MAX_JOBS_SUBMITTED", queued)):
        limit = _int(config, knob)
        if limit is not None:
            free = max(0, limit - have)
            room = free if room is None else min(room, free)
    return room


def _names(config: Config, knob: str) -> list[str]:
    return [n for n in config.get_list(knob, []) if n]


def _reason(config: Config, base: str, name: str, schedd_ad: ClassAd, job: ClassAd) -> str:
    text = config.get(f"{base}_{name}_REASON")
    if text:
        try:
            value = schedd_ad.eval_expr(parse_expr(text), job)
        except ClassAdSyntaxError:
            value = text
        if isinstance(value, str) and value:
            return value
    kind = "requirement" if base == "SUBMIT_REQUIREMENT" else "warning"
    return f"submit {kind} {name} is not satisfied"


def _rules(config: Config, base: str) -> list[tuple[str, Expr, bool]]:
    rules: list[tuple[str, Expr, bool]] = []
    for name in _names(config, f"{base}_NAMES"):
        text = config.get(f"{base}_{name}")
        if not text:
            continue
        try:
            expr = parse_expr(text)
        except ClassAdSyntaxError as exc:
            raise CommandError(f"{base}_{name} = {text}: {exc}", "BAD_CONFIG") from None
        warn = base == "SUBMIT_WARNING" or config.get_bool(f"{base}_{name}_IS_WARNING", False)
        rules.append((name, expr, warn))
    return rules


def check_requirements(config: Config, schedd_ad: ClassAd, jobs: Iterable[ClassAd]) -> list[str]:
    """Evaluate each rule with MY = the Scheduler ad and TARGET = each job: raise on the first
    failed requirement, return the warnings."""
    rules = [(base, *r) for base in ("SUBMIT_REQUIREMENT", "SUBMIT_WARNING") for r in _rules(config, base)]
    if not rules:
        return []
    warnings: dict[str, str] = {}
    for job in jobs:
        for base, name, expr, warn in rules:
            if is_true(schedd_ad.eval_expr(expr, job)):
                continue
            reason = _reason(config, base, name, schedd_ad, job)
            if not warn:
                raise CommandError(f"submit refused: {reason}", "SUBMIT_REQUIREMENT")
            warnings.setdefault(name, reason)
    return list(warnings.values())
