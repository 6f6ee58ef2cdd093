"""Accounting groups with hierarchical quotas (HTCondor's GROUP_NAMES and friends).

The tree's root is the invented ``<none>`` group, whose quota is the whole pool (in slot weight).
A child's quota is static (``GROUP_QUOTA_<g>``, slots) or dynamic (``GROUP_QUOTA_DYNAMIC_<g>``, a
fraction of what its parent has left after its static children); children asking for more than
the parent has are scaled down unless ``NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION``.  A group's own
quota is what its children leave of its quota.  Allocation is bottom-up: each group gets its quota
or its demand, whichever is less; unused quota (surplus) goes to groups that accept it
(``GROUP_ACCEPT_SURPLUS[_<g>]``) in proportion to their quotas, first within the subtree, then up; a
group that does not accept surplus caps its subtree.  Groups negotiate in starvation order (least
usage per quota first), ``<none>`` last, or by ``GROUP_SORT_EXPR``.  Names are case-insensitive.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from htcd.classad import ClassAd, Expr

NONE = "<none>"


@dataclass
class Group:
    name: str
    parent: Group | None = None
    children: list[Group] = field(default_factory=list)
    static: float | None = None
    dynamic: float | None = None
    accept_surplus: bool = False
    autoregroup: bool = False
    quota: float = 0.0  # the subtree's quota
    own_quota: float = 0.0  # what the group itself may use (quota less its children's)
    demand: float = 0.0  # weighted slots its own submitters use or want (running + idle)
    usage: float = 0.0  # weighted slots its own submitters use now
    allocated: float = 0.0  # its own allocation, surplus included

    def walk(self) -> list[Group]:
        out = [self]
        for c in self.children:
            out.extend(c.walk())
        return out


def _number(text: str | None) -> float | None:
    if text is None or not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        return None


def build(names: list[str], knob: Callable[[str], str | None]) -> dict[str, Group]:
    """The group tree from GROUP_NAMES (lower-cased name -> Group; ``<none>`` is the root).
    ``knob(name)`` reads a config value (GROUP_QUOTA_<g>...)."""
    root = Group(NONE)
    root.accept_surplus = _truth(knob("GROUP_ACCEPT_SURPLUS"))
    root.autoregroup = _truth(knob("GROUP_AUTOREGROUP"))
    groups = {NONE: root}
    for name in sorted({n.strip() for n in names if n.strip()}, key=lambda n: n.count(".")):
        key = name.lower()
        parent_key = key.rsplit(".", 1)[0] if "." in key else NONE
        parent = groups.get(parent_key, root)
        g = Group(name, parent)
        g.static = _number(knob(f"GROUP_QUOTA_{name}"))
        g.dynamic = _number(knob(f"GROUP_QUOTA_DYNAMIC_{name}"))
        own = knob(f"GROUP_ACCEPT_SURPLUS_{name}")
        g.accept_surplus = _truth(own) if own is not None else root.accept_surplus
        auto = knob(f"GROUP_AUTOREGROUP_{name}")
        g.autoregroup = _truth(auto) if auto is not None else root.autoregroup
        parent.children.append(g)
        groups[key] = g
    return groups


def _truth(text: str | None) -> bool:
    return (text or "").strip().lower() in ("true", "1", "yes", "t")


def group_of(submitter: str, groups: Mapping[str, Group]) -> Group:
    """The group a submitter negotiates under: the longest configured prefix of the part of its
    name before the last '.' (``group_physics.hep.alice@domain`` -> group_physics.hep), else
    ``<none>``."""
    user = submitter.rsplit("@", 1)[0].lower()
    while "." in user:
        user = user.rsplit(".", 1)[0]
        if user in groups:
            return groups[user]
    return groups[NONE]


def assign_quotas(root: Group, pool: float, oversubscribe: bool = True) -> None:
    """Each group's quota from its parent's, top-down."""
    root.quota = pool
    todo = [root]
    while todo:
        g = todo.pop()
        statics = [c for c in g.children if c.static is not None]
        dynamics = [c for c in g.children if c.static is None]
        static_sum = sum(max(0.0, c.static or 0.0) for c in statics)
        scale = 1.0
        if static_sum > g.quota and not oversubscribe and static_sum > 0:
            scale = g.quota / static_sum
        for c in statics:
            c.quota = max(0.0, c.static or 0.0) * scale
        left = max(0.0, g.quota - static_sum * scale)
        frac_sum = sum(max(0.0, c.dynamic or 0.0) for c in dynamics)
        fscale = 1.0 / frac_sum if frac_sum > 1.0 else 1.0
        for c in dynamics:
            c.quota = max(0.0, c.dynamic or 0.0) * fscale * left
        g.own_quota = max(0.0, g.quota - sum(c.quota for c in g.children))
        todo.extend(g.children)


def allocate(root: Group) -> None:
    """Each group's allocation: min(own quota, demand), plus surplus shared with the groups that
    accept it, bottom-up (what a subtree cannot use goes to its parent)."""
    _allocate(root)


def _allocate(g: Group) -> float:
    """Allocate within ``g``'s subtree; return the surplus the subtree passes up."""
    g.allocated = min(g.own_quota, g.demand)
    surplus = g.own_quota - g.allocated
    for c in g.children:
        surplus += _allocate(c)
    return _share(g, surplus, top=False)


