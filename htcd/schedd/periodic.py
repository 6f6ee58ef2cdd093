"""Job policy: periodic_hold/release/remove (and the SYSTEM_PERIODIC_* versions) evaluated every
PERIODIC_EXPR_INTERVAL, and on_exit_hold/on_exit_remove when a job exits."""

from __future__ import annotations

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


@dataclass
class Decision:
    action: str  # remove, hold or release
    reason: str


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
    """The first periodic rule that fires for this job, job rules before system rules."""
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
