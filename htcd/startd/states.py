"""HTCondor's slot state machine: which state/activity a slot moves to next, and why.

``decide`` is pure: the slot, its policy ad (the slot ad plus the policy expressions, so that
``PREEMPT = ... (WANT_SUSPEND == False)`` can refer to the others), the policy and what the
whole startd is doing in; a ``Transition`` (or None) out.  The startd carries a transition out
(signals, claims) and asks again until nothing changes.  The transitions follow HTCondor's
"Policy Configuration for Execution Points":

- Owner <-> Unclaimed by ``IS_OWNER`` (default False; ``POLICY : Desktop`` makes it
  ``START =?= False``); either goes to Drained/Retiring when the machine drains.
- Claimed/Idle -> Preempting when ``START`` turns False for the claim's job, ``CLAIM_WORKLIFE``
  has passed, a higher-ranked claim waits, the machine drains or the startd shuts down.
- Claimed/Busy -> Claimed/Suspended when ``WANT_SUSPEND`` and ``SUSPEND``; back on ``CONTINUE``.
- Claimed/Busy -> Claimed/Retiring when (not ``WANT_SUSPEND``) ``PREEMPT``, a higher-ranked claim,
  graceful draining or shutdown; the job may finish within ``MAXJOBRETIREMENTTIME`` (counted from
  its start, less time suspended, the job's own MaxJobRetirementTime may only lower it); only a
  retirement for a preempting claim or a cancelled drain returns to Busy.
- Claimed/Suspended -> Claimed/Retiring on ``PREEMPT`` (the job is resumed to finish).
- Retirement over -> Preempting/Vacating (the job's KillSig, SIGTERM by default) or, when
  ``WANT_VACATE`` is False, Preempting/Killing (SIGKILL); Vacating -> Killing on ``KILL`` or after
  ``MachineMaxVacateTime`` (or the job's smaller JobMaxVacateTime).  A job evicted by ``PREEMPT``
  while ``WANT_HOLD`` is true is put on hold (HoldReasonCode 21, ``WANT_HOLD_REASON``,
  ``WANT_HOLD_SUBCODE``) instead of going back to idle.
- Preempting with no job left -> Claimed/Idle for a waiting higher-ranked claim, Drained when
  draining, else Owner (and from there Unclaimed); a dynamic slot is deleted.
- Drained/Retiring -> Drained/Idle once every slot is drained; back to Owner when the drain ends.

Matched is never entered: the negotiator does not tell the startd of a match, the schedd's claim
request comes straight to an Unclaimed slot (HTCondor's transition 5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from htcd.classad import ClassAd, Expr, is_true, parse_expr
from htcd.config import Config
from htcd.errors import UserError
from htcd.startd.slot import (
    BUSY,
    CLAIMED,
    DELETE,
    DRAINED,
    DYNAMIC,
    IDLE,
    KILLING,
    MATCHED,
    OWNER,
    PREEMPTING,
    RETIRING,
    SUSPENDED,
    UNCLAIMED,
    VACATING,
    Slot,
)

if TYPE_CHECKING:
    import logging

# knob -> (attribute in the policy ad, HTCondor's default)
POLICY_KNOBS: dict[str, tuple[str, str]] = {
    "START": ("START", "TRUE"),
    "IS_OWNER": ("IS_OWNER", "FALSE"),
    "SUSPEND": ("SUSPEND", "FALSE"),
    "CONTINUE": ("CONTINUE", "TRUE"),
    "PREEMPT": ("PREEMPT", "FALSE"),
    "KILL": ("KILL", "FALSE"),
    "WANT_SUSPEND": ("WANT_SUSPEND", "FALSE"),
    "WANT_VACATE": ("WANT_VACATE", "TRUE"),
    "MAXJOBRETIREMENTTIME": ("MaxJobRetirementTime", "0"),
    "MachineMaxVacateTime": ("MachineMaxVacateTime", "10 * 60"),
    "CLAIM_WORKLIFE": ("CLAIM_WORKLIFE", "1200"),
    "RANK": ("RANK", "0"),
    "WANT_HOLD": ("WANT_HOLD", "FALSE"),
    "WANT_HOLD_REASON": ("WANT_HOLD_REASON", "UNDEFINED"),
    "WANT_HOLD_SUBCODE": ("WANT_HOLD_SUBCODE", "UNDEFINED"),
    "PERIODIC_CHECKPOINT": ("PERIODIC_CHECKPOINT", "FALSE"),
}
HOLD_CODE_STARTD = 21  # HoldReasonCode StartdHeldJob
DEFAULT_HOLD_REASON = "The startd put the job on hold"
# Knobs with a ``<KNOB>_VANILLA`` variant used for vanilla universe jobs, as in HTCondor.
_VANILLA = ("SUSPEND", "CONTINUE", "PREEMPT", "KILL", "WANT_SUSPEND", "WANT_VACATE")


@dataclass(frozen=True)
class Transition:
    state: str
    activity: str
    reason: str
    end_claim: bool = False  # the claim is over: the slot goes on to its next holder or state
    retire_why: str | None = None  # set when entering Retiring
    hold: tuple[str, int, int] | None = None  # WANT_HOLD: (reason, code, subcode) the job is held with


@dataclass
class Drain:
    """A drain request (htcd drain) and its progress."""

    request_id: str
    how: str  # graceful, quick or fast
    reason: str
    on_completion: str  # nothing, resume, exit or restart
    start: str | None  # START while draining (None: no new jobs)
    start_time: int
    deadline: float = 0.0  # graceful: when the longest retirement ends (all jobs retire until then)
    completed: bool = False  # every claim made before the drain is gone
    done: bool = False  # every slot is drained and the on-completion action was taken


@dataclass
class Machine:
    """What the whole startd is doing, as the state machine needs it."""

    now: float
    drain: Drain | None = None
    all_drained: bool = False
    shutdown: str = ""  # "", "peaceful", "graceful" or "fast"
    drain_ended: str = "draining ended"
    match_timeout: float = 120.0  # MATCH_TIMEOUT: how long a Matched slot waits for the claim request


@dataclass
class Policy:
    """The policy expressions of the config, parsed once per (re)config."""

    texts: dict[str, str] = field(default_factory=dict)  # ad attribute -> expression text
    vanilla: dict[str, str] = field(default_factory=dict)
    trees: dict[str, Expr] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: Config, log: logging.Logger) -> Policy:
        policy = cls()
        values = {  # read one by one, so the param-table test sees every knob
            "START": config.get("START"), "IS_OWNER": config.get("IS_OWNER"),
            "SUSPEND": config.get("SUSPEND"), "CONTINUE": config.get("CONTINUE"),
            "PREEMPT": config.get("PREEMPT"), "KILL": config.get("KILL"),
            "WANT_SUSPEND": config.get("WANT_SUSPEND"), "WANT_VACATE": config.get("WANT_VACATE"),
            "MAXJOBRETIREMENTTIME": config.get("MAXJOBRETIREMENTTIME"),
            "MachineMaxVacateTime": config.get("MachineMaxVacateTime"),
            "CLAIM_WORKLIFE": config.get("CLAIM_WORKLIFE"), "RANK": config.get("RANK"),
            "WANT_HOLD": config.get("WANT_HOLD"), "WANT_HOLD_REASON": config.get("WANT_HOLD_REASON"),
            "WANT_HOLD_SUBCODE": config.get("WANT_HOLD_SUBCODE"),
            "PERIODIC_CHECKPOINT": config.get("PERIODIC_CHECKPOINT"),
        }
        for knob, (attr, default) in POLICY_KNOBS.items():
            policy.texts[attr] = policy._checked(config, knob, values[knob], default, log)
        for knob in _VANILLA:
            text = config.get(f"{knob}_VANILLA")
            if text:
                attr = POLICY_KNOBS[knob][0]
                policy.vanilla[attr] = policy._checked(config, f"{knob}_VANILLA", text, policy.texts[attr], log)
        return policy

    def _checked(self, config: Config, knob: str, value: str | None, default: str, log: logging.Logger) -> str:
        text = value or default
        try:
            self.trees[text] = parse_expr(text)
        except UserError as exc:
            where = config.where(knob)
            at = f"{where[0]}:{where[1]}: " if where else ""
            fallback = "FALSE" if knob == "START" else default
            log.error("%s%s = %s does not parse (%s): using %s", at, knob, text, exc.message, fallback)
            text = fallback
            self.trees[text] = parse_expr(text)
        return text

    def add_to(self, ad: ClassAd, job: ClassAd | None) -> None:
        """Put the policy expressions into ``ad`` (for a vanilla job, the _VANILLA variants)."""
        vanilla = job is not None and self.vanilla and job.get_value("JobUniverse", 5) == 5
        for attr, text in self.texts.items():
            if vanilla and attr in self.vanilla:
                text = self.vanilla[attr]
            ad.set_expr(attr, text)  # keeps the text for the log (the parse is cached)

    @staticmethod
    def value(ad: ClassAd, attr: str, job: ClassAd | None) -> object:
        return ad.eval(attr, target=job)

    def truth(self, ad: ClassAd, attr: str, job: ClassAd | None) -> tuple[bool, str]:
        """(is it true, why) -- ``why`` reads ``SUSPEND = LoadAvg > 0.5 was True``."""
        value = ad.eval(attr, target=job)
        result = is_true(value)
        shown = "True" if value is True else "False" if value is False else str(value)
        return result, f"{attr} = {ad.expr_text(attr)} was {shown}"

    @staticmethod
    def number(ad: ClassAd, attr: str, job: ClassAd | None, default: float) -> float:
        value = ad.eval(attr, target=job)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return default
        return float(value)


def _job_number(job: ClassAd | None, attr: str, slot_ad: ClassAd) -> float | None:
    """A number the job sets for itself (MaxJobRetirementTime, JobMaxVacateTime), if any."""
    if job is None or attr not in job:
        return None
    value = job.eval(attr, target=slot_ad)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def retirement_end(slot: Slot, ad: ClassAd, policy: Policy, m: Machine) -> float:
    """When the running job's retirement is over (it may run until then)."""
    if m.shutdown == "peaceful":
        return math.inf
    if slot.retire_why == "drain" and m.drain is not None:
        return m.drain.deadline
    job = slot.claim.job_ad if slot.claim else None
    mjrt = policy.number(ad, "MaxJobRetirementTime", job, 0.0)
    own = _job_number(job, "MaxJobRetirementTime", ad)
    if own is not None:
        mjrt = min(mjrt, own)
    return slot.job_start + slot.suspended_total + max(0.0, mjrt)