def _unmet(g: Group) -> float:
    """What ``g`` and the descendants that accept surplus still want beyond their allocation."""
    total = max(0.0, g.demand - g.allocated)
    for c in g.children:
        if c.accept_surplus:
            total += _unmet(c)
    return total


def _share(g: Group, surplus: float, top: bool) -> float:
    """Give ``surplus`` to ``g``'s children that accept it (and, at the root or to a group that
    itself accepts surplus, to ``g``'s own demand), by their quotas; return what is left."""
    for _ in range(8):  # a few rounds: what one child cannot use goes to the others
        if surplus <= 1e-9:
            break
        takers = [c for c in g.children if c.accept_surplus and _unmet(c) > 1e-9]
        own = max(0.0, g.demand - g.allocated) if (top or g.parent is None) else 0.0
        if not takers and own <= 1e-9:
            break
        if own > 0:
            give = min(own, surplus)
            g.allocated += give
            surplus -= give
        weights = {id(c): max(c.quota, 1e-6) for c in takers}
        total = sum(weights.values())
        given = 0.0
        for c in takers:
            part = min(surplus * weights[id(c)] / total, _unmet(c))
            _give(c, part)
            given += part
        surplus -= given
        if given <= 1e-9:
            break
    return surplus


def _give(g: Group, amount: float) -> None:
    own = min(max(0.0, g.demand - g.allocated), amount)
    g.allocated += own
    amount -= own
    if amount > 1e-9:
        _share(g, amount, top=True)


#: HTCondor's default GROUP_SORT_EXPR: least usage per quota first, groups without a quota next,
#: ``<none>`` last.
DEFAULT_SORT_EXPR = ('ifThenElse(AccountingGroup =?= "<none>", 3.4e+38, '
                     'ifThenElse(GroupQuota > 0, GroupResourcesInUse / GroupQuota, 3.3e+38))')


def sort_ad(g: Group) -> ClassAd:
    """What GROUP_SORT_EXPR sees of a group (HTCondor's attribute names)."""
    return ClassAd({"AccountingGroup": g.name, "GroupQuota": g.quota, "GroupResourcesInUse": g.usage,
                    "GroupResourcesAllocated": g.allocated})


def negotiation_order(groups: list[Group], sort_expr: Expr) -> list[Group]:
    """Groups by ``sort_expr`` (GROUP_SORT_EXPR), smallest first; a group whose value is not a
    number goes last; ties by name, so the order is stable from cycle to cycle."""
    def key(g: Group) -> tuple[float, str]:
        value = sort_ad(g).eval_expr(sort_expr)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return (math.inf, g.name)
        return (float(value), g.name)
    return sorted(groups, key=key)
