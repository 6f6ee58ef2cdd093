"""Autoclusters: idle jobs grouped by the attributes that matter for matching.

As in HTCondor, the significant attributes of a job are those the slots' Requirements and Rank
reference in the job (``TARGET.x``, or a bare name the slot ad does not define), those the job's
own Requirements and Rank reference, and its ``Request*`` attributes; ``SIGNIFICANT_ATTRIBUTES``
replaces the computed list.  Jobs with equal values of them (after ``SCHEDD_ROUND_ATTR_<attr>``
rounding) share an AutoClusterId, and the negotiator gets one resource request per autocluster.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

from htcd.classad import ClassAd, ClassAdSyntaxError, Expr, is_true, parse_expr
from htcd.classad.references import references
from htcd.config import Config
from htcd.schedd.jobs import IDLE, RUNNING, Cluster, Job

MATCH_EXPRS = ("requirements", "rank")
COMPUTED = frozenset({"procid", "globaljobid"})  # names Job.text answers other than from the ads
# Always significant: the negotiator reads them from the request (limits, accounting, nice_user).
NEGOTIATION_ATTRS = ("concurrencylimits", "acctgroup", "acctgroupuser", "accountinggroup", "nice_user",
                     "niceuser")


def _unquote(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip()
    return text[1:-1] if len(text) >= 2 and text[0] == '"' and text[-1] == '"' else text


def submitter_name(job: Job, uid_domain: str) -> str:
    """The name the job negotiates and is accounted under, as HTCondor's schedd names submitters:
    ``group.user@domain`` for a job with an accounting group (AccountingGroup, or AcctGroup and
    AcctGroupUser), else ``owner@domain``."""
    group = _unquote(job.text("AccountingGroup"))
    if not group:
        acct = _unquote(job.text("AcctGroup"))
        if acct:
            group = f"{acct}.{_unquote(job.text('AcctGroupUser')) or job.owner}"
    if group:
        return group if "@" in group else f"{group}@{uid_domain}"
    return f"{job.owner}@{uid_domain}"


_REFS: dict[str, frozenset[str]] = {}  # expression text -> the names it reads in its own ad
REFS_CACHE_SIZE = 10_000


def _own_refs(text: str | None) -> frozenset[str]:
    """The attribute names a job's Requirements or Rank text reads in the job itself, cached by
    text: the procs of a cluster (and the clusters of a user) repeat a handful of texts, and
    parsing one per job and request list was most of a 20,000-job NEGOTIATE."""
    if not text:
        return frozenset()
    found = _REFS.get(text)
    if found is None:
        e = _parse(text)
        found = frozenset() if e is None else frozenset(references(e)[0])
        if len(_REFS) >= REFS_CACHE_SIZE:
            _REFS.clear()
        _REFS[text] = found
    return found


def _parse(text: str | None) -> Expr | None:
    if not text:
        return None
    try:
        return parse_expr(text)
    except ClassAdSyntaxError:
        return None


def slot_references(slot: ClassAd) -> set[str]:
    """Job attributes a slot's Requirements and Rank look at (following the slot's own attributes,
    e.g. Requirements = START)."""
    out: set[str] = set()
    seen: set[str] = set()
    todo = list(MATCH_EXPRS)
    while todo:
        name = todo.pop()
        if name in seen or name not in slot:
            continue
        seen.add(name)
        e = _parse(slot.expr_text(name))
        if e is None:
            continue
        mine, target = references(e)
        out |= target
        for n in mine:
            if n in slot:
                todo.append(n)
            else:
                out.add(n)
    return out


def round_text(text: str, rule: str) -> str:
    """SCHEDD_ROUND_ATTR_<attr>: ``n`` rounds a number up to a multiple of 10^n; ``p%`` up to a
    multiple of p percent of its order of magnitude."""
    try:
        value = float(text)
    except ValueError:
        return text
    rule = rule.strip()
    try:
        if rule.endswith("%"):
            if value <= 0:
                return text
            step = float(rule[:-1]) / 100.0 * 10 ** math.floor(math.log10(value))
        else:
            step = 10.0 ** int(rule)
    except ValueError:
        return text
    if step <= 0:
        return text
    rounded = math.ceil(value / step) * step
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


class AutoClusters:
    def __init__(self, config: Config) -> None:
        self.configure(config)
        self.slot_refs: set[str] = set()
        self.ids: dict[tuple[tuple[str, ...], tuple[str | None, ...]], int] = {}
        self._members: dict[int, list[Job]] = {}  # per autocluster: its idle jobs at the last request list
        # per cluster: how many attributes it had, and the lower-case Request* names among them
        # (attributes are added and set; only JobMaterializePauseReason is ever removed: the count tells a
        # change of the names)
        self._cluster_requests: dict[int, tuple[int, frozenset[str]]] = {}

    def configure(self, config: Config) -> None:
        """Take SIGNIFICANT_ATTRIBUTES and SCHEDD_ROUND_ATTR_* from ``config`` (at start and at
        each reconfig); they were looked up once per job and attribute in every request list."""
        self.config = config
        self._per_cluster: dict[int, tuple[frozenset[str], tuple[str, ...], tuple[str | None, ...]]] = {}
        self._fixed = tuple(sorted({a.lower() for a in config.get_list("SIGNIFICANT_ATTRIBUTES", [])}))
        self._rules: dict[str, str | None] = {}
        # the significant attributes of procs by (cluster, its attribute count, the proc's own
        # names, its own Requirements and Rank texts): procs of one submit differ in values
        # (request_memory = $(mem)), seldom in which attributes they set or in those two texts
        self._attrs_of: dict[tuple[int, int, frozenset[str], str | None, str | None], tuple[str, ...]] = {}

    def _rule(self, attr: str) -> str | None:
        try:
            return self._rules[attr]
        except KeyError:
            rule = self._rules[attr] = self.config.get(f"SCHEDD_ROUND_ATTR_{attr}") or None
            return rule

    def learn_slots(self, slots: Iterable[ClassAd]) -> None:
        refs: set[str] = set()
        for slot in slots:
            refs |= slot_references(slot)
        if refs and refs != self.slot_refs:
            self.slot_refs = refs
            self._per_cluster.clear()
            self._cluster_requests.clear()
            self._attrs_of.clear()

    def _attrs(self, job: Job) -> tuple[str, ...]:
        if self._fixed:
            return self._fixed
        own = frozenset(k.lower() for k in job.proc)
        key = (job.cluster_id, len(job.cluster.wire), own,
               job.text("requirements") if "requirements" in own else None, job.text("rank") if "rank" in own else None)
        found = self._attrs_of.get(key)
        if found is None:
            if len(self._attrs_of) >= 10_000:
                self._attrs_of.clear()
            found = self._attrs_of[key] = self._find_attrs(job)
        return found

    def _find_attrs(self, job: Job) -> tuple[str, ...]:
        names = set(self.slot_refs)
        for attr in MATCH_EXPRS:
            names |= _own_refs(job.text(attr))
        wire = job.cluster.wire
        known = self._cluster_requests.get(job.cluster_id)
        if known is None or known[0] != len(wire):
            known = (len(wire), frozenset(k.lower() for k in wire if k.lower().startswith("request")))
            self._cluster_requests[job.cluster_id] = known
        names |= known[1]
        names |= {k.lower() for k in job.proc if k.lower().startswith("request")}
        names |= set(NEGOTIATION_ATTRS)
        names |= set(MATCH_EXPRS)  # jobs that ask for different slots never share a request
        return tuple(sorted(n for n in names if job.text(n) is not None))

    def _values(self, job: Job, attrs: tuple[str, ...]) -> tuple[str | None, ...]:
        """The texts of ``attrs`` (lower-case names), rounded: ``Job.text`` for each, with the
        proc's names lower-cased once per job rather than once per attribute."""
        own = {k.lower(): v for k, v in job.proc.items()}
        lower, wire = job.cluster.lower, job.cluster.wire
        out = []
        for a in attrs:
            if a in COMPUTED:
                t = job.text(a)
            else:
                t = own.get(a)
                if t is None:
                    key = lower.get(a)
                    t = None if key is None else wire[key]
            rule = self._rule(a)
            out.append(round_text(t, rule) if t is not None and rule else t)
        return tuple(out)

    def signature(self, job: Job) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
        cached = self._per_cluster.get(job.cluster_id)
        if cached is None:
            attrs = self._attrs(job)
            base = Job(job.cluster, 0, {})
            cached = (frozenset(attrs) | set(MATCH_EXPRS), attrs, self._values(base, attrs))
            self._per_cluster[job.cluster_id] = cached
        watched, attrs, values = cached
        own = {k.lower() for k in job.proc}
        if not own or not (own & watched or any(k.startswith("request") for k in own)):
            return attrs, values
        attrs = self._attrs(job)
        return attrs, self._values(job, attrs)

    def forget_cluster(self, cluster_id: int) -> None:
        self._per_cluster.pop(cluster_id, None)
        self._cluster_requests.pop(cluster_id, None)
        self._attrs_of = {k: v for k, v in self._attrs_of.items() if k[0] != cluster_id} if self._attrs_of else {}

    def id_of(self, job: Job) -> tuple[int, tuple[str, ...]]:
        sig = self.signature(job)
        acid = self.ids.get(sig)
        if acid is None:
            acid = self.ids[sig] = len(self.ids) + 1
        return acid, sig[0]

    def attributes(self, job: Job) -> dict[str, str]:
        """AutoClusterId and AutoClusterAttrs as job-ad attributes (wire text)."""
        acid, attrs = self.id_of(job)
        names = [job.cluster.lower.get(a) or next((k for k in job.proc if k.lower() == a), a) for a in attrs]
        return {"AutoClusterId": str(acid), "AutoClusterAttrs": '"' + ",".join(names) + '"'}

    def requests(self, idle: list[Job], limit: int, skip: Iterable[int] = ()) -> list[dict[str, Any]]:
        """One resource request per autocluster (at most ``limit``, none of ``skip``): a
        representative ad and how many jobs it stands for."""
        groups: dict[int, list[Any]] = {}
        skipped = set(skip)
        members: dict[int, list[Job]] = {}
        for job in idle:
            acid = self.id_of(job)[0]
            g = groups.get(acid)
            if g is None:
                if len(groups) >= limit or acid in skipped:
                    continue
                groups[acid] = [job, 1]
                members[acid] = [job]
            else:
                g[1] += 1
                members[acid].append(job)
        self._members.update(members)  # the matches for these requests take their jobs from here
        out = []
        for acid, (rep, count) in groups.items():
            wire = rep.wire()
            wire.update(self.attributes(rep))
            out.append({"id": rep.id_text, "ad": wire, "count": count, "autocluster": acid})
        return out

    def idle_members(self, jobs: list[Job], owner: str, acid: int) -> Iterator[Job]:
        """The owner's idle, unmatched jobs of one autocluster, found as they are asked for: from
        the last request list's members of it (no scan of the queue), else by a scan."""
        found = False
        for job in self._members.get(acid, ()):
            if job.status == IDLE and not job.matched and job.owner == owner and self.id_of(job)[0] == acid:
                found = True
                yield job
        if found:
            return
        for job in jobs:
            if job.status == IDLE and not job.matched and job.owner == owner and self.id_of(job)[0] == acid:
                yield job

    def summary(self, jobs: list[Job], constraint: Expr | None) -> list[dict[str, Any]]:
        """``htcd q -autocluster``: each autocluster with its job count and attribute values."""
        out: dict[int, dict[str, Any]] = {}
        for job in jobs:
            if constraint is not None and not is_true(constraint.eval(job.ad)):
                continue
            acid, _attrs = self.id_of(job)
            row = out.get(acid)
            if row is None:
                values = self.signature(job)[1]
                row = out[acid] = {"id": acid, "count": 0, "owner": job.owner,
                                   "attrs": self.attributes(job)["AutoClusterAttrs"].strip('"').split(","),
                                   "values": ["undefined" if v is None else v for v in values]}
            row["count"] += 1
        return sorted(out.values(), key=lambda r: r["id"])


def group_submitters(clusters: Iterable[Cluster], jobs: Iterable[Job], uid_domain: str) -> dict[str, list[Any]]:
    """Accounting-group submitters: name -> [owner, idle, running].  Only clusters with an
    accounting group, at cluster level or in some proc's own attributes (procs queued with
    different groups), are looked at, and the queue is scanned only when there is one."""
    grouped = {c.id for c in clusters if c.proc_groups or c.text("AccountingGroup") is not None
               or c.text("AcctGroup") is not None}
    out: dict[str, list[Any]] = {}
    if not grouped:
        return out
    for job in jobs:
        if job.cluster_id in grouped and job.status in (IDLE, RUNNING):
            row = out.setdefault(submitter_name(job, uid_domain), [job.owner, 0, 0])
            row[1 if job.status == IDLE else 2] += 1
    return out
