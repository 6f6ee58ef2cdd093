"""The -better-analyze Requirements analysis: hand-built pools, and counts checked against classad2."""

from __future__ import annotations

import os
import random

import pytest

os.environ["CONDOR_CONFIG"] = "/dev/null"
os.environ["TZ"] = "UTC"
htcondor2 = pytest.importorskip("htcondor2")  # switches classad2 to daemon semantics; must come first
classad2 = pytest.importorskip("classad2")

from htcd.classad import ClassAd, parse_ad, parse_expr, symmetric_match  # noqa: E402
from htcd.classad.analyze import analyze, conjuncts  # noqa: E402

JOB = """[ Owner = "alice"; User = "alice@pool"; RequestMemory = 4096; DiskUsage = 10;
  RequestDisk = DiskUsage; RequestCpus = 1;
  Requirements = ((TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX")) && (TARGET.Disk >= RequestDisk)
                 && (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus) ]"""


def slot(name: str, memory: int = 8192, state: str = "Unclaimed", start: str = "true", **extra: object) -> ClassAd:
    ad = parse_ad(f'[ Name = "{name}"; Arch = "X86_64"; OpSys = "LINUX"; Disk = 1000; Cpus = 1; '
                  f'Memory = {memory}; State = "{state}"; START = {start}; Requirements = START ]')
    for k, v in extra.items():
        ad[k] = v
    return ad


def test_conjuncts_split_through_parentheses() -> None:
    e = parse_expr('((A == 1 && (B == 2))) && (C || D) && ((E))')
    assert [str(c) for c in conjuncts(e)] == ["A == 1", "B == 2", "C || D", "E"]
    assert [str(c) for c in conjuncts(parse_expr("(X > 1)"))] == ["X > 1"]


def test_conditions_counted_and_reduced_with_the_jobs_values() -> None:
    job = parse_ad(JOB)
    a = analyze(job, [slot("s1", 2048), slot("s2", 3072), slot("s3", 1024)])
    assert [c.text for c in a.conditions] == [
        'TARGET.Arch == "X86_64"', 'TARGET.OpSys == "LINUX"', "TARGET.Disk >= RequestDisk",
        "TARGET.Memory >= RequestMemory", "TARGET.Cpus >= RequestCpus"]
    assert [c.reduced for c in a.conditions][2:] == ["TARGET.Disk >= 10", "TARGET.Memory >= 4096",
                                                     "TARGET.Cpus >= 1"]
    assert [c.matched for c in a.conditions] == [3, 3, 3, 0, 3]
    assert a.job_attributes == [("DiskUsage", "10"), ("RequestCpus", "1"), ("RequestDisk", "DiskUsage"),
                                ("RequestMemory", "4096")], "by name, including those reached through others"
    assert "Owner" not in dict(a.job_attributes), "only attributes the Requirements refers to"
    mem = a.conditions[3]
    assert mem.matched_without == 3 and mem.suggestion == "MODIFY TO 3072"
    assert a.best_removal is mem
    assert a.verdict == "no slot has Memory >= 4096: the largest has 3072"
    assert a.summary.rejected_by_job == 3 and a.summary.available == 0


def test_summary_buckets_like_htcondor() -> None:
    job = parse_ad(JOB)
    slots = [
        slot("small", 1024),  # the job refuses it
        slot("picky", start='TARGET.Owner == "bob"'),  # it refuses the job
        slot("mine", state="Claimed", RemoteOwner="alice", RemoteUser="alice@pool"),
        slot("theirs", state="Claimed", RemoteOwner="bob", RemoteUser="bob@pool"),
        slot("free1"), slot("free2"),
    ]
    s = analyze(job, slots).summary
    assert (s.slots, s.rejected_by_job, s.reject_job, s.running_yours, s.serving_others, s.available) == \
        (6, 1, 1, 1, 1, 2)
    assert s.slot_rejects_job == 1
    assert s.running_yours + s.serving_others + s.available == sum(symmetric_match(job, x) for x in slots)


def test_undefined_conditions_are_counted_and_explained() -> None:
    job = parse_ad('[ Requirements = TARGET.HasGPU && TARGET.Memory > 0 ]')
    a = analyze(job, [slot("a"), slot("b", HasGPU=False), slot("c")])
    gpu = a.conditions[0]
    assert (gpu.matched, gpu.undefined) == (0, 2)
    assert "TARGET.HasGPU" in gpu.reason and "2 of them" in gpu.reason
    assert a.verdict == gpu.reason


