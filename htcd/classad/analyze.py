"""Why a job does not match: HTCondor's ``-better-analyze`` Requirements analysis, as data.

The job's Requirements is split into its top-level ``&&`` conditions; each is counted against
every slot (job as MY, slot as TARGET), the slots' own Requirements are counted against the job,
and the slots that match are sorted by whether they are free.  From the per-slot results come
HTCondor's "Suggestions" (which single condition, removed, lets the most slots match) and a
verdict in plain words.  Pure: ads in, dataclasses out; the CLI does the printing.

Each condition's tree is compiled once and evaluated per slot, so 10,000 slots take well under
a second.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .ad import ClassAd, matches, symmetric_match
from .expr import (
    AttrRef,
    Binary,
    Call,
    Cond,
    Ctx,
    Elvis,
    Expr,
    Index,
    ListExpr,
    Literal,
    Paren,
    Select,
    Unary,
    unparse_name,
)
from .values import ERROR, UNDEFINED, Value, is_true

_SCOPES = frozenset({"my", "target", "parent", "self", "other"})
_SCOPE_OF = {"my": "my", "self": "my", "target": "target", "other": "target"}  # OTHER is TARGET
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!=", "=?=": "=?=", "=!=": "=!="}
_BUSY_STATES = frozenset({"Claimed", "Matched", "Preempting"})
# Slot attributes by which an execute point says it offers a universe (what condor_submit's
# Requirements test), and the universe each stands for.
UNIVERSE_ATTRS = {"hasdocker": "docker", "hasjava": "java", "hasvm": "vm", "hascontainer": "container",
                  "hassif": "container (SIF images)", "hasdockerurl": "container (docker:// images)"}
# Universes the access point runs itself (JobUniverse numbers), never matched with slots.
AP_UNIVERSES = {7: ("scheduler", "START_SCHEDULER_UNIVERSE"), 12: ("local", "START_LOCAL_UNIVERSE")}
_STATUS_VERDICTS = {2: "the job is running", 3: "the job has been removed", 4: "the job has completed",
                    5: "the job is held: it will not run until it is released (htcd release)",
                    7: "the job is suspended"}


@dataclass(frozen=True)
class Condition:
    """One top-level conjunct of the job's Requirements and how the slots take it."""

    step: int
    expr: Expr
    text: str  # as HTCondor prints it (outer parentheses dropped)
    reduced: str  # the job's own attributes replaced by their values
    matched: int  # slots it is true against
    undefined: int  # slots it is UNDEFINED or ERROR against
    matched_without: int  # slots the job's other conditions all accept (if this one were removed)
    suggestion: str  # "", "REMOVE" or "MODIFY TO <value>"
    reason: str  # why it matches no slot, in plain words ("" when it matches some)


@dataclass(frozen=True)
class Summary:
    """HTCondor's run analysis summary: each slot lands in exactly one bucket."""

    slots: int
    rejected_by_job: int  # the job's Requirements is not true against the slot
    reject_job: int  # the job accepts the slot, the slot's own Requirements (START) refuses the job
    running_yours: int  # symmetric match, claimed by the job's owner
    serving_others: int  # symmetric match, claimed by someone else
    available: int  # symmetric match, free
    slot_rejects_job: int  # slots whose own Requirements refuse the job, whatever the job wants


@dataclass(frozen=True)
class Analysis:
    requirements: str  # the job's Requirements as HTCondor prints it ("" when it has none)
    job_attributes: list[tuple[str, str]]  # (name, expression text) of job attributes it refers to
    conditions: list[Condition]
    summary: Summary
    best_removal: Condition | None  # removing it lets the most slots match (None: removing helps none)
    verdict: str


# ---------------------------------------------------------------- tree walking

