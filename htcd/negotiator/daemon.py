"""The negotiator daemon: a cycle every NEGOTIATOR_INTERVAL and soon after a RESCHEDULE, fair
share by the accountant's priorities, accounting groups, concurrency limits and preemption.

One cycle (HTCondor's phases): fetch the slots and submitters from the collector; charge each
claimed slot's customer and decay priorities (the accountant, persisted in SPOOL); order the
groups (starvation order) and, within each, the submitters by effective priority; give each its
pie slice, asking its schedd for resource requests (one per autocluster, with a count) and
matching them (``matchmaker``); spin the pie again while slots and demand remain.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any

from htcd.classad import ClassAd, ClassAdSyntaxError, Expr, parse_expr
from htcd.daemon import Daemon
from htcd.errors import UserError
from htcd.negotiator import fairshare, groups, limits
from htcd.negotiator.accountant import Accountant, FactorRules
from htcd.negotiator.matchmaker import (
    MODIFY_REQUEST,
    POST_JOB_RANK,
    PRE_JOB_RANK,
    PREEMPTION_RANK,
    Context,
    Pool,
    Slot,
)
from htcd.negotiator.priocmds import PriorityCommands
from htcd.pacer import Pacer
from htcd.wire.client import AsyncConnection
from htcd.wire.errors import RemoteError, WireError
from htcd.wire.server import Handler, Request

_MIN_WEIGHT = 1.0
MATCH_INFO_TIMEOUT = 5.0  # seconds a startd has to take MATCH_INFO before the cycle goes on without it
MATCH_INFO_PARALLEL = 64  # startds told at once (each is a connection)


@dataclass
class Submitter:
    ad: ClassAd
    name: str
    schedd: str
    idle: int
    running: int
    group: groups.Group
    used: float = 0.0  # weighted slots this cycle's matches took
    done: bool = False  # no more requests (or a time limit): out of the later spins
    skip: set[int] = field(default_factory=set)  # autoclusters already considered this cycle


@dataclass
class CycleFigures:
    matches: int = 0
    rejections: int = 0
    preemptions: int = 0


class Negotiator(Daemon, PriorityCommands):
    subsystem = "NEGOTIATOR"
    ad_type = "Negotiator"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.match_log = self.open_log("MATCH")
        self.wake = asyncio.Event()
        self.last_cycle_start = 0.0
        self.last_cycle_duration = 0.0
        self.cycles = 0
        self.matches_total = 0
        self.last_cycle: dict[str, Any] = {}
        self.accountant = Accountant(os.path.join(self.config.get("SPOOL") or ".", "Accountant.db"))
        self._configure_accountant()
        self._conns: dict[str, AsyncConnection] = {}
        self._sort_text = ""
        self._sort_expr: Expr = parse_expr(groups.DEFAULT_SORT_EXPR)

    def default_name(self) -> str:
        return self.config.get("NEGOTIATOR_NAME") or self.hostname

    def _configure_accountant(self) -> None:
        cfg = self.config
        group_factors = {}
        for name in cfg.get_list("GROUP_NAMES"):
            value = cfg.get(f"GROUP_PRIO_FACTOR_{name}")
            if value is not None:
                try:
                    group_factors[name.lower()] = float(value)
                except ValueError:
                    self.log.warning("GROUP_PRIO_FACTOR_%s = %s is not a number; ignored", name, value)
        self.accountant.rules = FactorRules(
            default=cfg.get_float("DEFAULT_PRIO_FACTOR", 1000.0),
            nice_user=cfg.get_float("NICE_USER_PRIO_FACTOR", 1e10),
            remote=cfg.get_float("REMOTE_PRIO_FACTOR", 1e7),
            local_domain=cfg.get("ACCOUNTANT_LOCAL_DOMAIN") or self.uid_domain,
            group_factors=group_factors)
        self.accountant.halflife = cfg.get_float("PRIORITY_HALFLIFE", 86400.0)

    def command_handlers(self) -> dict[str, Handler]:
        return {"RESCHEDULE": self.cmd_reschedule, **self.priority_handlers()}

    async def cmd_reschedule(self, req: Request) -> str:
        self.wake.set()
        return "ok"

    async def startup(self) -> None:
        self.spawn(self._cycle_loop(), "negotiation loop")

    async def shutdown(self, fast: bool) -> None:
        self.accountant.close()

    async def _cycle_loop(self) -> None:
        """Cycle every NEGOTIATOR_INTERVAL, or on RESCHEDULE, but never more often than
        NEGOTIATOR_CYCLE_DELAY."""
        while not self.stopping.is_set():
            interval = max(1, self.knob_int("NEGOTIATOR_INTERVAL", 60))
            wait = self.last_cycle_start + interval - time.time()
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), wait)
            if self.stopping.is_set():
                return
            delay = self.last_cycle_start + self.knob_int("NEGOTIATOR_CYCLE_DELAY") - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            self.wake.clear()
            try:
                await self.negotiate()
            except (WireError, UserError) as exc:
                self.log.info("negotiation cycle failed: %s", exc)
            except Exception:
                self.log.exception("negotiation cycle failed")
            finally:
                await self._close_conns()

    # -- one cycle -------------------------------------------------------------------------------
    async def negotiate(self) -> int:
        self.last_cycle_start = start = time.time()
        self._configure_accountant()
        cfg = self.config
        self.log.info("---------- Started Negotiation Cycle ----------")
        self.log.info("Phase 1:  Obtaining ads from collector ...")
        consider = cfg.get_bool("NEGOTIATOR_CONSIDER_PREEMPTION", True)
        sub_ads = [ClassAd.from_wire(w) for w in await self.send_to_collector("QUERY_ADS", ad_type="Submitter")]
        self.log.info("  Getting startd private ads ...")
        pool, in_use, limit_use, pool_weight = await self._slots(consider)
        candidates = sum(1 for s in pool.slots if not s.claimed)
        self.log.info("Got ads: %d submitters, %d slots (%d unclaimed)", len(sub_ads), len(pool.slots), candidates)

        self.log.info("Phase 2:  Performing accounting ...")
        tree = groups.build(cfg.get_list("GROUP_NAMES"), cfg.get)
        group_names = {f"{g.name}@{self.uid_domain}" for g in tree.values() if g.name != groups.NONE}
        group_use: dict[str, tuple[int, float]] = {}
        for customer, (n, w) in in_use.items():
            g = groups.group_of(customer, tree)
            if g.name != groups.NONE:
                gname = f"{g.name}@{self.uid_domain}"
                old = group_use.get(gname, (0, 0.0))
                group_use[gname] = (old[0] + n, old[1] + w)
        known = {str(ad.get_value("Name", "")): (0, 0.0) for ad in sub_ads}  # submitters get a record too
        self.accountant.update({**known, **in_use, **group_use}, groups=group_names)
        await asyncio.to_thread(self.accountant.write, self.accountant.snapshot())

        self.log.info("Phase 3:  Sorting submitter ads by priority ...")
        submitters = []
        for ad in sub_ads:
            name = str(ad.get_value("Name", ""))
            submitters.append(Submitter(ad, name, str(ad.get_value("ScheddIpAddr", "")),
                                        int(ad.get_value("IdleJobs", 0) or 0),
                                        int(ad.get_value("RunningJobs", 0) or 0), groups.group_of(name, tree)))
        for g in tree.values():
            g.usage = sum(in_use.get(s, (0, 0.0))[1] for s in {x.name for x in submitters if x.group is g})
            g.demand = sum(x.idle + x.running for x in submitters if x.group is g)
        groups.assign_quotas(tree[groups.NONE], pool_weight, cfg.get_bool("NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION",
                                                                           True))
        groups.allocate(tree[groups.NONE])

        self.log.info("Phase 4.1:  Negotiating with schedds ...")
        figures = CycleFigures()
        self._limits = limits.Limits(cfg.get)
        self._limits.count(limit_use)
        self._cycle_deadline = start + max(1, self.knob_int("NEGOTIATOR_MAX_TIME_PER_CYCLE", 1200))
        self._pacer = Pacer()
        ordered = groups.negotiation_order(list(tree.values()), self._group_sort_expr()) if len(tree) > 1 \
            else [tree[groups.NONE]]
        for g in ordered:
            members = [s for s in submitters if s.group is g and s.idle > 0]
            if not members:
                continue
            if len(tree) > 1:
                cap = max(0.0, g.allocated - g.usage)
                self.log.info("Group %s - BEGIN NEGOTIATION (quota %.2f, usage %.2f, allocated %.2f)",
                              g.name, g.quota, g.usage, g.allocated)
            else:
                cap = math.inf
            whole = g.allocated if len(tree) > 1 else pool_weight
            await self._negotiate_group(members, cap, whole, pool, in_use, figures, g.name)
        auto = [s for s in submitters if s.idle > 0 and s.group.autoregroup and not s.done and s.group.name != groups.NONE]
        if auto and pool.free():
            self.log.info("Group <none> - autoregroup: negotiating with %d submitters", len(auto))
            for s in auto:
                s.done = False
            await self._negotiate_group(auto, math.inf, pool_weight, pool, in_use, figures, groups.NONE)

        self.cycles += 1
        self.matches_total += figures.matches
        end = time.time()
        self.last_cycle_duration = end - start
        # HTCondor's per-cycle figures (the ...0 attributes of the Negotiator ad: the latest cycle)
        self.last_cycle = {
            "LastNegotiationCycleEnd0": int(end),
            "LastNegotiationCycleMatches0": figures.matches,
            "LastNegotiationCycleRejections0": figures.rejections,
            "LastNegotiationCycleCandidateSlots0": candidates,
            "LastNegotiationCycleTotalSlots0": len(pool.slots),
            "LastNegotiationCycleActiveSubmitterCount0": sum(1 for s in submitters if s.idle > 0),
            "LastNegotiationCycleNumSchedulers0": len({s.schedd for s in submitters}),
            "LastNegotiationCycleNumIdleJobs0": sum(s.idle for s in submitters),
            "LastNegotiationCyclePreemptions0": figures.preemptions,
            "LastNegotiationCycleMatchEvaluations0": pool.evaluations,
        }
        self.log.info("---------- Finished Negotiation Cycle ----------")
        self.spawn(self._publish_accounting(), "accounting ads")
        return figures.matches

    async def _slots(self, consider: bool) -> tuple[Pool, dict[str, tuple[int, float]], list[object], float]:
        """The pool to match in (unclaimed slots, and busy claimed ones when preemption is
        considered), what each customer holds (slots, weighted), the concurrency limits the
        running jobs hold, and the pool's total slot weight."""
        cfg = self.config
        public = await self.send_to_collector("QUERY_ADS", ad_type="Machine")
        private = await self.send_to_collector("QUERY_PRIVATE_ADS", ad_type="Machine")
        claims = {p["name"]: (p["private"] or {}).get("ClaimId") for p in private}
        prio_req = cfg.get("PREEMPTION_REQUIREMENTS")
        if prio_req is not None and prio_req.strip().lower() in ("false", "0", ""):
            prio_req = None
        pool = Pool(modify={res: cfg.get(f"MODIFY_REQUEST_EXPR_REQUEST{res.upper()}") or default
                            for res, default in MODIFY_REQUEST.items()},
                    pre_job_rank=cfg.get("NEGOTIATOR_PRE_JOB_RANK", PRE_JOB_RANK),
                    post_job_rank=cfg.get("NEGOTIATOR_POST_JOB_RANK", POST_JOB_RANK),
                    preemption_requirements=prio_req if consider else None,
                    preemption_rank=cfg.get("PREEMPTION_RANK", PREEMPTION_RANK))
        use_weights = cfg.get_bool("NEGOTIATOR_USE_SLOT_WEIGHTS", True)
        in_use: dict[str, tuple[int, float]] = {}
        limit_use: list[object] = []
        total = 0.0
        for wire in public:
            ad = ClassAd.from_wire(wire)
            weight = _weight(ad) if use_weights else 1.0
            state, activity = ad.get_value("State"), ad.get_value("Activity")
            if ad.get_value("PartitionableSlot") is True:
                total += weight  # what is left of it; its dynamic slots count on their own
            else:
                total += weight
            if state in ("Claimed", "Preempting"):
                customer = _customer(ad)
                if customer:
                    n, w = in_use.get(customer, (0, 0.0))
                    in_use[customer] = (n + 1, w + weight)
                limit_use.append(ad.get_value("ConcurrencyLimits"))
            claim = claims.get(ad.get_value("Name"))
            if not claim:
                continue
            if state == "Unclaimed":
                pool.add(Slot(ad, str(claim)))
            elif consider and state == "Claimed" and activity in ("Busy", "Suspended"):
                rank = ad.get_value("CurrentRank", 0.0)
                pool.add(Slot(ad, str(claim), claimed=True, customer=_customer(ad),
                              current_rank=float(rank) if isinstance(rank, (int, float)) else 0.0,
                              singleton=prio_req is not None))
        return pool, in_use, limit_use, total

    async def _negotiate_group(self, members: list[Submitter], cap: float, whole: float, pool: Pool,
                               in_use: dict[str, tuple[int, float]], figures: CycleFigures, gname: str) -> None:
        """Spin the pie among one group's submitters: first their slices of what the group may
        use, then slices of what is left among those still wanting, while matches are made."""
        acct = self.accountant
        eups = {s.name: acct.effective_priority(s.name) for s in members}
        usage = {s.name: in_use.get(s.name, (0, 0.0))[1] for s in members}
        spin = 0
        while True:
            spin += 1
            hungry = [s for s in members if not s.done]
            left = cap - sum(s.used for s in members)
            free = pool.free_weight()  # free slots, and claimed ones that preemption may take
            pie = min(left, free)
            if not hungry or pie < _MIN_WEIGHT - 1e-9 or time.time() > self._cycle_deadline:
                return
            if spin == 1:  # the slices of the whole pool (or group quota), less what each uses
                limits_now = fairshare.slices({s.name: eups[s.name] for s in members}, usage, whole)
            else:
                limits_now = fairshare.shares({s.name: eups[s.name] for s in hungry}, pie)
            made = 0
            for sub in sorted(hungry, key=lambda s: (eups[s.name], s.name)):
                if not pool.left:
                    return
                if cap - sum(s.used for s in members) < _MIN_WEIGHT - 1e-9:
                    return
                limit = limits_now.get(sub.name, 0.0)
                if spin > 1 and limit < _MIN_WEIGHT:
                    limit = _MIN_WEIGHT  # the pie's crumbs go to the best priorities first
                limit = min(limit, cap - sum(s.used for s in members))
                if limit < _MIN_WEIGHT - 1e-9 and spin == 1:
                    continue
                ctx = Context(submitter=sub.name, eup=eups[sub.name], in_use=usage.get(sub.name, 0.0),
                              eup_of=acct.effective_priority,
                              in_use_of=lambda n: in_use.get(n, (0, 0.0))[1], group=gname)
                made += await self._negotiate_with(sub, pool, limit, ctx, figures)
            if not made:
                return

    def _group_sort_expr(self) -> Expr:
        """GROUP_SORT_EXPR, parsed once per text; one that does not parse is reported (naming the
        knob) and the default order is used, so a typo never stops negotiation."""
        text = (self.config.get("GROUP_SORT_EXPR") or "").strip() or groups.DEFAULT_SORT_EXPR
        if text != self._sort_text:
            self._sort_text = text
            try:
                self._sort_expr = parse_expr(text)
            except ClassAdSyntaxError as exc:
                self.log.error("GROUP_SORT_EXPR = %s is not a ClassAd expression (%s); groups negotiate in the "
                               "default order (least usage per quota first)", text, exc)
                self._sort_expr = parse_expr(groups.DEFAULT_SORT_EXPR)
        return self._sort_expr

    async def _tell_startds(self, by_startd: dict[str, list[str]]) -> None:
        """Tell each startd which of its free slots were matched (MATCH_INFO: startd address ->
        offered claim ids), before the schedd hears of the matches (so a slot is Matched before
        its claim request comes, as in HTCondor); all startds at once, each given a few seconds:
        a slow or lost startd only means its slots stay Unclaimed until claimed, as without it."""
        if by_startd:
            gate = asyncio.Semaphore(MATCH_INFO_PARALLEL)
            await asyncio.gather(*(self._match_info(a, ids, gate) for a, ids in by_startd.items()))

    async def _match_info(self, address: str, claim_ids: list[str], gate: asyncio.Semaphore) -> None:
        async with gate:
            await self._send_match_info(address, claim_ids)

    async def _send_match_info(self, address: str, claim_ids: list[str]) -> None:
        try:
            conn = await AsyncConnection.open(address, timeout=MATCH_INFO_TIMEOUT)
            try:
                await conn.call("MATCH_INFO", timeout=MATCH_INFO_TIMEOUT, claim_ids=claim_ids)
            finally:
                await conn.close()
        except (WireError, RemoteError, OSError) as exc:
            self.log.info("    could not tell the startd at %s of its matched slots: %s", address, exc)

    async def _conn(self, schedd: str) -> AsyncConnection:
        conn = self._conns.get(schedd)
        if conn is None:
            conn = self._conns[schedd] = await AsyncConnection.open(schedd)
        return conn

    async def _close_conns(self) -> None:
        conns, self._conns = self._conns, {}
        for conn in conns.values():
            with contextlib.suppress(WireError, OSError):
                await conn.close()

    async def _negotiate_with(self, sub: Submitter, pool: Pool, limit: float, ctx: Context,
                              figures: CycleFigures) -> int:
        """Match ``sub``'s requests until its limit (weighted slots) is reached, its requests run
        out or NEGOTIATOR_MAX_TIME_PER_SUBMITTER passes; returns the matches made."""
        self.log.info("  Negotiating with %s at %s", sub.name, sub.schedd)
        started = time.time()
        deadline = min(started + max(1, self.knob_int("NEGOTIATOR_MAX_TIME_PER_SUBMITTER", 60)), self._cycle_deadline)
        size = max(1, self.knob_int("NEGOTIATOR_RESOURCE_REQUEST_LIST_SIZE", 200))
        used = 0.0
        made = 0
        try:
            conn = await self._conn(sub.schedd)
        except (WireError, OSError) as exc:
            self.log.info("    Failed to connect to %s: %s", sub.schedd, exc)
            sub.done = True
            return 0
        slot_ads: list[dict[str, str]] | None = pool.sample()
        seen: set[int] = set()  # autoclusters asked about in this call (the next page skips them)
        while True:
            try:
                requests = await conn.call("NEGOTIATE", submitter=sub.name, limit=size, slot_ads=slot_ads,
                                           skip=sorted(sub.skip | seen))
            except (WireError, RemoteError) as exc:
                self.log.info("    Failed to get resource requests from %s: %s", sub.schedd, exc)
                self._conns.pop(sub.schedd, None)
                sub.done = True
                return made
            slot_ads = None
            matches: list[dict[str, Any]] = []
            matched_free: dict[str, list[str]] = {}  # startd address -> claim ids of free static slots matched
            stop = ""
            for req in requests:
                if not pool.left:
                    stop = "Out of resources - stopping negotiation"
                    break
                acid = req.get("autocluster")
                if acid is not None:
                    seen.add(int(acid))
                job = ClassAd.from_wire(req["ad"])
                wanted = limits.parse(job.get_value("ConcurrencyLimits"))
                matcher = pool.matcher(job, ctx)
                count = int(req.get("count") or 1)
                for _ in range(count):
                    if self._pacer.due():
                        await self._pacer.pause()
                    blocked = self._limits.blocked(wanted) if wanted else None
                    if blocked:
                        figures.rejections += 1
                        self.log.info("    Rejected %s %s %s: concurrency limit %s reached", req["id"], sub.name,
                                      sub.schedd, blocked)
                        if acid is not None:
                            sub.skip.add(int(acid))
                        break
                    got = matcher.next()
                    if got is None:
                        figures.rejections += 1
                        self.log.info("    Rejected %s %s %s: no match found", req["id"], sub.name, sub.schedd)
                        if acid is not None:
                            sub.skip.add(int(acid))
                        break
                    slot, reason = got
                    weight = pool.weight(slot, job) if self.config.get_bool("NEGOTIATOR_USE_SLOT_WEIGHTS", True) \
                        else 1.0
                    if used + weight > limit + 1e-9:
                        stop = f"Reached submitter resource limit: {used:.6f} ... stopping"
                        break
                    slot_ad = slot.ad.copy() if slot.partitionable else slot.ad
                    matches.append({"id": req["id"], "autocluster": acid, "slot_ad": slot_ad.to_wire(),
                                    "claim_id": slot.claim_id, "preempt": reason})
                    address = str(slot.ad.get_value("StartdIpAddr") or slot.ad.get_value("MyAddress") or "")
                    if not reason and not slot.partitionable and address:
                        matched_free.setdefault(address, []).append(slot.claim_id)
                    victim = slot.customer if reason else "none"
                    pool.take(slot, job)
                    if wanted:
                        self._limits.take(wanted)
                    used += weight
                    sub.used += weight
                    made += 1
                    figures.matches += 1
                    if reason:
                        figures.preemptions += 1
                    self.match_log.info("      Matched %s %s %s preempting %s %s %s", req["id"], sub.name, sub.schedd,
                                        victim, slot.ad.get_value("StartdIpAddr"), slot.name)
                if stop or time.time() > deadline:
                    break
            if matches:
                await self._tell_startds(matched_free)
                try:
                    await conn.call("MATCHES", matches=matches)
                except (WireError, RemoteError) as exc:
                    self.log.info("    Failed to send matches to %s: %s", sub.schedd, exc)
                    self._conns.pop(sub.schedd, None)
                    sub.done = True
                    return made
            self.log.info("    Request list for %s: %d requests, %d matched", sub.name, len(requests), len(matches))
            if stop:
                self.log.info("    %s", stop)
                return made
            if time.time() > deadline:
                self.log.info("    Reached max time per submitter (%d s): stopping", int(deadline - started))
                sub.done = True
                return made
            if len(requests) < size:
                self.log.info("    Got NO_MORE_JOBS;  schedd has no more requests")
                sub.done = True
                return made

    # -- ads -----------------------------------------------------------------------------------
    def make_ad(self) -> ClassAd:
        ad = self.base_ad("Negotiator")
        ad["LastNegotiationCycleTime0"] = int(self.last_cycle_start)
        ad["LastNegotiationCycleDuration0"] = round(self.last_cycle_duration, 3)
        for k, v in self.last_cycle.items():
            ad[k] = v
        ad["NegotiationCycles"] = self.cycles
        ad["MatchesTotal"] = self.matches_total
        return ad

    async def _publish_accounting(self) -> None:
        """One Accounting ad per customer (HTCondor's, for status -accounting style tools)."""
        for name in list(self.accountant.customers):
            ad = self.base_ad("Accounting")
            for k, v in self.accountant.record(name).items():
                ad[k] = v
            ad["NegotiatorName"] = self.name
            if not await self.advertiser.update("Accounting", ad.to_wire()):
                return


def _weight(ad: ClassAd) -> float:
    w = ad.get_value("SlotWeight")
    if isinstance(w, (int, float)) and not isinstance(w, bool):
        return float(w)
    cpus = ad.get_value("Cpus", 1)
    return float(cpus) if isinstance(cpus, (int, float)) else 1.0


def _customer(ad: ClassAd) -> str:
    """Whom a claimed slot's use is charged to: its AccountingGroup (the submitter name the
    startd publishes), else its RemoteOwner in the slot's UID domain."""
    name = ad.get_value("AccountingGroup")
    if isinstance(name, str) and name:
        return name
    owner = ad.get_value("RemoteOwner")
    if isinstance(owner, str) and owner:
        return owner if "@" in owner else f"{owner}@{ad.get_value('UidDomain', '')}"
    return ""
