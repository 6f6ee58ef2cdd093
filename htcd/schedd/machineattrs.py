"""job_machine_attrs: the machine attributes a job asked to keep of each slot it ran on.

As HTCondor's schedd, when a run starts ``MachineAttr<Name>0`` takes the slot's value of each
attribute of the job's ``JobMachineAttrs`` (undefined when the slot has none); when the run
ends with the job going back to idle or on hold, the list moves one place down
(``<Name>1`` = ``<Name>0``, ...) up to ``JobMachineAttrsHistoryLength`` entries (1 when unset,
no record at all when 0), so that the next run's value lands in ``<Name>0``.  ``<Name>0`` stays
after a rotation, as HTCondor keeps it.
"""

from __future__ import annotations

from htcd.classad import ClassAd, unparse
from htcd.schedd.jobs import Job

PREFIX = "MachineAttr"


def _names(job: Job) -> list[str]:
    value = job.get("JobMachineAttrs") if job.text("JobMachineAttrs") is not None else None
    if not isinstance(value, str):
        return []
    names: list[str] = []
    for name in value.replace(",", " ").split():
        if name.lower() not in (n.lower() for n in names):
            names.append(name)
    return names


def _length(job: Job) -> int:
    if job.text("JobMachineAttrsHistoryLength") is None:
        return 1
    value = job.get("JobMachineAttrsHistoryLength")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 1


def record(job: Job, slot_ad: ClassAd) -> bool:
    """A run starts on ``slot_ad``: ``MachineAttr<Name>0`` for each name; whether any was set."""
    names = _names(job)
    if not names or _length(job) <= 0:
        return False
    values = {}
    for name in names:
        expr = slot_ad.lookup(name)
        values[f"{PREFIX}{name}0"] = unparse(slot_ad.eval(name)) if expr is not None else "undefined"
    job.proc.update(values)
    return True


def rotate(job: Job) -> bool:
    """A run ended and the job stays queued: each list moves one place down; whether any did."""
    names = _names(job)
    length = _length(job)
    if not names or length < 2:
        return False
    moved = False
    for name in names:
        if job.text(f"{PREFIX}{name}0") is None:
            continue
        for i in range(length - 1, 0, -1):
            older = job.text(f"{PREFIX}{name}{i - 1}")
            if older is not None:
                job.proc[f"{PREFIX}{name}{i}"] = older
                moved = True
    return moved