def _children(e: Expr) -> list[Expr]:
    if isinstance(e, Binary):
        return [e.left, e.right]
    if isinstance(e, (Unary,)):
        return [e.operand]
    if isinstance(e, Paren):
        return [e.inner]
    if isinstance(e, Select):
        return [e.base]
    if isinstance(e, Index):
        return [e.base, e.index]
    if isinstance(e, Cond):
        return [e.cond, e.then, e.other]
    if isinstance(e, Elvis):
        return [e.left, e.right]
    if isinstance(e, Call):
        return list(e.args)
    if isinstance(e, ListExpr):
        return list(e.items)
    return []


def _rebuild(e: Expr, kids: list[Expr]) -> Expr:
    """A copy of ``e`` with new children (in ``_children`` order)."""
    if all(a is b for a, b in zip(kids, _children(e), strict=True)):
        return e
    if isinstance(e, Binary):
        return Binary(e.op, kids[0], kids[1])
    if isinstance(e, Unary):
        return Unary(e.op, kids[0])
    if isinstance(e, Paren):
        return Paren(kids[0])
    if isinstance(e, Select):
        return Select(kids[0], e.name)
    if isinstance(e, Index):
        return Index(kids[0], kids[1])
    if isinstance(e, Cond):
        return Cond(kids[0], kids[1], kids[2])
    if isinstance(e, Elvis):
        return Elvis(kids[0], kids[1])
    if isinstance(e, Call):
        return Call(e.name, kids)
    if isinstance(e, ListExpr):
        return ListExpr(kids)
    return e


def _scoped(e: Expr) -> tuple[str, str] | None:
    """("my"|"target"|"", name) when ``e`` is an attribute reference ("" for a bare name)."""
    if isinstance(e, AttrRef) and e.lname not in _SCOPES:
        return "", e.name
    if isinstance(e, Select) and isinstance(e.base, AttrRef) and e.base.lname in _SCOPE_OF:
        return _SCOPE_OF[e.base.lname], e.name
    return None


def _refs(e: Expr) -> Iterator[tuple[str, str]]:
    """Every attribute reference in ``e``, in reading order."""
    stack = [e]
    while stack:
        node = stack.pop()
        ref = _scoped(node)
        if ref is not None:
            yield ref
            continue
        stack.extend(reversed(_children(node)))


def _unwrap(e: Expr) -> Expr:
    while isinstance(e, Paren):
        e = e.inner
    return e


def and_operands(e: Expr) -> list[Expr]:
    """The operands of a top-level ``&&`` chain as written (parentheses kept), else ``[e]``."""
    return e._chain() if isinstance(e, Binary) and e.op == "&&" else [e]


def conjuncts(e: Expr) -> list[Expr]:
    """The top-level ``&&`` operands of ``e``, through parentheses, outer parentheses dropped."""
    out: list[Expr] = []
    stack = [e]
    while stack:
        node = _unwrap(stack.pop())
        if isinstance(node, Binary) and node.op == "&&":
            stack.extend(reversed(node._chain()))
        else:
            out.append(node)
    return out


class _JobView:
    """What the job itself defines: which of its attributes a condition uses and their values."""

    def __init__(self, job: ClassAd) -> None:
        self.job = job
        self._needs_target: dict[str, bool] = {}

    def defines(self, scope: str, name: str) -> bool:
        return scope in ("", "my") and name in self.job

    def needs_target(self, name: str) -> bool:
        """Whether the job's attribute ``name`` reads the slot (directly or through others)."""
        key = name.lower()
        known = self._needs_target.get(key)
        if known is not None:
            return known
        self._needs_target[key] = True  # a cycle: be conservative
        expr = self.job.lookup(name)
        result = expr is not None and any(
            scope == "target" or not self.defines(scope, n) or self.needs_target(n) for scope, n in _refs(expr))
        self._needs_target[key] = result
        return result

    def attributes(self, e: Expr) -> list[tuple[str, str]]:
        """The job attributes ``e`` refers to, transitively, in order of first use."""
        seen: dict[str, tuple[str, str]] = {}
        todo = [e]
        while todo:
            for scope, name in _refs(todo.pop(0)):
                if self.defines(scope, name) and name.lower() not in seen:
                    real = self.job.name_of(name) or name
                    sub = self.job.lookup(name)
                    if sub is not None:
                        seen[name.lower()] = (real, str(sub))
                        todo.append(sub)
        return sorted(seen.values(), key=lambda kv: kv[0].lower())  # HTCondor lists them by name

    def reduced(self, e: Expr) -> Expr:
        """``reduce``, or ``e`` itself for a tree too deep to rebuild (a very long ``||`` chain)."""
        try:
            return self.reduce(e)
        except RecursionError:
            return e

    def reduce(self, e: Expr) -> Expr:
        """``e`` with each job attribute that does not depend on the slot replaced by its value."""
        ref = _scoped(e)
        if ref is not None:
            scope, name = ref
            if self.defines(scope, name) and not self.needs_target(name):
                v = self.job.eval(name)
                if v is not UNDEFINED and v is not ERROR and type(v) in (int, float, str, bool):
                    return Literal(v)
            return e
        kids = _children(e)
        return _rebuild(e, [self.reduce(k) for k in kids]) if kids else e