def vacate_time(ad: ClassAd, policy: Policy, job: ClassAd | None) -> tuple[float, str]:
    t = policy.number(ad, "MachineMaxVacateTime", job, 600.0)
    why = f"MachineMaxVacateTime = {ad.expr_text('MachineMaxVacateTime')}"
    own = _job_number(job, "JobMaxVacateTime", ad)
    if own is not None and own < t and job is not None:  # (own is None without a job)
        t, why = own, f"JobMaxVacateTime = {job.expr_text('JobMaxVacateTime')}"
    return t, why


def want_hold(ad: ClassAd, policy: Policy, job: ClassAd | None) -> tuple[str, int, int] | None:
    """WANT_HOLD for a job PREEMPT evicts: (WANT_HOLD_REASON, 21, WANT_HOLD_SUBCODE) or None."""
    if job is None or not policy.truth(ad, "WANT_HOLD", job)[0]:
        return None
    reason = policy.value(ad, "WANT_HOLD_REASON", job)
    sub = policy.value(ad, "WANT_HOLD_SUBCODE", job)
    subcode = int(sub) if isinstance(sub, (int, float)) and not isinstance(sub, bool) else 0
    return (reason if isinstance(reason, str) and reason else DEFAULT_HOLD_REASON), HOLD_CODE_STARTD, subcode