def test_no_single_condition_fails_but_together_they_do() -> None:
    job = parse_ad('[ Requirements = TARGET.Memory >= 4096 && TARGET.Cpus >= 4 ]')
    slots = [slot("big-mem", 8192), slot("many-cpus", 1024, Cpus=8), slot("many-cpus2", 1024, Cpus=8)]
    a = analyze(job, slots)
    assert [c.matched for c in a.conditions] == [1, 2]
    assert [c.matched_without for c in a.conditions] == [2, 1]
    assert a.best_removal is a.conditions[0]
    assert a.conditions[0].suggestion == "MODIFY TO 1024"
    assert a.verdict.startswith("each condition matches some slot, but no slot satisfies them all together")
    assert "TARGET.Memory >= 4096" in a.verdict


def test_string_equality_reason_lists_what_slots_have() -> None:
    job = parse_ad('[ Requirements = TARGET.Arch == "ARM64" ]')
    a = analyze(job, [slot("a"), slot("b")])
    assert a.verdict == 'no slot has Arch == "ARM64": the slots have Arch = "X86_64" (2)'
    assert a.conditions[0].suggestion == 'MODIFY TO "X86_64"'


def test_constant_on_the_left_and_less_than() -> None:
    job = parse_ad('[ Requirements = 100 > TARGET.Memory ]')
    a = analyze(job, [slot("a", 512), slot("b", 256)])
    assert a.verdict == "no slot has Memory < 100: the smallest has 256"
    assert a.conditions[0].suggestion == "MODIFY TO 257"
    real = analyze(parse_ad('[ Requirements = TARGET.Load > 2.5 ]'), [slot("a", Load=1.5)])
    assert real.conditions[0].suggestion == "REMOVE", "no 'one step past' a real number"
    assert real.verdict == "no slot has Load > 2.5: the largest has 1.5"


def test_attributes_that_read_the_slot_are_not_reduced() -> None:
    job = parse_ad('[ Want = TARGET.Memory / 2; Fixed = 7; Requirements = Want > Fixed && MY.Fixed < 9 ]')
    a = analyze(job, [slot("a")])
    assert [c.reduced for c in a.conditions] == ["Want > 7", "7 < 9"]
    assert [c.matched for c in a.conditions] == [1, 1]


def test_a_very_long_condition_is_counted_and_shown_as_written() -> None:
    chain = " || ".join(f"TARGET.Slot == {i}" for i in range(5000))
    job = parse_ad(f"[ Requirements = TARGET.Memory > 0 && ({chain}) ]")
    a = analyze(job, [slot("a", Slot=4999), slot("b", Slot=-1)])
    assert [c.matched for c in a.conditions] == [2, 1]
    assert a.conditions[1].reduced == a.conditions[1].text == chain


def test_verdicts_for_degenerate_cases() -> None:
    assert analyze(parse_ad("[ A = 1 ]"), [slot("a")]).verdict.startswith("the job has no Requirements")
    none = analyze(parse_ad(JOB), [])
    assert none.summary.slots == 0 and "no slots" in none.verdict
    ok = analyze(parse_ad('[ Requirements = TARGET.Memory > 0 ]'), [slot("a")])
    assert ok.summary.available == 1 and ok.verdict.startswith("1 slot can run the job now")
    refused = analyze(parse_ad('[ Requirements = TARGET.Memory > 0 ]'),
                      [slot("a", start="false"), slot("b", start="false"), slot("c", start="TARGET.X")])
    assert refused.verdict == ("3 slots satisfy your job's requirements, but their own Requirements (START) "
                               "refuse the job (2 have START = false)")
    held = analyze(parse_ad('[ JobStatus = 5; Requirements = TARGET.Memory > 0 ]'), [slot("a")])
    assert held.verdict.startswith("the job is held") and held.summary.available == 1
    busy = analyze(parse_ad('[ Owner = "alice"; Requirements = true ]'),
                   [slot("a", state="Claimed", RemoteOwner="bob")])
    assert busy.verdict.startswith("every slot that matches is busy (1 are serving other users)")


# ---------------------------------------------------------------- against HTCondor's own library