# ---------------------------------------------------------------- plain-words reasons

def _slot_side(view: _JobView, e: Expr) -> str | None:
    """The slot attribute ``e`` names (TARGET.x, or a bare name the job does not define)."""
    ref = _scoped(e)
    if ref is None:
        return None
    scope, name = ref
    if scope == "target" or (scope == "" and not view.defines(scope, name)):
        return name
    return None


def _comparison(view: _JobView, reduced: Expr) -> tuple[str, str, object] | None:
    """(slot attribute, operator with the attribute on the left, constant) for ``attr OP const``."""
    e = _unwrap(reduced)
    if not isinstance(e, Binary) or e.op not in _FLIP:
        return None
    left, right = _unwrap(e.left), _unwrap(e.right)
    name = _slot_side(view, left)
    if name is not None and isinstance(right, Literal):
        return name, e.op, right.value
    name = _slot_side(view, right)
    if name is not None and isinstance(left, Literal):
        return name, _FLIP[e.op], left.value
    return None


def _number(v: Value) -> float | int | None:
    return v if type(v) in (int, float) else None


def _fmt(v: object) -> str:
    """A value in plain words: reals as people write them, not in HTCondor's %.15E."""
    if type(v) is float:
        return format(v, ".15g")
    return str(Literal(v))


def _values(slots: Sequence[ClassAd], job: ClassAd, name: str) -> list[object]:
    return [s.eval(name, target=job) for s in slots]


def universe_asked(view: _JobView | None, e: Expr) -> tuple[str, str] | None:
    """(universe, slot attribute) when condition ``e`` asks for a universe: ``TARGET.HasDocker``
    (and the other Has attributes of UNIVERSE_ATTRS) or a plugin universe's
    ``stringListIMember("name", TARGET.StarterAbilityList)``."""
    e = _unwrap(e)
    ref = _scoped(e)
    if ref is not None and (ref[0] == "target" or (view is not None and not view.defines(*ref))):
        universe = UNIVERSE_ATTRS.get(ref[1].lower())
        return (universe, ref[1]) if universe else None
    if isinstance(e, Call) and e.name.lower() in ("stringlistmember", "stringlistimember") and len(e.args) >= 2:
        first, second = _unwrap(e.args[0]), _unwrap(e.args[1])
        ref = _scoped(second)
        if isinstance(first, Literal) and isinstance(first.value, str) and ref is not None \
                and ref[1].lower() == "starterabilitylist":
            return first.value, ref[1]
    return None


def offered_universes(slots: Sequence[ClassAd]) -> list[str]:
    """The universes the slots' starters list (StarterAbilityList), sorted."""
    found: set[str] = set()
    for slot in slots:
        listed = slot.get_value("StarterAbilityList")
        if isinstance(listed, str):
            found.update(u.strip() for u in listed.split(",") if u.strip())
    return sorted(found)