def _evict(slot: Slot, ad: ClassAd, policy: Policy, reason: str) -> Transition:
    """Into Preempting: Vacating (soft kill) unless WANT_VACATE says kill at once.  A job that
    PREEMPT evicts is held instead of requeued when WANT_HOLD says so."""
    if slot.starter is None:
        return Transition(PREEMPTING, VACATING, reason)
    job = slot.claim.job_ad if slot.claim else None
    hold = want_hold(ad, policy, job) if slot.retire_why == "preempt" else None
    if hold is not None:
        reason = f"{reason}; WANT_HOLD = {ad.expr_text('WANT_HOLD')} was True"
    want, why = policy.truth(ad, "WANT_VACATE", job)
    if not want:
        return Transition(PREEMPTING, KILLING, f"{reason}; {why}", hold=hold)
    return Transition(PREEMPTING, VACATING, reason, hold=hold)


def after_claim(slot: Slot, m: Machine) -> Transition:
    """Where a slot goes when its claim is over."""
    if slot.pending is not None:
        return Transition(CLAIMED, IDLE, "the preempting claim takes the slot", end_claim=True)
    if slot.kind == DYNAMIC:
        return Transition(DELETE, IDLE, "the claim is over; the resources go back to the partitionable slot",
                          end_claim=True)
    if m.drain is not None and (m.drain.start is None or m.drain.completed):
        return Transition(DRAINED, IDLE if m.all_drained else RETIRING, "the machine is draining", end_claim=True)
    return Transition(OWNER, IDLE, "the claim is over", end_claim=True)


