"""The collector's store on its own: keys by type, update statistics, expiry, and queries (with and
without indexes) checked against plain ClassAd evaluation of every ad."""

from __future__ import annotations

import random

import pytest

from htcd.classad import ClassAd, is_true, parse_expr
from htcd.collector import query, store
from htcd.collector.store import AdStore
from htcd.errors import UserError


def slot(i: int, **extra: str) -> dict[str, str]:
    ad = {"MyType": '"Machine"', "Name": f'"slot{i % 4 + 1}@host{i // 4}"', "Machine": f'"host{i // 4}"',
          "MyAddress": f'"<10.0.{i // 1000}.{i // 4 % 250}:9618?unix=/x>"', "HostGroup": str(i // 10),
          "State": ['"Unclaimed"', '"Claimed"', '"Owner"'][i % 3], "Memory": str(1000 + i % 7 * 100),
          "Cpus": "1", "Arch": '"X86_64"', "Start": "true", "Big": "Memory > 1300",
          "Name2": '"MiXeD"' if i % 5 == 0 else '"mixed"'}
    ad.update(extra)
    return ad


def brute(s: AdStore, ad_type: str, constraint: str | None) -> set[str]:
    expr = parse_expr(constraint) if constraint else None
    out = set()
    for t in s.tables_for(ad_type):
        for e in t.entries.values():
            if expr is None or is_true(expr.eval(ClassAd.from_wire(s.wire(e)))):
                out.add(e.key[0])
    return out


def selected(s: AdStore, ad_type: str, constraint: str | None) -> set[str]:
    return {e.key[0] for e in query.select(s, ad_type, query.plan(constraint)) if e is not None}


def test_machine_ads_are_keyed_by_name_and_ip() -> None:
    s = AdStore()
    s.update("Machine", {"Name": '"slot1@a"', "MyAddress": '"<10.0.0.1:9618>"', "X": "1"})
    s.update("Machine", {"Name": '"slot1@a"', "MyAddress": '"<10.0.0.1:9700>"', "X": "2"})  # same IP, new port
    s.update("Machine", {"Name": '"slot1@a"', "MyAddress": '"<10.0.0.2:9618>"', "X": "3"})
    assert s.count("Machine") == 2
    assert sorted(e.key for e in s.tables["machine"].entries.values()) == [("slot1@a", "10.0.0.1"),
                                                                           ("slot1@a", "10.0.0.2")]
    assert s.tables["machine"].entries[("slot1@a", "10.0.0.1")].get("x") == "2"
    # no Name: Machine plus SlotID, as HTCondor
    s.update("Machine", {"Machine": '"b"', "SlotID": "3", "MyAddress": '"<10.0.0.3:1>"'})
    assert ("b:3", "10.0.0.3") in s.tables["machine"].entries


def test_submitters_are_keyed_by_name_and_schedd_and_the_rest_by_name() -> None:
    s = AdStore()
    for schedd in ("s1", "s2"):
        s.update("Submitter", {"Name": '"alice@x"', "ScheddName": f'"{schedd}"', "MyAddress": '"<1.2.3.4:5>"'})
    assert s.count("Submitter") == 2
    s.update("Accounting", {"Name": '"alice@x"', "NegotiatorName": '"n1"'})
    s.update("Accounting", {"Name": '"alice@x"', "NegotiatorName": '"n2"'})
    assert s.count("Accounting") == 2
    s.update("DaemonMaster", {"Machine": '"host"'})  # a master without Name is keyed by Machine
    s.update("Negotiator", {"Name": '"neg"'})
    s.update("Negotiator", {"Name": '"neg"', "V": "2"})
    assert s.count("Negotiator") == 1 and s.count("DaemonMaster") == 1
    with pytest.raises(UserError, match="needs a Name"):
        s.update("Generic", {"MyType": '"Generic"'})
    # invalidation by name (and IP) and, for submitters, by schedd
    assert len(s.invalidate("Submitter", schedd_name="s1")) == 1
    assert len(s.invalidate("Negotiator", name="neg")) == 1
    assert s.count("Submitter") == 1 and s.count("Negotiator") == 0


def test_names_that_differ_only_in_case_keep_the_last_value() -> None:
    s = AdStore()
    e = s.update("Generic", {"Name": '"g"', "Foo": "1", "FOO": "2"})
    assert s.wire(e)["Foo"] == "2" and "FOO" not in s.wire(e)


def counted(s: AdStore, seqs: list[int], start: int = 100, name: str = "slot1@a") -> store.Entry:
    e = None
    for n in seqs:
        e = s.update("Machine", {"Name": f'"{name}"', "MyAddress": '"<1.1.1.1:1>"',
                                 "UpdateSequenceNumber": str(n), "DaemonStartTime": str(start)})
    assert e is not None
    return e


def test_update_statistics_count_gaps_as_lost_but_not_a_restart() -> None:
    s = AdStore(history_size=8)
    e = counted(s, [1, 2, 3])
    assert (e.total, e.sequenced, e.lost) == (3, 2, 0)
    e = counted(s, [6])  # 4 and 5 lost
    assert (e.total, e.sequenced, e.lost) == (6, 5, 2)
    assert s.extras(e)["UpdatesHistory"] == '"0x60"'  # latest ok, the two before it lost
    e = counted(s, [1], start=200)  # the sender restarted: sequence numbers start over, nothing lost
    assert (e.total, e.lost) == (7, 2)
    e = counted(s, [2, 3], start=200)
    assert (e.total, e.sequenced, e.lost) == (9, 7, 2)
    stats = s.statistics()
    assert stats["UpdatesLost_Start"] == 2 and stats["UpdatesTotal"] == 9
    assert stats["UpdatesLostRatio"] == pytest.approx(2 / 9)
    # no sequence number: not counted, no statistics in the ad
    plain = s.update("Machine", {"Name": '"x"', "MyAddress": '"<1.1.1.1:1>"'})
    assert "UpdatesTotal" not in s.extras(plain) and "LastHeardFrom" in s.extras(plain)


def test_updates_history_shifts_as_htcondor_documents() -> None:
    s = AdStore(history_size=8)
    e = counted(s, [1, 2, 3, 5])  # the last ok, the one before lost, the two before that ok: 0100 ....
    assert s.extras(e)["UpdatesHistory"] == '"0x40"'
    shown = []
    for n in range(6, 13):
        e = counted(s, [n])
        shown.append(s.extras(e)["UpdatesHistory"])
    assert shown == ['"0x20"', '"0x10"', '"0x08"', '"0x04"', '"0x02"', '"0x01"', '"0x00"']


def test_a_late_update_is_not_lost_after_all() -> None:
    s = AdStore(history_size=8)
    e = counted(s, [1, 3])
    assert e.lost == 1
    e = counted(s, [2])
    assert (e.lost, e.total) == (0, 3)
    assert s.statistics()["UpdatesLost"] == 0


def test_expired_ads_are_hidden_at_once_and_swept_later() -> None:
    s = AdStore()
    s.update("Generic", {"Name": '"short"', "ClassAdLifetime": "2"}, now=1000.0)
    s.update("Generic", {"Name": '"long"'}, now=1000.0)  # CLASSAD_LIFETIME's default, 900 s
    assert {e.key[0] for e in query.select(s, "Generic", query.plan(None), now=1001.0) if e} == {"short", "long"}
    assert {e.key[0] for e in query.select(s, "Generic", query.plan(None), now=1003.0) if e} == {"long"}
    assert s.expire(now=1003.0) == 1 and s.count("Generic") == 1
    assert s.expire(now=1900.0) == 1 and s.count("Generic") == 0


CONSTRAINTS = [
    None, "HostGroup == 7", "7 == HostGroup", 'State == "unclaimed"', 'State =?= "Unclaimed"',
    'State == "Claimed" && Memory > 1200', "HostGroup == 3 || HostGroup == 9", "Big", "Big && HostGroup == 2",
    'Name2 == "mixed" && HostGroup == 4', 'Name2 =?= "mixed" && HostGroup == 4', "Memory == 1300.0",
    "MY.HostGroup == 11", "HostGroup == 5 && Missing == 3", 'eval("HostGroup") == 6', "Start == true",
    "UpdatesTotal > 1", 'regexp("slot1@host1.*", Name)', "size(MY) > 5 && HostGroup == 1", "HostGroup =?= undefined",
]


@pytest.mark.parametrize("indexed", [False, True])
def test_queries_select_what_evaluating_every_ad_selects(indexed: bool) -> None:
    s = AdStore()
    rng = random.Random(7)
    for i in range(400):
        s.update("Machine", slot(i, UpdateSequenceNumber="1", DaemonStartTime="5"))
    for c in CONSTRAINTS:
        assert selected(s, "Machine", c) == brute(s, "Machine", c), c
    if indexed:
        s.build_indexes()
        assert {i.attr for i in s.tables["machine"].indexes.values() if i.ready} >= {"hostgroup", "state", "name2"}
    # updates move ads between index buckets; some ads lose the attribute, some get expressions
    for n in range(300):
        i = rng.randrange(400)
        changes = {"HostGroup": str(rng.randrange(40)), "State": rng.choice(['"Claimed"', '"Owner"', '"UNCLAIMED"'])}
        if n % 17 == 0:
            changes["HostGroup"] = "3 + 4"
        ad = slot(i, UpdateSequenceNumber=str(n + 2), DaemonStartTime="5", **changes)
        if n % 23 == 0:
            del ad["HostGroup"]
        s.update("Machine", ad)
    for c in CONSTRAINTS:
        assert selected(s, "Machine", c) == brute(s, "Machine", c), c
    if indexed:
        idx = s.tables["machine"].indexes["hostgroup"]
        assert idx.hits > 0 and idx.other  # "3 + 4" texts are always candidates


@pytest.mark.parametrize("small", [query.SMALL, 0])
def test_ads_in_an_exact_bucket_are_not_evaluated_and_still_match_as_evaluation_does(
        small: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Attr == literal`` takes a string or number bucket as it is (the few-candidates list and,
    with SMALL at 0, the filtered walk); texts of other kinds that could equal the literal
    (7.0, "7", 3 + 4, true) still go through evaluation or stay out."""
    monkeypatch.setattr(query, "SMALL", small)
    s = AdStore()
    texts = ["7", "7.0", '"7"', "3 + 4", "true", "1", "1.0", '"ON"', '"on"', "undefined"]
    for i in range(200):
        s.update("Machine", slot(i, HostGroup=texts[i % len(texts)], Flag=texts[-i % len(texts)]))
    s.build_indexes()
    checks = ["HostGroup == 7", "HostGroup == 7.0", 'HostGroup == "7"', "HostGroup == true", "HostGroup == 1",
              'HostGroup == "on"', 'Flag == "On"', "Flag == 7", "HostGroup =?= 7", "HostGroup == 7 && Flag == 1"]
    for c in checks:
        query.want_indexes(s, "Machine", query.plan(c))
    s.build_indexes()
    assert query.plan("HostGroup == 7").exact == "hostgroup"
    assert query.plan('Flag == "On"').exact == "flag"
    assert query.plan("HostGroup == true").exact is None and query.plan("HostGroup == 1").exact is None
    assert query.plan("HostGroup =?= 7").exact is None and query.plan("HostGroup == 7 && Flag == 1").exact is None
    for c in checks:
        assert selected(s, "Machine", c) == brute(s, "Machine", c), c
    assert selected(s, "Machine", "HostGroup == 7")  # the check above is not vacuous


def test_an_index_built_while_updates_come_stays_right() -> None:
    s = AdStore()
    for i in range(300):
        s.update("Machine", slot(i))
    idx = s.tables["machine"].want_index("hostgroup")
    assert idx is not None
    steps = s.build_steps(s.tables["machine"], idx, chunk=50)
    next(steps)
    for i in range(0, 300, 7):  # change ads the build has and has not reached yet, remove some
        s.update("Machine", slot(i, HostGroup="99"))
    for e in list(s.tables["machine"].entries.values())[::31]:
        s.remove(s.tables["machine"], e)
    for _ in steps:
        pass
    assert idx.ready
    assert selected(s, "Machine", "HostGroup == 99") == brute(s, "Machine", "HostGroup == 99")
    assert selected(s, "Machine", "HostGroup == 12") == brute(s, "Machine", "HostGroup == 12")


def test_projection_keeps_the_names_as_sent_and_serves_collector_attributes() -> None:
    s = AdStore()
    e = s.update("Machine", slot(1, UpdateSequenceNumber="4", DaemonStartTime="5"), identity="me@here", method="FS")
    assert s.project(e, ("name", "memory", "nosuch")) == {"Name": '"slot2@host0"', "Memory": "1100"}
    assert s.project(e, ("updatestotal", "authenticatedidentity")) == {"UpdatesTotal": "1",
                                                                      "AuthenticatedIdentity": '"me@here"'}


def test_interning_stops_for_attributes_with_many_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "INTERN_LIMIT", 10)
    s = AdStore()
    for i in range(50):
        s.update("Generic", {"Name": f'"g{i}"', "Counter": str(i), "Kind": '"same"'})
    t = s.tables["generic"]
    assert t.columns["counter"].interner is None and t.columns["kind"].interner is not None
    kinds = {id(e.get("kind")) for e in t.entries.values()}
    assert len(kinds) == 1  # one shared text
    assert sorted(int(e.get("counter")) for e in t.entries.values()) == list(range(50))