def _describe(view: _JobView, cond_text: str, reduced: Expr, slots: Sequence[ClassAd],
              undefined: int) -> str:
    """Why no slot satisfies a condition: the closest thing the slots have."""
    if not slots:
        return "there are no slots"
    asked = universe_asked(view, reduced)
    if asked is not None:
        offered = offered_universes(slots)
        return (f"no slot offers the {asked[0]} universe ({cond_text} is not true on any slot); "
                f"the slots offer: {', '.join(offered) or 'no universe'}")
    cmp = _comparison(view, reduced)
    if cmp is not None:
        name, op, const = cmp
        shown = f"{unparse_name(name)} {op} {_fmt(const)}"
        values = [v for v in _values(slots, view.job, name) if v is not UNDEFINED and v is not ERROR]
        if not values:
            return f"no slot has {shown}: no slot defines {name}"
        nums = [n for n in map(_number, values) if n is not None]
        if op in (">", ">=") and nums:
            return f"no slot has {shown}: the largest has {_fmt(max(nums))}"
        if op in ("<", "<=") and nums:
            return f"no slot has {shown}: the smallest has {_fmt(min(nums))}"
        common = Counter(_fmt(v) for v in values).most_common(3)
        have = ", ".join(f"{v} ({n})" for v, n in common)
        return f"no slot has {shown}: the slots have {name} = {have}"
    if undefined == len(slots):
        return f"{cond_text} is undefined (or an error) on every slot: it names attributes the slots lack"
    if undefined:
        return f"{cond_text} is false on every slot ({undefined} of them: undefined or an error)"
    return f"{cond_text} is false on every slot"


def _modify_to(view: _JobView, reduced: Expr, slots: Sequence[ClassAd]) -> str | None:
    """The constant that would let the most of ``slots`` pass a comparison, or None."""
    cmp = _comparison(view, reduced)
    if cmp is None or not slots:
        return None
    name, op, const = cmp
    values = [v for v in _values(slots, view.job, name) if v is not UNDEFINED and v is not ERROR]
    nums = [n for n in map(_number, values) if n is not None]
    if op in (">", ">=", "<", "<=") and nums and _number(const) is not None:
        best = max(nums) if op[0] == ">" else min(nums)
        if len(op) == 1:  # strict: one step past the slots' value, which only integers have
            if type(best) is not int:
                return None
            best = best - 1 if op == ">" else best + 1
        return _fmt(best)
    if op in ("==", "=?=") and values:
        return Counter(_fmt(v) for v in values).most_common(1)[0][0]
    return None


# ---------------------------------------------------------------- the analysis

def _claimed_by_owner(slot: ClassAd, job: ClassAd) -> bool:
    user, owner = job.get_value("User"), job.get_value("Owner")
    remote_user, remote_owner = slot.get_value("RemoteUser"), slot.get_value("RemoteOwner")
    return (isinstance(user, str) and user == remote_user) or (isinstance(owner, str) and owner == remote_owner)


