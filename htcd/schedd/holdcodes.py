"""HTCondor's hold reason codes and their ``NumHoldsByReason`` labels (the manual's "Hold Reason
Codes" table, codes-other-values/hold-table.rst), and the hold counts a job carries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcd.classad import ClassAd, unparse

if TYPE_CHECKING:
    from htcd.schedd.jobs import Job

LABELS: dict[int, str] = {
    1: "UserRequest", 3: "JobPolicy", 4: "CorruptedCredential", 5: "JobPolicyUndefined",
    6: "FailedToCreateProcess", 7: "UnableToOpenOutput", 8: "UnableToOpenInput",
    9: "UnableToOpenOutputStream", 10: "UnableToOpenInputStream", 11: "InvalidTransferAck",
    12: "TransferOutputError", 13: "TransferInputError", 14: "IwdError", 15: "SubmittedOnHold",
    16: "SpoolingInput", 17: "JobShadowMismatch", 18: "InvalidTransferGoAhead",
    19: "HookPrepareJobFailure", 20: "MissedDeferredExecutionTime", 21: "StartdHeldJob",
    22: "UnableToInitUserLog", 23: "FailedToAccessUserAccount", 24: "NoCompatibleShadow",
    25: "InvalidCronSettings", 26: "SystemPolicy", 27: "SystemPolicyUndefined",
    32: "MaxTransferInputSizeExceeded", 33: "MaxTransferOutputSizeExceeded", 34: "JobOutOfResources",
    35: "InvalidDockerImage", 36: "FailedToCheckpoint", 37: "EC2UserError", 38: "EC2InternalError",
    39: "EC2AdminError", 40: "EC2ConnectionProblem", 41: "EC2ServerError",
    42: "EC2InstancePotentiallyLost", 43: "PreScriptFailed", 44: "PostScriptFailed",
    45: "SingularityTestFailed", 46: "JobDurationExceeded", 47: "JobExecuteExceeded",
    48: "HookShadowPrepareJobFailure",
}


def label(code: int) -> str:
    """The ``NumHoldsByReason`` label of a hold code (``Code<N>`` for one the table lacks)."""
    return LABELS.get(code, f"Code{code}")


def counted(proc: dict[str, str], code: int) -> dict[str, str]:
    """The ``NumHolds`` and ``NumHoldsByReason`` texts after one more hold with ``code``."""
    text = proc.get("NumHolds", "")
    n = int(text) if text.isdigit() else 0
    by = ClassAd()
    old = proc.get("NumHoldsByReason")
    if old:
        prev = ClassAd.from_wire({"X": old}).get_value("X")
        if isinstance(prev, ClassAd):
            for name in list(prev):
                v = prev.get_value(name)
                if isinstance(v, int):
                    by[name] = v
    name = label(code)
    by[name] = int(by.get_value(name) or 0) + 1
    return {"NumHolds": str(n + 1), "NumHoldsByReason": unparse(by)}


HOLD_REASON = ("HoldReason", "HoldReasonCode", "HoldReasonSubCode")


def keep_as_last(job: Job, attrs: tuple[str, ...]) -> None:
    """Move each attribute to ``Last<attr>`` (HTCondor's schedd does so at a release -- the hold
    reason -- at a hold -- the release reason -- and at a removal -- the hold reason).  A value
    the job has from its cluster (``hold = true`` at submit) is masked as ``undefined`` in the
    proc, since the cluster's other procs keep it."""
    for attr in attrs:
        text = job.text(attr)
        if text is None or text == "undefined":
            continue
        job.proc["Last" + attr] = text
        for k in [k for k in job.proc if k.lower() == attr.lower()]:
            del job.proc[k]
        if job.cluster.text(attr) is not None:
            job.proc[attr] = "undefined"
