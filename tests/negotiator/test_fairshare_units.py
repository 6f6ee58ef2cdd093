"""The accountant's math, pie slices and group quotas against the worked examples of HTCondor's
manual ("User Priorities and Negotiation")."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.classad import parse_expr
from htcd.negotiator import fairshare, groups, limits
from htcd.negotiator.accountant import Accountant, FactorRules, decay

DAY = 86400.0


def test_real_priority_halves_every_halflife_without_usage() -> None:
    # "if a user whose RUP was 10 has no running jobs, that user's RUP would be 5 one day later, 2.5 two days later"
    assert decay(10.0, 0.0, DAY, DAY) == pytest.approx(5.0)
    assert decay(decay(10.0, 0.0, DAY, DAY), 0.0, DAY, DAY) == pytest.approx(2.5)


def test_real_priority_settles_at_the_resources_used_and_never_below_half() -> None:
    prio = 0.5
    for _ in range(500):  # "continuously uses exactly ten resources ... the RUP stabilizes at ten"
        prio = decay(prio, 10.0, 3600.0, DAY)
    assert prio == pytest.approx(10.0, rel=1e-3)
    assert decay(0.6, 0.0, 10 * DAY, DAY) == 0.5


def test_update_is_independent_of_the_step_size() -> None:
    a, b = Accountant(None, halflife=DAY), Accountant(None, halflife=DAY)
    a.update({"u@d": (4, 4.0)}, now=1000.0)
    b.update({"u@d": (4, 4.0)}, now=1000.0)
    a.update({"u@d": (4, 4.0)}, now=1000.0 + DAY)
    for k in range(1, 25):
        b.update({"u@d": (4, 4.0)}, now=1000.0 + k * 3600.0)
    assert a.real_priority("u@d") == pytest.approx(b.real_priority("u@d"))
    assert a.real_priority("u@d") == pytest.approx(0.5 * 0.5 + 0.5 * 4.0)
    # accumulated usage: 4 slots for a day = 96 slot-hours, weighted the same
    assert a.customers["u@d"].weighted_accumulated / 3600 == pytest.approx(96.0)


def test_effective_priority_is_real_times_factor() -> None:
    acct = Accountant(None, FactorRules(default=1000.0, local_domain="d"))
    acct.update({"u@d": (1, 1.0)}, now=1.0)
    assert acct.effective_priority("u@d") == pytest.approx(500.0)  # 0.5 x DEFAULT_PRIO_FACTOR
    acct.set_factor("u@d", 2.0)
    assert acct.effective_priority("u@d") == pytest.approx(1.0)
    assert acct.factor("nice-user.bob@d") == 1e10
    assert acct.factor("bob@elsewhere") == 1e7
    with pytest.raises(ValueError):
        acct.set_factor("u@d", 0.5)


def test_the_accountant_survives_a_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "Accountant.db")
    acct = Accountant(path)
    acct.update({"u@d": (3, 3.0)}, now=100.0)
    acct.update({"u@d": (3, 3.0)}, now=100.0 + DAY)
    acct.set_factor("u@d", 7.0)
    acct.save()
    acct.close()
    again = Accountant(path)
    assert again.real_priority("u@d") == pytest.approx(acct.real_priority("u@d"))
    assert again.factor("u@d") == 7.0
    assert again.last_update == 100.0 + DAY
    again.close()


def test_pie_slices_are_inverse_to_effective_priority() -> None:
    # "user A with EUP=5 will receive twice as many resources as user B with EUP=10 and four times
    # as many resources as user C with EUP=20"
    got = fairshare.shares({"a": 5.0, "b": 10.0, "c": 20.0}, 70.0)
    assert got == pytest.approx({"a": 40.0, "b": 20.0, "c": 10.0})
    # a slice is the share less what the submitter already uses
    assert fairshare.slices({"a": 5.0, "b": 10.0, "c": 20.0}, {"a": 30.0}, 70.0) == \
        pytest.approx({"a": 10.0, "b": 20.0, "c": 10.0})
    assert fairshare.order({"b": 10.0, "a": 5.0, "c": 20.0}) == ["a", "b", "c"]


def _tree(config: dict[str, str]) -> dict[str, groups.Group]:
    return groups.build(config.get("GROUP_NAMES", "").split(","), config.get)


def test_static_quotas_and_their_scaling() -> None:
    cfg = {"GROUP_NAMES": "group_physics, group_chemistry", "GROUP_QUOTA_group_physics": "20",
           "GROUP_QUOTA_group_chemistry": "10"}
    tree = _tree(cfg)
    groups.assign_quotas(tree["<none>"], 30)
    assert (tree["group_physics"].quota, tree["group_chemistry"].quota) == (20, 10)
    # "If a power failure removed half of the original 30 ... physics would be scaled back to a quota
    # of ten, and chemistry to five" (when oversubscription is not allowed)
    groups.assign_quotas(tree["<none>"], 15, oversubscribe=False)
    assert (tree["group_physics"].quota, tree["group_chemistry"].quota) == pytest.approx((10, 5))
    # "if somehow the number of slots doubled ... physics would still be limited to 20"
    groups.assign_quotas(tree["<none>"], 60)
    assert tree["group_physics"].quota == 20 and tree["<none>"].own_quota == 30


def test_dynamic_hierarchical_quotas() -> None:
    cfg = {"GROUP_NAMES": "group_physics, group_physics.hep, group_physics.lep, group_chemistry",
           "GROUP_QUOTA_DYNAMIC_group_chemistry": "0.33334", "GROUP_QUOTA_DYNAMIC_group_physics": "0.66667",
           "GROUP_QUOTA_DYNAMIC_group_physics.hep": "0.75", "GROUP_QUOTA_DYNAMIC_group_physics.lep": "0.25"}
    tree = _tree(cfg)
    groups.assign_quotas(tree["<none>"], 30)
    # "If there are 30 machines in the pool, that would be the same 15 machines as specified in the static example"
    assert tree["group_physics.hep"].quota == pytest.approx(15, abs=0.01)
    assert tree["group_physics.lep"].quota == pytest.approx(5, abs=0.01)
    assert tree["group_chemistry"].quota == pytest.approx(10, abs=0.01)
    assert tree["group_physics.hep"].parent is tree["group_physics"]


def _surplus_tree(physics_accepts: bool) -> dict[str, groups.Group]:
    cfg = {"GROUP_NAMES": "group_physics, group_physics.hep, group_physics.lep, group_chemistry",
           "GROUP_QUOTA_group_physics": "20", "GROUP_QUOTA_group_physics.hep": "15",
           "GROUP_QUOTA_group_physics.lep": "5", "GROUP_QUOTA_group_chemistry": "10",
           "GROUP_ACCEPT_SURPLUS": "false", "GROUP_ACCEPT_SURPLUS_group_physics": str(physics_accepts).lower(),
           "GROUP_ACCEPT_SURPLUS_group_physics.lep": "true", "GROUP_ACCEPT_SURPLUS_group_physics.hep": "true"}
    tree = _tree(cfg)
    tree["group_physics.hep"].demand = 60
    tree["group_physics.lep"].demand = 0
    tree["group_chemistry"].demand = 0
    groups.assign_quotas(tree["<none>"], 30)
    groups.allocate(tree["<none>"])
    return tree


def test_surplus_is_shared_within_a_group_that_caps_its_subtree() -> None:
    # "group_physics.lep and group_physics.hep are allowed to exceed their quota of 15 and 5, but
    # their sum cannot exceed 20, for that is their parent's quota"
    tree = _surplus_tree(physics_accepts=False)
    assert tree["group_physics.hep"].allocated == pytest.approx(20)
    assert tree["group_chemistry"].allocated == 0


def test_surplus_flows_across_when_the_parent_accepts_it() -> None:
    # "If the group_physics had GROUP_ACCEPT_SURPLUS set to True, then either ... would not be limited by quota"
    tree = _surplus_tree(physics_accepts=True)
    assert tree["group_physics.hep"].allocated == pytest.approx(30)


def test_groups_negotiate_in_starvation_order() -> None:
    tree = _tree({"GROUP_NAMES": "a, b", "GROUP_QUOTA_a": "10", "GROUP_QUOTA_b": "10"})
    groups.assign_quotas(tree["<none>"], 20)
    tree["a"].usage, tree["b"].usage = 8, 2
    default = parse_expr(groups.DEFAULT_SORT_EXPR)
    assert [g.name for g in groups.negotiation_order(list(tree.values()), default)] == ["b", "a", "<none>"]
    # a site's GROUP_SORT_EXPR: group a first whatever its usage, <none> still last; not a number: last
    site = parse_expr('ifThenElse(AccountingGroup =?= "<none>", 3.4e+38, ifThenElse(AccountingGroup =?= "a", -10, '
                      'GroupResourcesInUse / GroupQuota))')
    assert [g.name for g in groups.negotiation_order(list(tree.values()), site)] == ["a", "b", "<none>"]
    odd = parse_expr('ifThenElse(AccountingGroup =?= "b", "not a number", GroupResourcesAllocated)')
    assert [g.name for g in groups.negotiation_order(list(tree.values()), odd)][-1] == "b"
    assert groups.group_of("a.alice@d", tree) is tree["a"]
    assert groups.group_of("alice@d", tree) is tree["<none>"]
    assert groups.group_of("zzz.alice@d", tree) is tree["<none>"]


def test_concurrency_limits() -> None:
    knobs = {"DB_LIMIT": "2", "CONCURRENCY_LIMIT_DEFAULT": "5", "CONCURRENCY_LIMIT_DEFAULT_LIC": "1"}
    lim = limits.Limits(lambda k: knobs.get(k.upper()))
    assert limits.parse("DB, lic.x:2") == {"db": 1.0, "lic.x": 2.0}
    lim.count(["db", None, "other"])
    assert lim.blocked({"db": 1.0}) is None
    lim.take({"db": 1.0})
    assert lim.blocked({"db": 1.0}) == "db"
    assert lim.maximum("other") == 5 and lim.maximum("lic.x") == 1
    assert lim.blocked({"lic.x": 2.0}) == "lic.x"