def decide(slot: Slot, ad: ClassAd, policy: Policy, m: Machine) -> Transition | None:
    """The next transition of ``slot``, or None if it stays where it is."""
    state, activity = slot.state, slot.activity
    if state in (OWNER, UNCLAIMED):
        return _unclaimed(slot, ad, policy, m)
    if state == MATCHED:
        return _matched(slot, ad, policy, m)
    if state == DRAINED:
        if m.drain is None:
            return Transition(OWNER, IDLE, m.drain_ended)
        if activity == RETIRING and m.all_drained:
            return Transition(DRAINED, IDLE, "every slot is drained")
        return None
    if state == CLAIMED and slot.claim is not None:
        if activity == IDLE:
            return _claimed_idle(slot, ad, policy, m)
        return _claimed_running(slot, ad, policy, m)
    if state == PREEMPTING:
        return _preempting(slot, ad, policy, m)
    return None


def _unclaimed(slot: Slot, ad: ClassAd, policy: Policy, m: Machine) -> Transition | None:
    if m.drain is not None and (m.drain.start is None or m.drain.completed):
        reason = f"the machine is draining ({m.drain.reason})" if m.drain.reason else "the machine is draining"
        return Transition(DRAINED, IDLE if m.all_drained else RETIRING, reason)
    if m.shutdown:
        return None
    owner, why = policy.truth(ad, "IS_OWNER", None)
    if slot.state == UNCLAIMED and owner:
        return Transition(OWNER, IDLE, why)
    if slot.state == OWNER and not owner:
        return Transition(UNCLAIMED, IDLE, why)
    return None


def _matched(slot: Slot, ad: ClassAd, policy: Policy, m: Machine) -> Transition | None:
    """A slot the negotiator matched waits for the schedd's claim request, at most MATCH_TIMEOUT
    seconds; a drain or the owner coming back ends the wait too."""
    if m.drain is not None and (m.drain.start is None or m.drain.completed):
        return _unclaimed(slot, ad, policy, m)
    if m.shutdown:
        return None
    owner, why = policy.truth(ad, "IS_OWNER", None)
    if owner:
        return Transition(OWNER, IDLE, why)
    if m.now - slot.entered_state >= m.match_timeout:
        return Transition(OWNER, IDLE, f"no claim request came within MATCH_TIMEOUT = {m.match_timeout:g} s of "
                                       "the match")
    return None


def _claimed_idle(slot: Slot, ad: ClassAd, policy: Policy, m: Machine) -> Transition | None:
    claim = slot.claim
    assert claim is not None
    if slot.pending is not None:
        return Transition(PREEMPTING, VACATING, f"a claim the slot ranks higher ({slot.pending.rank:g} > "
                                                f"{claim.rank:g}) waits for it")
    if m.shutdown:
        return Transition(PREEMPTING, VACATING, "the startd is shutting down")
    if m.drain is not None and (not claim.accepted_while_draining or m.drain.completed):
        return Transition(PREEMPTING, VACATING, "the machine is draining")
    start, why = policy.truth(ad, "START", claim.job_ad)
    if not start:
        return Transition(PREEMPTING, VACATING, why)
    worklife = policy.number(ad, "CLAIM_WORKLIFE", claim.job_ad, -1.0)
    if worklife >= 0 and m.now - claim.start > worklife:
        return Transition(PREEMPTING, VACATING, f"CLAIM_WORKLIFE = {ad.expr_text('CLAIM_WORKLIFE')} has passed")
    return None


