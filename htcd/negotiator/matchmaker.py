"""One negotiation cycle's matching, as a pure function of ads (no I/O): testable and
benchmarkable without daemons.

Speed: evaluating every request against every slot is too slow in Python (a million pairs per
cycle in a 1,000-slot pool with 1,000 autoclusters), so slots that are alike for a request's
purposes are grouped and evaluated once per group.  A slot's group key, for a set of attributes a
request reads in the slot, is the expression text of each slot attribute reached from those and
from the slot's own Requirements (and, for claimed slots, RANK and the claim's customer and
CurrentRank), following the slot's own references; two slots with equal keys give the same match
and ranks for every job with those references.  Groupings are kept for the cycle and shared by the
requests that read the same attributes.

A partitionable slot can take several jobs in one cycle: each match subtracts what the startd will
carve for the job (its requests rounded by ``MODIFY_REQUEST_EXPR_REQUEST*``, evaluated with the job
as MY and the slot as TARGET, as the startd does) from the slot's Cpus, Memory and Disk; the slot
is then re-keyed (its group may change) and stays on offer while cpus and memory are left.

The choice among matching slots is HTCondor's: ``NEGOTIATOR_PRE_JOB_RANK``, the job's Rank,
``NEGOTIATOR_POST_JOB_RANK``, then the reason (no preemption, then RANK, then priority
preemption), then ``PREEMPTION_RANK``.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from htcd.classad import ClassAd, Expr, parse_expr, symmetric_match
from htcd.classad.references import text_references
from htcd.classad.values import ERROR, UNDEFINED

# HTCondor's defaults of MODIFY_REQUEST_EXPR_REQUESTCPUS, ..._REQUESTMEMORY, ..._REQUESTDISK.
MODIFY_REQUEST = {"Cpus": "quantize(RequestCpus, {1})", "Memory": "quantize(RequestMemory, {128})",
                  "Disk": "quantize(RequestDisk, {Target.DiskQuantum ?: 1024})"}
# HTCondor's defaults of NEGOTIATOR_PRE_JOB_RANK and NEGOTIATOR_POST_JOB_RANK.
PRE_JOB_RANK = ("(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory")
POST_JOB_RANK = ("(RemoteOwner =?= UNDEFINED) * (ifthenElse(isUndefined(KFlops), 1000, Kflops) - SlotID"
                 " - 1.0e10*(Offline=?=True))")
PREEMPTION_RANK = "(RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, TotalJobRuntime)"

NO_PREEMPTION, RANK, PRIORITY = None, "rank", "priority"
_REASON_ORDER = {NO_PREEMPTION: 2, RANK: 1, PRIORITY: 0}
_WORST = -1e308


@dataclass(eq=False)
class Slot:
    ad: ClassAd
    claim_id: str
    claimed: bool = False  # Claimed/Busy: a candidate only for preemption
    customer: str = ""  # who the claim is charged to (its AccountingGroup)
    current_rank: float = 0.0
    taken: bool = False
    version: int = 0
    singleton: bool = False  # evaluated on its own (priority preemption reads per-slot figures)
    partitionable: bool = field(init=False)

    def __post_init__(self) -> None:
        self.partitionable = self.ad.get_value("PartitionableSlot") is True

    @property
    def name(self) -> str:
        return str(self.ad.get_value("Name", ""))


def dynamic_request(job: ClassAd, slot_ad: ClassAd, modify: dict[str, str]) -> dict[str, int]:
    """What a dynamic slot for ``job`` takes from ``slot_ad``: Cpus, Memory (MB), Disk (KB) and
    each custom resource the slot's MachineResources names."""
    filled = job.copy()
    for res in MODIFY_REQUEST:
        if not isinstance(job.get_value(f"Request{res}"), (int, float)):
            filled[f"Request{res}"] = 1
    out = {}
    for res, default in MODIFY_REQUEST.items():
        value = filled.eval_expr(_parsed(modify.get(res) or default), target=slot_ad)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            value = filled.get_value(f"Request{res}", 1)
        out[res] = math.ceil(float(value))
    machine_resources = slot_ad.get_value("MachineResources")
    if isinstance(machine_resources, str):  # custom resources (GPUs...): the job's request, 0 if none
        for res in machine_resources.split():
            if res.lower() not in ("cpus", "memory", "disk", "swap"):
                value = job.eval_expr(_parsed(f"Request{res}"), target=slot_ad)
                out[res] = math.ceil(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
    return out


_PARSED: dict[str, Expr] = {}


def _parsed(text: str) -> Expr:
    e = _PARSED.get(text)
    if e is None:
        e = _PARSED[text] = parse_expr(text)
    return e


def _number(value: object, default: float = _WORST) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and value is not UNDEFINED and value is not ERROR:
        return float(value)
    return default


def _int_attr(ad: ClassAd, attr: str) -> int:
    value = ad.get_value(attr, 0)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


@dataclass
class Context:
    """Who is asking, for the preemption decisions: the submitter, its effective priority and
    resources in use, and the effective priority and resources of any customer."""

    submitter: str = ""
    eup: float = 0.5
    in_use: float = 0.0
    eup_of: Callable[[str], float] = lambda name: 0.5
    in_use_of: Callable[[str], float] = lambda name: 0.0
    group: str = "<none>"


class _Group:
    __slots__ = ("key", "members")

    def __init__(self, key: tuple[object, ...]) -> None:
        self.key = key
        self.members: list[tuple[Slot, int]] = []

    def live(self) -> Slot | None:
        """The first member still free and unchanged since it joined (stale entries dropped)."""
        members = self.members
        while members:
            slot, version = members[-1]
            if not slot.taken and slot.version == version:
                return slot
            members.pop()
        return None


class _Grouping:
    def __init__(self) -> None:
        self.groups: dict[tuple[object, ...], _Group] = {}
        self.created: list[_Group] = []  # in order, so a request sees the groups made after it started


class Pool:
    def __init__(self, modify: dict[str, str] | None = None, pre_job_rank: str | None = PRE_JOB_RANK,
                 post_job_rank: str | None = POST_JOB_RANK, preemption_requirements: str | None = None,
                 preemption_rank: str | None = PREEMPTION_RANK) -> None:
        self.slots: list[Slot] = []
        self.modify = dict(modify or MODIFY_REQUEST)
        self.pre = _parsed(pre_job_rank) if pre_job_rank else None
        self.post = _parsed(post_job_rank) if post_job_rank else None
        self.preempt_req = _parsed(preemption_requirements) if preemption_requirements else None
        self.preempt_rank = _parsed(preemption_rank) if preemption_rank else None
        self._slot_side = frozenset({"requirements"}
                                    | (text_references(pre_job_rank)[0] if pre_job_rank else frozenset())
                                    | (text_references(post_job_rank)[0] if post_job_rank else frozenset()))
        self._groupings: dict[frozenset[str], _Grouping] = {}
        self._job_refs: dict[tuple[str, ...], frozenset[str]] = {}
        self.evaluations = 0  # symmetric matches made (a figure for the bench)
        self.left = 0  # slots not yet taken this cycle

    def add(self, slot: Slot) -> None:
        self.slots.append(slot)
        self.left += not slot.taken

    def free(self) -> int:
        return sum(1 for s in self.slots if not s.taken and not s.claimed)

    def free_weight(self) -> float:
        """The slot weight still on offer (free slots, and claimed ones preemption may take): a
        partitionable slot's cpus left, a static slot's SlotWeight."""
        total = 0.0
        for s in self.slots:
            if s.taken:
                continue
            if s.partitionable:
                total += _int_attr(s.ad, "Cpus")
            else:
                w = _number(s.ad.get_value("SlotWeight"), -1.0)
                total += w if w >= 0 else float(_int_attr(s.ad, "Cpus") or 1)
        return total

    def sample(self, most: int = 16) -> list[dict[str, str]]:
        """Slot ads with distinct Requirements/Rank/START (the schedd derives from them which job
        attributes matter for matching, to group its jobs into autoclusters)."""
        seen: dict[tuple[str, ...], dict[str, str]] = {}
        for slot in self.slots:
            key = tuple(slot.ad.expr_text(a) if a in slot.ad else "" for a in ("Requirements", "Rank", "START"))
            if key not in seen and len(seen) < most:
                seen[key] = slot.ad.to_wire()
        return list(seen.values())

    # -- grouping ------------------------------------------------------------------------------
    def job_refs(self, job: ClassAd) -> frozenset[str]:
        """Slot attributes the job's Requirements and Rank read (TARGET., or a bare name the job
        does not define), following the job's own attributes."""
        texts = tuple(job.expr_text(a) if a in job else "" for a in ("Requirements", "Rank"))
        got = self._job_refs.get(texts)
        if got is not None:
            return got
        out: set[str] = set()
        seen: set[str] = set()
        todo = ["requirements", "rank"]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            try:
                text = job.expr_text(name)
            except KeyError:
                if name not in ("requirements", "rank"):
                    out.add(name)
                continue
            mine, target = text_references(text)
            out |= target
            todo.extend(mine)
        got = self._job_refs[texts] = frozenset(out)
        return got

    def _key(self, slot: Slot, refs: frozenset[str]) -> tuple[object, ...]:
        if slot.singleton:
            return ("#", id(slot))
        ad = slot.ad
        parts: list[object] = []
        if slot.claimed:
            parts += ["claimed", slot.customer, slot.current_rank]
        seen: set[str] = set()
        todo = sorted(refs | self._slot_side | ({"rank"} if slot.claimed else set()), reverse=True)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            try:
                text = ad.expr_text(name)
            except KeyError:
                parts.append((name, None))
                continue
            parts.append((name, text))
            mine = text_references(text)[0]
            if mine:
                todo.extend(sorted(mine - seen, reverse=True))
        return tuple(parts)

    def _grouping(self, refs: frozenset[str]) -> _Grouping:
        g = self._groupings.get(refs)
        if g is None:
            g = self._groupings[refs] = _Grouping()
            for slot in self.slots:
                if not slot.taken:
                    self._place(g, slot, refs)
        return g

    def _place(self, grouping: _Grouping, slot: Slot, refs: frozenset[str]) -> None:
        key = self._key(slot, refs)
        group = grouping.groups.get(key)
        if group is None:
            group = grouping.groups[key] = _Group(key)
            grouping.created.append(group)
        elif group.live() is None:  # emptied (and maybe dropped by a request's heap): offer it again
            grouping.created.append(group)
        group.members.append((slot, slot.version))

    # -- matching ------------------------------------------------------------------------------
    def matcher(self, job: ClassAd, ctx: Context | None = None) -> RequestMatcher:
        return RequestMatcher(self, job, ctx or Context())

    def best_for(self, job: ClassAd, ctx: Context | None = None) -> Slot | None:
        """The best free slot for ``job`` (without preemption reasons: for simple callers)."""
        got = self.matcher(job, ctx).next()
        return got[0] if got else None

    def evaluate(self, job: ClassAd, slot: Slot, ctx: Context) -> tuple[tuple[float, ...], str | None] | None:
        """(score, preemption reason) of ``slot`` for ``job``, or None when it is no candidate."""
        ad = slot.ad
        self.evaluations += 1
        if not symmetric_match(job, ad):
            return None
        if slot.partitionable and not self._fits(job, slot):
            return None
        reason = NO_PREEMPTION
        prank = 0.0
        if slot.claimed:
            if slot.customer == ctx.submitter:
                return None
            new_rank = _number(ad.eval("Rank", job), 0.0)
            if new_rank > slot.current_rank:
                reason = RANK
            elif self.preempt_req is not None and new_rank >= slot.current_rank \
                    and ctx.eup < ctx.eup_of(slot.customer):
                view = self.preemption_view(slot, ctx)
                if view.eval_expr(self.preempt_req, target=job) is not True:
                    return None
                reason = PRIORITY
                if self.preempt_rank is not None:
                    prank = _number(view.eval_expr(self.preempt_rank, target=job))
            else:
                return None
        job_rank = _number(job.eval("Rank", ad), 0.0)
        pre = _number(ad.eval_expr(self.pre, target=job)) if self.pre is not None else 0.0
        post = _number(ad.eval_expr(self.post, target=job)) if self.post is not None else 0.0
        return (pre, job_rank, post, _REASON_ORDER[reason], prank), reason

    def preemption_view(self, slot: Slot, ctx: Context) -> ClassAd:
        """The slot ad with the attributes HTCondor inserts for PREEMPTION_REQUIREMENTS/_RANK."""
        view = slot.ad.copy()
        view["RemoteUserPrio"] = ctx.eup_of(slot.customer)
        view["RemoteUserResourcesInUse"] = ctx.in_use_of(slot.customer)
        view["SubmitterUserPrio"] = ctx.eup
        view["SubmitterUserResourcesInUse"] = ctx.in_use
        view["SubmitterGroup"] = ctx.group
        view["SubmitterNegotiatingGroup"] = ctx.group
        remote_group = slot.ad.get_value("RemoteNegotiatingGroup")
        if isinstance(remote_group, str):
            view["RemoteGroup"] = remote_group
        return view

    def _fits(self, job: ClassAd, slot: Slot) -> bool:
        want = dynamic_request(job, slot.ad, self.modify)
        return all(n <= _int_attr(slot.ad, res) for res, n in want.items())

    def weight(self, slot: Slot, job: ClassAd) -> float:
        """The slot weight a match takes: the dynamic slot's cpus for a partitionable slot, else
        the slot's SlotWeight (Cpus when it has none)."""
        if slot.partitionable:
            return float(dynamic_request(job, slot.ad, self.modify)["Cpus"])
        w = _number(slot.ad.get_value("SlotWeight"), -1.0)
        return w if w >= 0 else float(_int_attr(slot.ad, "Cpus") or 1)

    def take(self, slot: Slot, job: ClassAd) -> None:
        """Hand ``slot`` to ``job``: a static slot is gone; a partitionable one gives up what the
        job's dynamic slot will take and stays on offer (re-grouped) while cpus and memory are left."""
        if not slot.partitionable:
            slot.taken = True
            self.left -= 1
            return
        for res, n in dynamic_request(job, slot.ad, self.modify).items():
            slot.ad[res] = _int_attr(slot.ad, res) - n
        slot.version += 1
        if _int_attr(slot.ad, "Cpus") <= 0 or _int_attr(slot.ad, "Memory") <= 0:
            slot.taken = True
            self.left -= 1
            return
        for refs, grouping in self._groupings.items():
            self._place(grouping, slot, refs)


class RequestMatcher:
    """The slots for one resource request, best first, as they are taken (a request stands for
    an autocluster: it asks again for each of its jobs)."""

    def __init__(self, pool: Pool, job: ClassAd, ctx: Context) -> None:
        self.pool = pool
        self.job = job
        self.ctx = ctx
        self.grouping = pool._grouping(pool.job_refs(job))
        self.heap: list[tuple[tuple[float, ...], int, _Group, str | None]] = []
        self.seq = itertools.count()
        self.cursor = 0

    def _catch_up(self) -> None:
        created = self.grouping.created
        while self.cursor < len(created):
            group = created[self.cursor]
            self.cursor += 1
            slot = group.live()
            if slot is None:
                continue
            got = self.pool.evaluate(self.job, slot, self.ctx)
            if got is not None:
                score, reason = got
                heapq.heappush(self.heap, (tuple(-x for x in score), next(self.seq), group, reason))

    def next(self) -> tuple[Slot, str | None] | None:
        """The best slot left for this request and why it would be preempted (None: it is free)."""
        self._catch_up()
        while self.heap:
            _, _, group, reason = self.heap[0]
            slot = group.live()
            if slot is None:
                heapq.heappop(self.heap)
                continue
            return slot, reason
        return None
