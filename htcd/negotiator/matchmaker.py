"""One negotiation cycle's matching, as a pure function of ads (no I/O): testable and
benchmarkable without daemons.

A partitionable slot can take several jobs in one cycle: each match subtracts what the startd
will carve for the job (its requests rounded by ``MODIFY_REQUEST_EXPR_REQUEST*``, evaluated with
the job as MY and the slot as TARGET, as the startd does) from the slot's Cpus, Memory and Disk,
and the slot stays on offer while cpus and memory are left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from htcd.classad import ClassAd, parse_expr, rank, symmetric_match

# HTCondor's defaults of MODIFY_REQUEST_EXPR_REQUESTCPUS, ..._REQUESTMEMORY, ..._REQUESTDISK.
MODIFY_REQUEST = {"Cpus": "quantize(RequestCpus, {1})", "Memory": "quantize(RequestMemory, {128})",
                  "Disk": "quantize(RequestDisk, {Target.DiskQuantum ?: 1024})"}


@dataclass
class Slot:
    ad: ClassAd
    claim_id: str
    taken: bool = False

    @property
    def partitionable(self) -> bool:
        return self.ad.get_value("PartitionableSlot") is True


def dynamic_request(job: ClassAd, slot_ad: ClassAd, modify: dict[str, str]) -> dict[str, int]:
    """What a dynamic slot for ``job`` takes from ``slot_ad``: Cpus, Memory (MB), Disk (KB)."""
    filled = job.copy()
    for res in MODIFY_REQUEST:
        if not isinstance(job.get_value(f"Request{res}"), (int, float)):
            filled[f"Request{res}"] = 1
    out = {}
    for res, default in MODIFY_REQUEST.items():
        value = filled.eval_expr(parse_expr(modify.get(res) or default), target=slot_ad)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            value = filled.get_value(f"Request{res}", 1)
        out[res] = int(math.ceil(float(value)))
    return out


@dataclass
class Pool:
    slots: list[Slot] = field(default_factory=list)
    modify: dict[str, str] = field(default_factory=lambda: dict(MODIFY_REQUEST))

    def sample(self, most: int = 16) -> list[dict[str, str]]:
        """Slot ads with distinct Requirements/Rank/START (the schedd derives from them which job
        attributes matter for matching, to group its jobs into autoclusters)."""
        seen: dict[tuple[str, ...], dict[str, str]] = {}
        for slot in self.slots:
            key = tuple(slot.ad.expr_text(a) if a in slot.ad else "" for a in ("Requirements", "Rank", "START"))
            if key not in seen and len(seen) < most:
                seen[key] = slot.ad.to_wire()
        return list(seen.values())

    def best_for(self, job: ClassAd) -> Slot | None:
        """The free slot that matches ``job`` with the highest job Rank (first one on ties)."""
        best: Slot | None = None
        best_rank = 0.0
        for slot in self.slots:
            if slot.taken or not symmetric_match(job, slot.ad):
                continue
            if slot.partitionable and not self._fits(job, slot):
                continue
            r = rank(job, slot.ad)
            if best is None or r > best_rank:
                best, best_rank = slot, r
        return best

    def _fits(self, job: ClassAd, slot: Slot) -> bool:
        want = dynamic_request(job, slot.ad, self.modify)
        return all(n <= _number(slot.ad, res) for res, n in want.items())

    def take(self, slot: Slot, job: ClassAd) -> None:
        """Hand ``slot`` to ``job``: a static slot is gone; a partitionable one gives up what the
        job's dynamic slot will take and stays on offer while cpus and memory are left."""
        if not slot.partitionable:
            slot.taken = True
            return
        for res, n in dynamic_request(job, slot.ad, self.modify).items():
            slot.ad[res] = _number(slot.ad, res) - n
        if _number(slot.ad, "Cpus") <= 0 or _number(slot.ad, "Memory") <= 0:
            slot.taken = True


def _number(ad: ClassAd, attr: str) -> int:
    value = ad.get_value(attr, 0)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