def _retire_why(slot: Slot, m: Machine, drained_out: bool) -> tuple[str, str] | None:
    """Why a running (or suspended) job has to retire now, not by its own policy: a shutdown, a
    graceful drain, a claim the slot ranks higher -- (retire_why, reason) or None."""
    if m.shutdown:
        return "shutdown", f"{m.shutdown} shutdown of the startd"
    if drained_out:
        return "drain", "the machine is draining (-graceful)"
    claim = slot.claim
    if slot.pending is not None and claim is not None:
        return "rank", f"a claim the slot ranks higher ({slot.pending.rank:g} > {claim.rank:g}) waits for it"
    return None


def _claimed_running(slot: Slot, ad: ClassAd, policy: Policy, m: Machine) -> Transition | None:
    claim = slot.claim
    assert claim is not None
    job = claim.job_ad
    activity = slot.activity
    drain = m.drain
    drained_out = drain is not None and (not claim.accepted_while_draining or drain.completed)
    if m.shutdown == "fast":
        return Transition(PREEMPTING, KILLING, "fast shutdown of the startd")
    if drained_out and drain is not None and drain.how == "fast":
        return Transition(PREEMPTING, KILLING, "the machine is draining (-fast)")
    if drained_out and drain is not None and (drain.how == "quick" or claim.accepted_while_draining):
        return _evict(slot, ad, policy, "the machine is draining (-quick)" if drain.how == "quick"
                      else "the drain is complete")
    if activity == SUSPENDED:
        if slot.retire_why and m.now >= retirement_end(slot, ad, policy, m):
            return _evict(slot, ad, policy, "the retirement time ran out during suspension")
        if not slot.retire_why:  # a suspended job retires too (it is continued meanwhile), as HTCondor's
            # does: a graceful shutdown or drain otherwise waited forever for a job that cannot end
            retire = _retire_why(slot, m, drained_out)
            if retire is not None:
                return Transition(CLAIMED, RETIRING, retire[1], retire_why=retire[0])
        cont, why = policy.truth(ad, "CONTINUE", job)
        if cont:
            return Transition(CLAIMED, RETIRING if slot.retire_why else BUSY, why)
        if not slot.retire_why:
            preempt, why = policy.truth(ad, "PREEMPT", job)
            if preempt:
                return Transition(CLAIMED, RETIRING, why, retire_why="preempt")
        return None
    want_suspend, why_ws = policy.truth(ad, "WANT_SUSPEND", job)
    if want_suspend:
        suspend, why = policy.truth(ad, "SUSPEND", job)
        if suspend:
            return Transition(CLAIMED, SUSPENDED, f"{why_ws} and {why}")
    if activity == BUSY:
        retire = _retire_why(slot, m, drained_out)
        if retire is not None:
            return Transition(CLAIMED, RETIRING, retire[1], retire_why=retire[0])
        if not want_suspend:
            preempt, why = policy.truth(ad, "PREEMPT", job)
            if preempt:
                return Transition(CLAIMED, RETIRING, why, retire_why="preempt")
        return None
    if activity == RETIRING:
        end = retirement_end(slot, ad, policy, m)
        if m.now >= end:
            if slot.retire_why == "drain":
                return _evict(slot, ad, policy, "the drain's retirement time is over")
            mjrt = ad.expr_text("MaxJobRetirementTime")
            return _evict(slot, ad, policy, f"MaxJobRetirementTime = {mjrt} is over")
        if not m.shutdown:
            if slot.retire_why == "rank" and slot.pending is None:
                return Transition(CLAIMED, BUSY, "the preempting claim went away")
            if slot.retire_why == "drain" and drain is None:
                return Transition(CLAIMED, BUSY, "draining was cancelled")
    return None


def _preempting(slot: Slot, ad: ClassAd, policy: Policy, m: Machine) -> Transition | None:
    if slot.starter is None:
        return after_claim(slot, m)
    if slot.activity != VACATING:
        return None
    job = slot.claim.job_ad if slot.claim else None
    if m.shutdown == "fast":
        return Transition(PREEMPTING, KILLING, "fast shutdown of the startd")
    if m.drain is not None and m.drain.how == "fast":
        return Transition(PREEMPTING, KILLING, "the machine is draining (-fast)")
    kill, why = policy.truth(ad, "KILL", job)
    if kill:
        return Transition(PREEMPTING, KILLING, why)
    limit, why = vacate_time(ad, policy, job)
    if m.now - slot.entered_activity >= limit:
        return Transition(PREEMPTING, KILLING, f"{why} ({limit:g} s) ran out")
    return None
