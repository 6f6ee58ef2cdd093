"""The matchmaker's grouping of alike slots gives the same choices as evaluating every slot."""

from __future__ import annotations

import random

from htcd.classad import ClassAd, rank, symmetric_match
from htcd.negotiator.matchmaker import Context, Pool, Slot

SLOT_REQ = "START && WithinResourceLimits"
WITHIN = "(MY.Cpus > 0 && (TARGET.RequestCpus ?: 1) <= MY.Cpus && (TARGET.RequestMemory ?: 0) <= MY.Memory)"


def slot_ad(i: int, memory: int, cpus: int = 1, partitionable: bool = False, arch: str = "X86_64") -> ClassAd:
    ad = ClassAd({"Name": f"slot{i}@m{i // 4}", "SlotID": i % 4 + 1, "Memory": memory, "Cpus": cpus,
                  "Disk": 10**7, "Arch": arch, "START": True})
    ad.set_expr("WithinResourceLimits", WITHIN)
    ad.set_expr("Requirements", SLOT_REQ)
    ad.set_expr("Rank", "0")
    if partitionable:
        ad["PartitionableSlot"] = True
    return ad


def job_ad(memory: int, rank_expr: str = "0", arch: str = "X86_64") -> ClassAd:
    ad = ClassAd({"RequestMemory": memory, "RequestCpus": 1, "RequestDisk": 1})
    ad.set_expr("Requirements", f'TARGET.Arch == "{arch}" && TARGET.Memory >= RequestMemory')
    ad.set_expr("Rank", rank_expr)
    return ad


def brute_best(pool: Pool, job: ClassAd) -> float | None:
    best = None
    for s in pool.slots:
        if s.taken or not symmetric_match(job, s.ad):
            continue
        score = (pool.evaluate(job, s, Context()) or ((),))[0]
        best = score if best is None or score > best else best
    return best


def test_grouped_choices_equal_brute_force() -> None:
    rnd = random.Random(7)
    pool = Pool()
    for i in range(120):
        pool.add(Slot(slot_ad(i, rnd.choice([1024, 2048, 4096]), arch=rnd.choice(["X86_64", "ARM"])), f"c{i}"))
    taken = 0
    for _ in range(60):
        job = job_ad(rnd.choice([512, 2000, 3000, 5000]), rnd.choice(["0", "TARGET.Memory"]),
                     rnd.choice(["X86_64", "ARM"]))
        want = brute_best(pool, job)
        got = pool.matcher(job, Context()).next()
        if want is None:
            assert got is None
            continue
        assert got is not None
        slot, reason = got
        assert reason is None and symmetric_match(job, slot.ad)
        assert pool.evaluate(job, slot, Context())[0] == want  # as good as the best slot found one by one
        assert rank(job, slot.ad) == want[1]
        pool.take(slot, job)
        taken += 1
    assert taken > 20
    assert pool.evaluations < 60 * 120  # far fewer evaluations than pairs


def test_a_partitionable_slot_is_carved_and_regrouped() -> None:
    pool = Pool()
    pslot = Slot(slot_ad(0, 4096, cpus=4, partitionable=True), "p")
    pool.add(pslot)
    pool.add(Slot(slot_ad(1, 1024), "s"))
    job = job_ad(1500)
    m = pool.matcher(job, Context())
    seen = []
    while (got := m.next()) is not None:
        seen.append(got[0])
        pool.take(got[0], job)
    # 4096 MB: two 1536 MB dynamic slots (1500 rounded up to 128s), then 1024 MB left, too little
    assert seen == [pslot, pslot]
    assert pslot.ad.get_value("Memory") == 4096 - 2 * 1536 and pslot.ad.get_value("Cpus") == 2
    small = job_ad(1000)
    assert pool.best_for(small) is not None


def test_claimed_slots_are_candidates_by_rank_only_when_the_slot_prefers_the_job() -> None:
    pool = Pool()
    ad = slot_ad(0, 2048)
    ad.set_expr("Rank", 'TARGET.Owner =?= "vip"')
    ad["RemoteOwner"] = "joe"
    pool.add(Slot(ad, "offer", claimed=True, customer="joe@d", current_rank=0.0))
    plain = job_ad(100)
    vip = job_ad(100)
    vip["Owner"] = "vip"
    assert pool.matcher(plain, Context(submitter="amy@d")).next() is None
    got = pool.matcher(vip, Context(submitter="vip@d")).next()
    assert got is not None and got[1] == "rank"
