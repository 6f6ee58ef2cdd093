"""The slot ads: the machine's facts, the slot, its claim, the drain, STARTD_ATTRS, STARTD_CRON and
provider attributes, in HTCondor's attribute names.

``WithinResourceLimits`` (part of every slot's Requirements) keeps a job that asks for more than a
slot has (or, for a partitionable slot, has left) from matching it, custom resources included
(``Request<Name> <= <Name>``).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from htcd.classad import ClassAd
from htcd.errors import UserError
from htcd.startd import states
from htcd.startd.slot import (
    CLAIMED,
    DRAINED,
    DYNAMIC,
    PARTITIONABLE,
    PREEMPTING,
    Slot,
)

if TYPE_CHECKING:
    from htcd.startd.daemon import Startd

WITHIN_RESOURCE_LIMITS = (
    "(MY.Cpus > 0 && (TARGET.RequestCpus ?: 1) <= MY.Cpus"
    " && (TARGET.RequestMemory ?: 0) <= MY.Memory && (TARGET.RequestDisk ?: 0) <= MY.Disk)")
# Copied into every slot ad from the config when defined: the policy ad attributes HTCondor publishes.
_PUBLISHED_POLICY = ("MaxJobRetirementTime", "MachineMaxVacateTime")


def slot_knob(startd: Startd, slot: Slot, knob: str) -> str | None:
    """A knob as one slot sees it: ``SLOT<n>_<knob>``, then ``SLOT_TYPE_<t>_<knob>``, then ``<knob>``."""
    cfg = startd.config
    value = cfg.get(f"SLOT{slot.slot_id}_{knob}")
    if value is None and slot.type_id:
        value = cfg.get(f"SLOT_TYPE_{slot.type_id}_{knob}")
    return value if value is not None else cfg.get(knob)


def startd_attrs(startd: Startd, slot: Slot) -> list[str]:
    """Names of STARTD_ATTRS / STARTD_EXPRS (and the slot's own SLOT<n>_STARTD_ATTRS)."""
    cfg = startd.config
    names = [*cfg.get_list("STARTD_ATTRS"), *cfg.get_list("STARTD_EXPRS"),
             *cfg.get_list(f"SLOT{slot.slot_id}_STARTD_ATTRS")]
    return list(dict.fromkeys(names))


def slot_ad(startd: Startd, slot: Slot, policy: bool = False) -> ClassAd:
    """The ad of ``slot``; with ``policy`` also the policy expressions the state machine evaluates."""
    now = time.time()
    if policy:  # only for evaluation: the daemon's own statistics are left out
        ad = ClassAd({"MyType": "Machine", "Machine": startd.hostname, "MyAddress": str(startd.server.address),
                      "DaemonStartTime": startd.start_time, "MyCurrentTime": int(now)})
    else:
        ad = startd.base_ad("Machine")
    ad.update(startd.machine_ad())
    for name in startd_attrs(startd, slot):
        text = slot_knob(startd, slot, name)
        if text is None:
            continue
        try:
            ad.set_expr(name, text)
        except UserError as exc:
            startd.warn_once(f"STARTD_ATTRS {name}", f"STARTD_ATTRS: {name} = {text} does not parse "
                                                     f"({exc.message}); it is not advertised")
    ad["Name"] = slot.name
    ad["SlotID"] = slot.slot_id
    ad["SlotType"] = slot.kind
    ad["SlotTypeID"] = slot.type_id if slot.kind != DYNAMIC else -slot.type_id
    if slot.kind == PARTITIONABLE:
        ad["PartitionableSlot"] = True
        cpus, memory, disk = slot.left()
        ad["NumDynamicSlots"] = len(slot.children)
        ad["ChildCpus"] = [c.cpus for c in slot.children]
        ad["ChildMemory"] = [c.memory for c in slot.children]
        ad["ChildDisk"] = [c.disk for c in slot.children]
        ad["ChildState"] = [c.state for c in slot.children]
        ad["ChildActivity"] = [c.activity for c in slot.children]
        ad["ChildName"] = [c.name for c in slot.children]
    else:
        cpus, memory, disk = slot.cpus, slot.memory, slot.disk
    if slot.kind == DYNAMIC:
        ad["DynamicSlot"] = True
        if slot.parent is not None:
            ad["ParentSlotName"] = slot.parent.name
    ad["Cpus"], ad["Memory"], ad["Disk"] = cpus, memory, disk
    ad["TotalSlotCpus"], ad["TotalSlotMemory"], ad["TotalSlotDisk"] = slot.cpus, slot.memory, slot.disk
    ad["SlotWeight"] = cpus
    _custom(startd, slot, ad)
    ad["TotalSlots"] = startd.slot_count()
    ad["State"], ad["Activity"] = slot.state, slot.activity
    ad["EnteredCurrentState"], ad["EnteredCurrentActivity"] = int(slot.entered_state), int(slot.entered_activity)
    ad["LoadAvg"] = round(startd.slot_load(slot), 3)
    ad["CondorLoadAvg"] = round(slot.condor_load, 3)
    ad["TotalLoadAvg"] = startd.total_load
    ad["TotalCondorLoadAvg"] = round(startd.total_condor_load(), 3)
    ad["KeyboardIdle"], ad["ConsoleIdle"] = startd.idle
    local = time.localtime(now)
    ad["ClockMin"] = local.tm_hour * 60 + local.tm_min
    ad["ClockDay"] = (local.tm_wday + 1) % 7
    ad["StartdIpAddr"] = str(startd.server.address)
    ad["UidDomain"] = startd.uid_domain
    ad["FileSystemDomain"] = startd.config.get("FILESYSTEM_DOMAIN") or startd.hostname
    ad["HasFileTransfer"] = True
    ad["HasSelfCheckpointTransfers"] = True  # checkpoint_exit_code: the starter sends checkpoints to the spool
    ad["HasJobDeferral"] = True  # the starter holds a job's start until its DeferralTime
    ad["JobStarts"] = slot.job_starts
    ad["JobPreemptions"] = slot.preemptions
    ad["JobRankPreemptions"] = slot.rank_preemptions
    for pair in ("Owner/Idle", "Unclaimed/Idle", "Claimed/Idle", "Claimed/Busy", "Claimed/Suspended",
                 "Claimed/Retiring", "Preempting/Vacating", "Preempting/Killing"):
        spent = int(slot.time_in(pair, now))
        if spent > 0:
            ad["TotalTime" + pair.replace("/", "")] = spent
    _policy(startd, slot, ad, policy)
    _claim(slot, ad, now)
    _drain(startd, slot, ad)
    return ad


def within_resource_limits(custom: list[str]) -> str:
    """WITHIN_RESOURCE_LIMITS, and for each custom resource the job's request (0 if none) against
    what the slot has, as HTCondor's partitionable slots test it."""
    if not custom:
        return WITHIN_RESOURCE_LIMITS
    extra = "".join(f" && (TARGET.Request{name} ?: 0) <= MY.{name}" for name in custom)
    return WITHIN_RESOURCE_LIMITS[:-1] + extra + ")"


def _custom(startd: Startd, slot: Slot, ad: ClassAd) -> None:
    """<Name> (what the slot has, a partitionable slot what it has left), TotalSlot<Name> and
    Assigned<Name> (its ids, a partitionable slot its free ones) of each custom resource."""
    left = slot.custom_left() if slot.kind == PARTITIONABLE else slot.custom
    for r, total in slot.custom.items():
        name = startd.resources[r].name
        ad[name] = left[r]
        ad[f"TotalSlot{name}"] = total
        if r in slot.ids:
            ids = slot.free_ids(r) if slot.kind == PARTITIONABLE else slot.ids[r]
            if ids:
                ad[f"Assigned{name}"] = ",".join(ids)
        if slot.kind == PARTITIONABLE:
            ad[f"Child{name}"] = [c.custom.get(r, 0) for c in slot.children]


def _policy(startd: Startd, slot: Slot, ad: ClassAd, full: bool) -> None:
    job = slot.claim.job_ad if slot.claim is not None else None
    startd.slot_policy.add_to(ad, job)
    drain = startd.draining.current
    if drain is not None and drain.start is not None and not drain.completed:
        ad.set_expr("START", drain.start)  # -start: what the machine takes while draining
    elif drain is not None:
        ad["START"] = False
    ad.set_expr("WithinResourceLimits", within_resource_limits([startd.resources[r].name for r in slot.custom]))
    if slot.state in (PREEMPTING, DRAINED) and (drain is None or drain.start is None or drain.completed):
        ad["Requirements"] = False  # HTCondor: not available for further matches
    else:
        ad.set_expr("Requirements", "START && WithinResourceLimits")
    ad["IsOwner"] = bool(startd.slot_policy.truth(ad, "IS_OWNER", None)[0])
    if full:
        return
    for knob in list(states.POLICY_KNOBS.values()):
        if knob[0] not in ("START", "RANK", *_PUBLISHED_POLICY):
            del ad[knob[0]]
    for attr in ("Start", "Rank"):  # published with HTCondor's spelling
        text = ad.expr_text(attr)
        del ad[attr]
        ad.set_expr(attr, text)


def _claim(slot: Slot, ad: ClassAd, now: float) -> None:
    claim = slot.claim
    if claim is None or slot.state not in (CLAIMED, PREEMPTING):
        ad["CurrentRank"] = 0.0
        return
    ad["CurrentRank"] = claim.rank
    ad["RemoteOwner"] = claim.owner
    ad["RemoteUser"] = claim.user
    ad["ClientMachine"] = claim.client
    ad["PublicClaimId"] = claim.public_id
    ad["TotalClaimRunTime"] = int(now - claim.start)
    _accounting(claim.job_ad, ad)
    if claim.accepted_while_draining:
        ad["AcceptedWhileDraining"] = True
    if slot.starter is not None:
        job = claim.job_ad
        ad["JobId"] = f"{job.get_value('ClusterId')}.{job.get_value('ProcId')}"
        if job.get_value("GlobalJobId"):
            ad["GlobalJobId"] = job.get_value("GlobalJobId")
        ad["JobStart"] = int(slot.job_start)
        ad["TotalJobRunTime"] = int(now - slot.job_start)
    if slot.pending is not None:
        ad["PreemptingOwner"] = slot.pending.owner
        ad["PreemptingUser"] = slot.pending.user
        ad["PreemptingRank"] = slot.pending.rank


def _accounting(job: ClassAd, ad: ClassAd) -> None:
    """What the negotiator's accountant and preemption read of a claim: whom it is charged to
    (AccountingGroup: ``group.user@domain``, or the job's User), the group it negotiated under
    (RemoteNegotiatingGroup, ``<none>`` outside groups) and the job's ConcurrencyLimits."""
    user = job.get_value("User")
    domain = user.rpartition("@")[2] if isinstance(user, str) and "@" in user else ""
    group = job.get_value("AccountingGroup")
    if not isinstance(group, str) or not group:
        acct = job.get_value("AcctGroup")
        if isinstance(acct, str) and acct:
            group = f"{acct}.{job.get_value('AcctGroupUser') or job.get_value('Owner') or ''}"
    if isinstance(group, str) and group:
        ad["AccountingGroup"] = group if "@" in group or not domain else f"{group}@{domain}"
        ad["RemoteNegotiatingGroup"] = group.rsplit(".", 1)[0] if "." in group else group
    elif isinstance(user, str) and user:
        ad["AccountingGroup"] = user
        ad["RemoteNegotiatingGroup"] = "<none>"
    limits = job.get_value("ConcurrencyLimits")
    if isinstance(limits, str) and limits:
        ad["ConcurrencyLimits"] = limits


def _drain(startd: Startd, slot: Slot, ad: ClassAd) -> None:
    drain = startd.draining.current
    if drain is not None:
        ad["Draining"] = True
        ad["DrainingRequestId"] = drain.request_id
        if drain.reason:
            ad["DrainReason"] = drain.reason
    if startd.draining.last_start:
        ad["LastDrainStartTime"] = startd.draining.last_start
    if startd.draining.last_stop:
        ad["LastDrainStopTime"] = startd.draining.last_stop
    graceful, quick, graceful_badput, quick_badput = startd.draining.estimates
    ad["ExpectedMachineGracefulDrainingCompletion"] = graceful
    ad["ExpectedMachineQuickDrainingCompletion"] = quick
    ad["ExpectedMachineGracefulDrainingBadput"] = graceful_badput
    ad["ExpectedMachineQuickDrainingBadput"] = quick_badput
    if slot.claim is not None and slot.starter is not None and slot.retire_why and not math.isinf(slot.retire_end):
        ad["RetirementTimeRemaining"] = max(0, int(slot.retire_end - time.time()))