def analyze(job: ClassAd, slots: Sequence[ClassAd]) -> Analysis:
    """Analyse ``job``'s Requirements against ``slots`` (machine ads), as -better-analyze does."""
    view = _JobView(job)
    req = job.lookup("Requirements")
    parts = conjuncts(req) if req is not None else []
    fns = [p.compiled() for p in parts]
    n = len(parts)
    matched = [0] * n
    undefined = [0] * n
    only_failure = [0] * n  # slots failing this condition and no other
    all_pass = 0
    masks: list[int] = []  # per slot, a bit for each condition it fails
    refusals: Counter[str] = Counter()  # START texts of the slots that refuse an acceptable job
    rejected_by_job = reject_job = yours = others = available = slot_rejects = 0
    for slot in slots:
        fails = mask = 0
        failed_at = -1
        for i, fn in enumerate(fns):
            try:
                v = fn(job, Ctx(job, slot))
            except RecursionError:
                v = ERROR
            if v is True or (v is not False and is_true(v)):
                matched[i] += 1
                continue
            if v is UNDEFINED or v is ERROR:
                undefined[i] += 1
            fails += 1
            failed_at = i
            mask |= 1 << i
        masks.append(mask)
        if fails == 0:
            all_pass += 1
        elif fails == 1:
            only_failure[failed_at] += 1
        slot_ok = matches(slot, job)
        if not slot_ok:
            slot_rejects += 1
        if not matches(job, slot):
            rejected_by_job += 1
        elif not symmetric_match(job, slot):
            reject_job += 1
            start = slot.lookup("START") or slot.lookup("Requirements")
            refusals[str(start) if start is not None else "(none)"] += 1
        elif slot.get_value("State") in _BUSY_STATES:
            if _claimed_by_owner(slot, job):
                yours += 1
            else:
                others += 1
        else:
            available += 1

    summary = Summary(len(slots), rejected_by_job, reject_job, yours, others, available, slot_rejects)
    full = len(slots) - rejected_by_job
    conditions = []
    for i, part in enumerate(parts):
        reduced = view.reduced(part)
        without = all_pass + only_failure[i]
        suggestion = ""
        if without > full:
            others_only = ~(1 << i)
            passing_others = [s for s, m in zip(slots, masks, strict=True) if not m & others_only]
            suggestion = "MODIFY TO " + m if (m := _modify_to(view, reduced, passing_others)) else "REMOVE"
        reason = "" if matched[i] else _describe(view, str(part), reduced, slots, undefined[i])
        conditions.append(Condition(i, part, str(part), str(reduced), matched[i], undefined[i], without,
                                    suggestion, reason))
    helpful = [c for c in conditions if c.matched_without > full]
    best = max(helpful, key=lambda c: c.matched_without, default=None)
    return Analysis(str(req) if req is not None else "", view.attributes(req) if req is not None else [],
                    conditions, summary, best, _verdict(job.get_value("JobStatus"), req, conditions, summary, best, refusals,
                             job.get_value("JobUniverse")))


def _verdict(status: object, req: Expr | None, conditions: list[Condition], s: Summary,
             best: Condition | None, refusals: Counter[str], universe: object = None) -> str:
    """One sentence: why the job waits (or that it need not)."""
    if status in _STATUS_VERDICTS:
        return _STATUS_VERDICTS[status]
    if universe in AP_UNIVERSES:
        name, knob = AP_UNIVERSES[universe]
        return (f"a {name} universe job runs on the access point, not on a slot: the schedd starts it "
                f"when {knob} allows (slots do not matter)")
    if req is None:
        return "the job has no Requirements expression, so it matches no slot"
    if s.slots == 0:
        return "the collector knows no slots: no startd is advertising to this pool"
    dead = [c for c in conditions if c.matched == 0]
    if dead:
        return "; ".join(c.reason for c in dead)
    if s.rejected_by_job == s.slots:
        hint = (f"; without [{best.step}] {best.reduced}, {best.matched_without} would"
                if best is not None else "")
        return f"each condition matches some slot, but no slot satisfies them all together{hint}"
    if s.running_yours + s.serving_others + s.available == 0:
        start, n = refusals.most_common(1)[0]
        return (f"{_count(s.slots - s.rejected_by_job, 'slot')} satisfy your job's requirements, "
                f"but their own Requirements (START) refuse the job ({n} have START = {start})")
    if s.available == 0:
        parts = []
        if s.running_yours:
            parts.append(f"{s.running_yours} are running your other jobs")
        if s.serving_others:
            parts.append(f"{s.serving_others} are serving other users")
        return f"every slot that matches is busy ({', '.join(parts)}): the job waits for one to free up"
    return f"{_count(s.available, 'slot')} can run the job now: it should start at the next negotiation cycle"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


__all__ = ["Analysis", "Condition", "Summary", "analyze", "and_operands", "conjuncts", "offered_universes",
           "universe_asked"]
