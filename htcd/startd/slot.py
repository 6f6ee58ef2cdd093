"""Slots and claims: what the startd offers (static, partitionable and dynamic slots) and who holds it.

A slot has HTCondor's state and activity; ``StateMachine`` (states.py) decides the transitions,
the startd carries them out.  A partitionable slot is never claimed itself: each claim on it
carves a dynamic slot (``slot1_1``) out of what it has left, and the dynamic slot gives its
resources back when its claim ends.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from htcd.classad import ClassAd

if TYPE_CHECKING:
    from htcd.startd.claims import JobRun
    from htcd.starter.starter import Starter

# States and activities, as HTCondor spells them.
OWNER, UNCLAIMED, MATCHED, CLAIMED, PREEMPTING, DRAINED, DELETE = (
    "Owner", "Unclaimed", "Matched", "Claimed", "Preempting", "Drained", "Delete")
IDLE, BUSY, SUSPENDED, RETIRING, VACATING, KILLING = ("Idle", "Busy", "Suspended", "Retiring", "Vacating",
                                                      "Killing")
STATIC, PARTITIONABLE, DYNAMIC = "Static", "Partitionable", "Dynamic"


def new_claim_id(address: str, start_time: int, seq: int) -> str:
    """HTCondor's shape: ``<addr>#<startd start>#<sequence>#<secret>``; only the secret is private."""
    return f"{address}#{start_time}#{seq}#{secrets.token_hex(16)}"


@dataclass
class Claim:
    id: str
    job_ad: ClassAd  # the job the claim was made for; the running job's ad once activated
    owner: str
    user: str
    client: str
    rank: float
    start: float = field(default_factory=time.time)
    accepted_while_draining: bool = False
    closed: str = ""  # why the claim ended ("" while it lasts)
    # The claim lease: the schedd renews it (ALIVE, or any command on the claim) at least every
    # ``lease`` seconds (its ALIVE_INTERVAL * MAX_CLAIM_ALIVES_MISSED), else an idle claim ends.
    lease: float = 0.0  # 0: no lease (the claim lasts while its connection does)
    renewed: float = field(default_factory=time.monotonic)
    run: JobRun | None = None  # the job running (or its kept result) on this claim
    connected: bool = True  # the schedd's claim connection is open
    conn: Any = None  # that connection (htcd.wire.server.Connection)

    def renew(self) -> None:
        self.renewed = time.monotonic()

    @property
    def public_id(self) -> str:
        # without the secret, the last field (the address may hold a '#': CCBID=server#id)
        return self.id.rsplit("#", 1)[0] if self.id.count("#") >= 3 else ""


@dataclass
class PendingClaim:
    """A claim request for a claimed slot from a job the slot ranks higher (RANK preemption): it
    waits until the current claim is gone, then takes the slot."""

    job_ad: ClassAd
    owner: str
    user: str
    client: str
    rank: float
    done: asyncio.Future[Any]


@dataclass
class Slot:
    slot_id: int
    name: str
    cpus: int
    memory: int
    disk: int
    kind: str = STATIC
    # custom resources (lower-case name -> count) and, for those with ids, the ids the slot holds
    # (a partitionable slot: all it was given, its dynamic slots' among them)
    custom: dict[str, int] = field(default_factory=dict)
    ids: dict[str, list[str]] = field(default_factory=dict)
    type_id: int = 0
    sub_id: int = 0  # dynamic slots: the k of slotN_k
    parent: Slot | None = None
    children: list[Slot] = field(default_factory=list)
    state: str = OWNER  # HTCondor's startd starts every slot in Owner
    activity: str = IDLE
    entered_state: float = field(default_factory=time.time)
    entered_activity: float = field(default_factory=time.time)
    offer_id: str = ""  # the id a claim request must present (published privately)
    claim: Claim | None = None
    pending: PendingClaim | None = None
    starter: Starter | None = None
    next_child: int = 1
    # job and policy bookkeeping
    job_start: float = 0.0
    suspended_at: float = 0.0
    suspended_total: float = 0.0
    retire_why: str = ""  # "preempt", "rank", "drain", "shutdown" while retirement is under way
    evicting: str = ""  # why the running job is being vacated or killed (the shadow is told)
    cpu_seen: tuple[float, float] = (0.0, 0.0)  # (monotonic time, CPU seconds) of the last sample
    condor_load: float = 0.0
    owner_load: float = 0.0  # the share of the machine's load that is not from jobs
    retire_end: float = 0.0  # when the current retirement ends (for RetirementTimeRemaining)
    preempt_reason: str = ""  # why the slot entered Preempting (the claim's end reason)
    job_starts: int = 0
    preemptions: int = 0
    rank_preemptions: int = 0
    state_times: dict[str, float] = field(default_factory=dict)  # "Claimed/Busy" -> seconds so far

    @property
    def short_name(self) -> str:
        return self.name.split("@", 1)[0]

    def left(self) -> tuple[int, int, int]:
        """A partitionable slot's cpus, memory and disk not carved into dynamic slots."""
        used = [(c.cpus, c.memory, c.disk) for c in self.children]
        return (self.cpus - sum(u[0] for u in used), self.memory - sum(u[1] for u in used),
                self.disk - sum(u[2] for u in used))

    def custom_left(self) -> dict[str, int]:
        """A partitionable slot's custom resources not carved into dynamic slots (else its own)."""
        return {r: n - sum(c.custom.get(r, 0) for c in self.children) for r, n in self.custom.items()}

    def free_ids(self, resource: str) -> list[str]:
        """The ids of ``resource`` no dynamic slot holds, in the order the slot was given them."""
        taken = {i for c in self.children for i in c.ids.get(resource, ())}
        return [i for i in self.ids.get(resource, ()) if i not in taken]

    def set_state(self, state: str, activity: str, now: float | None = None) -> None:
        now = time.time() if now is None else now
        key = f"{self.state}/{self.activity}"
        self.state_times[key] = self.state_times.get(key, 0.0) + max(0.0, now - self.entered_activity)
        if state != self.state:
            self.state, self.entered_state = state, now
        if activity != self.activity or key != f"{state}/{activity}":
            self.activity, self.entered_activity = activity, now

    def time_in(self, pair: str, now: float) -> float:
        """Seconds spent in ``State/Activity`` so far (TotalTimeClaimedBusy and friends)."""
        total = self.state_times.get(pair, 0.0)
        if pair == f"{self.state}/{self.activity}":
            total += max(0.0, now - self.entered_activity)
        return total