DIFF_JOB = """[ Owner = "alice"; RequestMemory = ifThenElse(MemoryUsage =!= undefined, MemoryUsage, 1500);
  RequestCpus = 2; Site = "east"; Weights = { 1, 2, 3 };
  Requirements = (TARGET.Arch == "x86_64") && (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus)
    && ((TARGET.Site == MY.Site) || TARGET.AnySite) && TARGET.HasGPU =!= true && isUndefined(TARGET.Broken)
    && (TARGET.LoadAvg < 0.5 ? true : TARGET.Cpus > 4) && member(TARGET.Zone, Weights)
    && regexp("^node[0-9]+$", TARGET.Machine) && (TARGET.Kflops ?: 1) && Disk / 1024 > 2
    && stringListMember("vanilla", TARGET.StarterAbilityList) ]"""


SIMPLE_JOB = """[ Owner = "alice"; RequestMemory = 1024; RequestCpus = 2;
  Requirements = TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus && TARGET.Arch == "x86_64" ]"""


def _random_slot(rng: random.Random, i: int) -> str:
    attrs = [f'Name = "slot{i}"', f'Machine = "{rng.choice(["node", "node12", "login3", "Node7"])}"']
    maybe = {
        "Arch": lambda: rng.choice(['"X86_64"', '"x86_64"', '"aarch64"', "1"]),
        "Memory": lambda: str(rng.choice([512, 1024, 1500, 2048, 16384])),
        "MemoryUsage": lambda: str(rng.choice([100, 3000])),
        "Cpus": lambda: str(rng.randint(0, 8)),
        "Site": lambda: rng.choice(['"east"', '"EAST"', '"west"']),
        "AnySite": lambda: rng.choice(["true", "false", "undefined", "1"]),
        "HasGPU": lambda: rng.choice(["true", "false", "2"]),
        "Broken": lambda: rng.choice(["1", "undefined", "error"]),
        "LoadAvg": lambda: rng.choice(["0.1", "0.9", '"x"']),
        "Zone": lambda: str(rng.randint(0, 4)),
        "Kflops": lambda: rng.choice(["0", "5", "undefined"]),
        "Disk": lambda: rng.choice(["1000", "100000", "1.5e6"]),
        "StarterAbilityList": lambda: rng.choice(['"vanilla,docker"', '"docker"']),
    }
    for name, make in maybe.items():
        if rng.random() < 0.8:
            attrs.append(f"{name} = {make()}")
    attrs.append("Requirements = " + rng.choice(["true", "TARGET.RequestCpus <= 2", 'TARGET.Owner == "bob"']))
    return "[ " + "; ".join(attrs) + " ]"


def _truthy(v: object) -> bool:
    return v is True or (type(v) in (int, float) and v != 0)


@pytest.mark.parametrize("job_text", [DIFF_JOB, SIMPLE_JOB], ids=["many-conditions", "simple"])
def test_counts_match_classad2(job_text: str) -> None:
    rng = random.Random(20261123)
    texts = [_random_slot(rng, i) for i in range(400)]
    job, o_job = parse_ad(job_text), classad2.ClassAd(job_text)
    slots, o_slots = [parse_ad(t) for t in texts], [classad2.ClassAd(t) for t in texts]
    a = analyze(job, slots)
    assert len(a.conditions) == (12 if job_text is DIFF_JOB else 3)
    for c in a.conditions:
        tree = classad2.ExprTree(c.text)
        values = [tree.eval(o_job, s) for s in o_slots]
        assert c.matched == sum(_truthy(v) for v in values), c.text
        assert c.undefined == sum(isinstance(v, classad2.Value) for v in values), c.text
        reduced = classad2.ExprTree(c.reduced)
        assert [_truthy(reduced.eval(o_job, s)) for s in o_slots] == [_truthy(v) for v in values], \
            f"{c.reduced} must decide each slot as {c.text} does"
        assert 0 < c.matched < len(slots), f"{c.text}: the pool should split on every condition"
    o_match = sum(o_job.symmetricMatch(s) for s in o_slots)
    if job_text is SIMPLE_JOB:
        assert o_match > 0, "some slots should match both ways"
    s = a.summary
    assert s.running_yours + s.serving_others + s.available == o_match
    # classad2's x.matches(y) is y's Requirements against x
    assert s.slots - s.rejected_by_job == sum(x.matches(o_job) for x in o_slots)
    assert s.slot_rejects_job == sum(not o_job.matches(x) for x in o_slots)


def test_condition_text_is_htcondors_unparse() -> None:
    job = parse_ad(DIFF_JOB)
    for c in analyze(job, []).conditions:
        ad = classad2.ClassAd()
        ad["x"] = classad2.ExprTree(c.text)
        assert repr(ad) == f"[ x = {c.text} ]"
