"""Submit commands that shape what happens to a job at run time: deferral (``deferral_*``,
``cron_*``), retries (``max_retries``, ``retry_until``, ``success_exit_code``), time limits,
``nice_user`` and the attributes the schedd, shadow and starter read (``job_machine_attrs``,
``email_attributes``, ``submit_event_notes``, ``coresize``, ``job_max_vacate_time``,
``want_graceful_removal``...).

Each produces the attributes condor_submit 24 produces for it (checked by the differential test);
the daemons act on them.  The functions take the translator building the job.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from htcd.submit.errors import SubmitError
from htcd.submit.quoting import quote


class _Context(Protocol):
    @property
    def config_get(self) -> Callable[[str], str | None]: ...


class Translator(Protocol):
    """What these commands need of ``htcd.submit.commands.Translator`` (the job being built)."""

    ad: dict[str, str]
    universe: str
    warnings: list[str]

    @property
    def ctx(self) -> _Context: ...
    def fail(self, message: str, line: int | None) -> SubmitError: ...
    def first(self, *names: str) -> tuple[str, int] | None: ...
    def expr(self, attr: str, value: str, line: int | None) -> str: ...
    def bool_of(self, command: str, got: tuple[str, int]) -> bool: ...

CRON = (("cron_minute", "CronMinute"), ("cron_hour", "CronHour"), ("cron_day_of_month", "CronDayOfMonth"),
        ("cron_month", "CronMonth"), ("cron_day_of_week", "CronDayOfWeek"))
# command -> attribute, for commands whose value is a ClassAd expression kept as written
EXPRESSIONS = {"allowed_job_duration": "AllowedJobDuration", "allowed_execute_duration": "AllowedExecuteDuration",
               "job_max_vacate_time": "JobMaxVacateTime", "want_graceful_removal": "WantGracefulRemoval"}
# command -> attribute, for commands whose value must evaluate to an integer
INTEGERS = {"job_machine_attrs_history_length": "JobMachineAttrsHistoryLength", "coresize": "CoreSize"}
# command -> attribute, for commands whose value is kept as a string
STRINGS = {"job_machine_attrs": "JobMachineAttrs", "submit_event_notes": "SubmitEventNotes"}

COMMANDS = frozenset({
    "deferral_time", "deferral_window", "deferral_prep_time", *(c for c, _ in CRON),
    "max_retries", "retry_until", "success_exit_code", "nice_user", "email_attributes",
    *EXPRESSIONS, *INTEGERS, *STRINGS,
})
# What condor_submit assumes: DEFAULT_JOB_MAX_RETRIES and SCHEDD_INTERVAL in its param table.
DEFAULT_MAX_RETRIES = 2
DEFAULT_SCHEDD_INTERVAL = 300
DEFAULT_PREP_TIME = 300
DEFERRAL_CLAUSE = ("TARGET.HasJobDeferral && (((time() + ScheddInterval) >= (DeferralTime - DeferralPrepTime)) "
                   "&& (time() < (DeferralTime + DeferralWindow)))")


def integer(tr: Translator, command: str, value: str, line: int | None) -> int:
    """``value`` as condor_submit reads an integer command: a whole number or an expression of one."""
    if re.fullmatch(r"[-+]?\d+", value.strip()):
        return int(value)
    from htcd.classad import ClassAd, parse_expr

    try:
        result = ClassAd().eval_expr(parse_expr(value))
    except ValueError:
        result = None
    if isinstance(result, bool) or not isinstance(result, int):
        raise tr.fail(f"{command} = {value}: must be a whole number (or an expression that evaluates to one)",
                      line)
    return result


def _config_int(tr: Translator, knob: str, default: int) -> int:
    text = (tr.ctx.config_get(knob) or "").strip()
    return int(text) if re.fullmatch(r"\d+", text) else default


def deferral(tr: Translator) -> list[str]:
    """Deferral attributes; returns the Requirements clause that holds the job to its window."""
    when = tr.first("deferral_time")
    cron = [(attr, got) for command, attr in CRON if (got := tr.first(command)) is not None]
    if when is None and not cron:
        return []
    if tr.universe == "scheduler":
        raise tr.fail("deferral_time and cron_* do not work for scheduler universe jobs: use universe = local",
                      (when or cron[0][1])[1])
    for attr, got in cron:
        tr.ad[attr] = quote(got[0])
    if when is not None:
        tr.ad["DeferralTime"] = (str(int(when[0])) if re.fullmatch(r"\d+", when[0])
                                 else tr.expr("DeferralTime", when[0], when[1]))
    window = tr.first("deferral_window")
    prep = tr.first("deferral_prep_time")
    tr.ad["DeferralWindow"] = str(integer(tr, "deferral_window", *window) if window else 0)
    tr.ad["DeferralPrepTime"] = str(integer(tr, "deferral_prep_time", *prep) if prep else DEFAULT_PREP_TIME)
    tr.ad["ScheddInterval"] = str(_config_int(tr, "SCHEDD_INTERVAL", DEFAULT_SCHEDD_INTERVAL))
    return [DEFERRAL_CLAUSE]


def retries(tr: Translator, on_exit_remove: str | None) -> str | None:
    """JobMaxRetries / JobSuccessExitCode, and the OnExitRemove that ends the retries."""
    most = tr.first("max_retries")
    until = tr.first("retry_until")
    success = tr.first("success_exit_code")
    if most is None and until is None and success is None:
        return on_exit_remove
    if most is not None:
        if not re.fullmatch(r"\d+", most[0]):
            raise tr.fail(f"max_retries must be a whole number, not {most[0]!r}", most[1])
        tr.ad["JobMaxRetries"] = str(int(most[0]))
    else:
        tr.ad["JobMaxRetries"] = str(_config_int(tr, "DEFAULT_JOB_MAX_RETRIES", DEFAULT_MAX_RETRIES))
    tr.ad.setdefault("OnExitHold", "false")
    clauses = ["NumJobCompletions > JobMaxRetries"]
    if success is not None:
        tr.ad["JobSuccessExitCode"] = str(integer(tr, "success_exit_code", *success))
        clauses.append("ExitCode is JobSuccessExitCode")
    else:
        clauses.append("ExitCode is 0")
    if until is not None:
        # a bare number is an exit code to stop at; anything else an expression
        clauses.append(f"ExitCode is {int(until[0])}" if re.fullmatch(r"\d+", until[0])
                       else tr.expr("OnExitRemove", until[0], until[1]))
    if on_exit_remove is not None:
        clauses.append(on_exit_remove)
    return " || ".join(clauses)


def nice_user(tr: Translator, has_group: bool) -> tuple[str, int] | None:
    """``nice_user = true``: the job runs in the nice-user group unless an accounting group is set."""
    got = tr.first("nice_user")
    if got is None or tr.bool_of("nice_user", got) is not True:
        return None
    tr.ad["MaxJobRetirementTime"] = "0"
    if has_group:
        tr.warnings.append("nice_user conflicts with accounting_group; nice_user is ignored")
        return None
    return got


def simple_attributes(tr: Translator) -> None:
    """Commands that set one attribute each."""
    for command, attr in EXPRESSIONS.items():
        got = tr.first(command)
        if got is not None:
            tr.ad[attr] = tr.expr(attr, got[0], got[1])
    for command, attr in INTEGERS.items():
        got = tr.first(command)
        if got is not None:
            tr.ad[attr] = str(integer(tr, command, *got))
    for command, attr in STRINGS.items():
        got = tr.first(command)
        if got is not None:
            tr.ad[attr] = quote(got[0])
    got = tr.first("email_attributes")
    if got is not None:
        tr.ad["EmailAttributes"] = quote(",".join(w for w in re.split(r"[\s,]+", got[0]) if w))
