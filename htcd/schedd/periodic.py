"""Job policy: periodic_hold/release/remove (and the SYSTEM_PERIODIC_* versions) evaluated every
PERIODIC_EXPR_INTERVAL, and on_exit_hold/on_exit_remove when a job exits."""

from __future__ import annotations

import time
from dataclasses import dataclass

from htcd.classad import ClassAd, ClassAdSyntaxError, Expr, is_true, parse_expr
from htcd.config import Config
from htcd.schedd.jobs import HELD, IDLE, RUNNING, Job

# (job attribute, system knob, action, statuses it applies to)
RULES = (("PeriodicRemove", "SYSTEM_PERIODIC_REMOVE", "remove", (IDLE, RUNNING, HELD)),
         ("PeriodicHold", "SYSTEM_PERIODIC_HOLD", "hold", (IDLE, RUNNING)),
         ("PeriodicRelease", "SYSTEM_PERIODIC_RELEASE", "release", (HELD,)))

# HoldReasonCode 3: a periodic_hold expression became true (as HTCondor numbers it)
PERIODIC_HOLD_CODE = 3
ON_EXIT_HOLD_CODE = 3
JOB_DURATION_EXCEEDED = 46  # AllowedJobDuration ran out (HoldReasonCode JobDurationExceeded)
JOB_EXECUTE_EXCEEDED = 47  # AllowedExecuteDuration ran out (HoldReasonCode JobExecuteExceeded)


@dataclass
class Decision:
    action: str  # remove, hold or release
    reason: str
    code: int = PERIODIC_HOLD_CODE  # a hold's HoldReasonCode


def short_duration(seconds: int) -> str:
    """A duration as HTCondor's hold reasons print it: ``d+hh:mm:ss`` without the leading
    zero fields, at least ``mm:ss`` (``00:10``, ``1:00:00``, ``1+00:00:00``)."""
    days, rest = divmod(max(0, seconds), 86400)
    full = f"{days:3d}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    i = 0
    while i < len(full) and full[i] in " 0+":
        i += 1
    if i < len(full) and full[i] == ":":
        i += 1
    return full[i:]


def _int_attr(job: Job, name: str) -> int | None:
    text = job.text(name)
    if text is None:
        return None
    value = job.get(name)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def duration_hold(job: Job, now: float) -> Decision | None:
    """AllowedJobDuration (from the shadow's start, ShadowBday) and AllowedExecuteDuration (from
    the job's start on the execute point, JobCurrentStartExecutingDate) of a running job, checked
    before the periodic expressions, with HTCondor's reasons and codes."""
    if job.status != RUNNING:
        return None
    allowed = _int_attr(job, "AllowedJobDuration")
    birthday = _int_attr(job, "ShadowBday")
    if allowed is not None and birthday is not None and now - birthday >= allowed:
        return Decision("hold", f"The job exceeded allowed job duration of {short_duration(allowed)}",
                        JOB_DURATION_EXCEEDED)
    allowed = _int_attr(job, "AllowedExecuteDuration")
    began = _int_attr(job, "JobCurrentStartExecutingDate")
    if allowed is not None and began is not None and birthday is not None and began >= birthday \
            and now - began > allowed:
        return Decision("hold", f"The job exceeded allowed execute duration of {short_duration(allowed)}",
                        JOB_EXECUTE_EXCEEDED)
    return None


def _system(config: Config, knob: str) -> tuple[Expr | None, str | None]:
    text = config.get(knob)
    if not text:
        return None, None
    try:
        return parse_expr(text), config.get(f"{knob}_REASON")
    except ClassAdSyntaxError:
        return None, None


def _reason(ad: ClassAd, text: str | None, default: str) -> str:
    if text:
        try:
            v = ad.eval_expr(text)
        except ClassAdSyntaxError:
            v = None
        if isinstance(v, str) and v:
            return v
    return default


def decide(config: Config, job: Job) -> Decision | None:
    """The first periodic rule that fires for this job: the allowed durations, then the job's
    rules before the system's."""
    over = duration_hold(job, time.time())
    if over is not None:
        return over
    ad = None
    for attr, knob, action, statuses in RULES:
        if job.status not in statuses:
            continue
        if job.text(attr) is not None:
            ad = ad or job.ad
            if is_true(ad.eval(attr)):
                reason = _reason(ad, job.text(f"{attr}Reason") and f"{attr}Reason",
                                 f"The job attribute {attr} expression '{job.text(attr)}' evaluated to TRUE")
                return Decision(action, reason)
        expr, reason_text = _system(config, knob)
        if expr is not None:
            ad = ad or job.ad
            if is_true(expr.eval(ad)):
                return Decision(action, _reason(ad, reason_text,
                                                f"The system macro {knob} expression '{config.get(knob)}' "
                                                "evaluated to TRUE"))
    return None


def on_exit(job: Job) -> str:
    """At exit (with the exit attributes already set): "hold", "requeue" or "complete"."""
    ad = job.ad
    if job.text("OnExitHold") is not None and is_true(ad.eval("OnExitHold")):
        return "hold"
    if job.text("OnExitRemove") is not None and ad.eval("OnExitRemove") is False:
        return "requeue"
    return "complete"
