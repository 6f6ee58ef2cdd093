"""The startd's pure parts: slot layout, machine facts, STARTD_CRON parsing, the state machine's decisions."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import psutil
import pytest

from htcd.classad import ClassAd
from htcd.config import load
from htcd.errors import UserError
from htcd.startd import cron, layout, machine
from htcd.startd.slot import (
    BUSY,
    CLAIMED,
    IDLE,
    KILLING,
    OWNER,
    PREEMPTING,
    RETIRING,
    SUSPENDED,
    UNCLAIMED,
    VACATING,
    Claim,
    Slot,
)
from htcd.startd.states import Drain, Machine, Policy, decide
from htcd.version import os_release

TOTALS = {"cpus": 4, "memory": 8000, "disk": 100000}
LOG = logging.getLogger("test-startd")


def config(tmp: Path, text: str):
    top = tmp / "cfg"
    top.write_text(text)
    return load("STARTD", env={"HTCD_CONFIG": str(top)})


def test_default_layout_is_a_slot_per_cpu(pool_dir: Path) -> None:
    specs = layout.layout(config(pool_dir, ""), TOTALS)
    assert [(s.cpus, s.memory, s.disk, s.partitionable) for s in specs] == [(1, 2000, 25000, False)] * 4
    specs = layout.layout(config(pool_dir, "NUM_SLOTS = 2\n"), TOTALS)
    assert [(s.cpus, s.memory) for s in specs] == [(2, 4000)] * 2


def test_slot_types_with_amounts_percentages_fractions_and_auto(pool_dir: Path) -> None:
    cfg = config(pool_dir, "SLOT_TYPE_1 = cpus=2, memory=25%, disk=1/4\nNUM_SLOTS_TYPE_1 = 1\n"
                           "SLOT_TYPE_2 = cpus=1, ram=1G\nNUM_SLOTS_TYPE_2 = 2\nNUM_SLOTS = 9\n")
    specs = layout.layout(cfg, TOTALS)
    assert [(s.type_id, s.cpus, s.memory, s.disk) for s in specs] == [
        (1, 2, 2000, 25000), (2, 1, 1024, 37500), (2, 1, 1024, 37500)], "NUM_SLOTS is ignored once types exist"
    specs = layout.layout(config(pool_dir, "SLOT_TYPE_3 = 1/2\nNUM_SLOTS_TYPE_3 = 2\n"), TOTALS)
    assert [(s.cpus, s.memory, s.disk) for s in specs] == [(2, 4000, 50000)] * 2


def test_partitionable_slot_metaknob(pool_dir: Path) -> None:
    specs = layout.layout(config(pool_dir, "use FEATURE : PartitionableSlot\n"), TOTALS)
    assert [(s.cpus, s.memory, s.disk, s.partitionable) for s in specs] == [(4, 8000, 100000, True)]
    specs = layout.layout(config(pool_dir, "use FEATURE : PartitionableSlot(2, 50%)\n"), TOTALS)
    assert [(s.type_id, s.cpus, s.memory, s.partitionable) for s in specs] == [(2, 2, 4000, True)]


@pytest.mark.parametrize(("text", "where", "reason"), [
    ("SLOT_TYPE_1 = cpus=5\nNUM_SLOTS_TYPE_1 = 1\n", "1: SLOT_TYPE_1", "ask for 5 cpus but the machine has 4"),
    ("SLOT_TYPE_1 = cpus=3\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_2 = cpus=auto\nNUM_SLOTS_TYPE_2 = 2\n",
     "3: SLOT_TYPE_2", "no cpus is left for its auto share"),
    ("SLOT_TYPE_1 = gpus=2\nNUM_SLOTS_TYPE_1 = 1\n", "1: SLOT_TYPE_1", "gpus is not a resource of this machine"),
    ("SLOT_TYPE_1 = memory=lots\nNUM_SLOTS_TYPE_1 = 1\n", "1: SLOT_TYPE_1", "is not an amount"),
    ("SLOT_TYPE_1 = cpus=150%\nNUM_SLOTS_TYPE_1 = 1\n", "1: SLOT_TYPE_1", "not a percentage between 0 and 100"),
    ("SLOT_TYPE_1 = cpus=1/8\nNUM_SLOTS_TYPE_1 = 1\n", "1: SLOT_TYPE_1", "gives a slot no cpus"),
])
def test_bad_slot_types_name_the_file_and_line(pool_dir: Path, text: str, where: str, reason: str) -> None:
    with pytest.raises(UserError) as err:
        layout.layout(config(pool_dir, text), TOTALS)
    assert reason in str(err.value)
    assert str(err.value).startswith(f"{pool_dir / 'cfg'}:{where} = ")


def test_machine_facts_come_from_the_machine(pool_dir: Path) -> None:
    cfg = config(pool_dir, f"EXECUTE = {pool_dir}\nRESERVED_MEMORY = 100\n")
    facts = machine.detect(cfg)
    detected = psutil.virtual_memory().total // (1024 * 1024)
    assert facts["DetectedCpus"] == psutil.cpu_count() and facts["DetectedMemory"] == detected
    assert facts["TotalMemory"] == detected - 100, "RESERVED_MEMORY is kept back"
    assert facts["TotalCpus"] == psutil.cpu_count()
    assert 0 < int(facts["TotalDisk"]) <= os.statvfs(pool_dir).f_bavail * os.statvfs(pool_dir).f_frsize // 1024 + 1024
    assert facts["OpSys"] == "LINUX" and facts["Arch"] in ("X86_64", "aarch64", "ppc64le", "INTEL")
    overridden = machine.detect(config(pool_dir, f"EXECUTE = {pool_dir}\nNUM_CPUS = 7\nMEMORY = 1234\nDISK = 99\n"))
    assert (overridden["TotalCpus"], overridden["TotalMemory"], overridden["TotalDisk"]) == (7, 1234, 99)


def test_os_attributes_as_htcondor_names_them(pool_dir: Path) -> None:
    release = pool_dir / "os-release"
    release.write_text('NAME="Debian GNU/Linux"\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
    attrs = machine.os_attributes(os_release(str(release)))
    assert attrs["OpSysName"] == "Debian" and attrs["OpSysMajorVer"] == 12 and attrs["OpSysVer"] == 1200
    assert attrs["OpSysAndVer"] == "Debian12" and attrs["OpSysLongName"] == "Debian GNU/Linux 12 (bookworm)"
    release.write_text('NAME="Red Hat Enterprise Linux"\nVERSION_ID="9.4"\n')
    attrs = machine.os_attributes(os_release(str(release)))
    assert (attrs["OpSysName"], attrs["OpSysAndVer"], attrs["OpSysVer"]) == ("RedHat", "RedHat9", 904)


def test_microarch_levels() -> None:
    v2 = {"lm", "cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"}
    assert machine.microarch(v2) == "x86_64-v2"
    assert machine.microarch(v2 | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}) == "x86_64-v3"
    assert machine.microarch({"lm"}) == "x86_64-v1" and machine.microarch(set()) is None


def test_idle_times_from_device_access_times(pool_dir: Path) -> None:
    console = pool_dir / "console"
    console.write_text("")
    now = time.time()
    os.utime(console, (now - 30, now - 30))
    cfg = config(pool_dir, f"CONSOLE_DEVICES = {console}\n")
    keyboard, idle_console = machine.idle_times(cfg, watching_since=now - 1000, now=now)
    assert idle_console == 30 and keyboard <= 30
    keyboard, idle_console = machine.idle_times(cfg, watching_since=now - 10, now=now)
    assert idle_console == 10, "idleness is not counted from before the startd began watching"
    nothing = config(pool_dir, f"CONSOLE_DEVICES = {pool_dir / 'no-such-device'}\n")
    assert machine.idle_times(nothing, watching_since=now - 77, now=now)[1] >= 77 - 1


def test_cron_job_definitions(pool_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    cfg = config(pool_dir, "STARTD_CRON_JOBLIST = a b c d\n"
                           "STARTD_CRON_a_EXECUTABLE = /bin/a\nSTARTD_CRON_a_PERIOD = 5m\n"
                           "STARTD_CRON_a_ARGS = \"x 'y z'\"\nSTARTD_CRON_a_ENV = K=v;L=w\nSTARTD_CRON_a_KILL = true\n"
                           "STARTD_CRON_a_PREFIX = a_\n"
                           "STARTD_CRON_b_EXECUTABLE = /bin/b\nSTARTD_CRON_b_MODE = OneShot\n"
                           "STARTD_CRON_c_EXECUTABLE = /bin/c\nSTARTD_CRON_c_MODE = Sometimes\nSTARTD_CRON_c_PERIOD = 1\n"
                           "STARTD_CRON_d_PERIOD = 1\n")
    with caplog.at_level(logging.ERROR):
        jobs = cron.load_jobs(cfg, LOG)
    assert [(j.name, j.mode, j.period) for j in jobs] == [("a", "Periodic", 300.0), ("b", "OneShot", 0.0)]
    assert jobs[0].args == ["x", "y z"] and jobs[0].env == {"K": "v", "L": "w"} and jobs[0].kill
    assert "STARTD_CRON job c is not run" in caplog.text and "not one of Periodic, WaitForExit, OneShot" in caplog.text
    assert "STARTD_CRON_d_EXECUTABLE is not defined" in caplog.text
    assert cron.parse_line("  Temp = 40 + 2 ", "x_") == ("x_Temp", "40 + 2")
    for bad in ("no equals sign", "Attr = (1 +", "9x = 1"):
        with pytest.raises((ValueError, UserError)):
            cron.parse_line(bad)


# -- the state machine's decisions ---------------------------------------------------------

def _slot(state: str, activity: str, job: ClassAd | None = None, starter: bool = False) -> Slot:
    slot = Slot(1, "slot1@x", 1, 1000, 1000, state=state, activity=activity)
    if job is not None:
        slot.claim = Claim("id", job, "alice", "alice@x", "sub", 0.0)
    if starter:
        slot.starter = object()  # type: ignore[assignment]
        slot.job_start = time.time() - 100
    return slot


def _decide(slot: Slot, policy: Policy, m: Machine | None = None):
    ad = ClassAd({"State": slot.state, "Activity": slot.activity, "EnteredCurrentActivity": int(slot.entered_activity),
                  "LoadAvg": 0.9})
    policy.add_to(ad, slot.claim.job_ad if slot.claim else None)
    return decide(slot, ad, policy, m or Machine(now=time.time()))


def test_owner_and_unclaimed_follow_is_owner(pool_dir: Path) -> None:
    policy = Policy.from_config(config(pool_dir, "START = FALSE\nIS_OWNER = (START =?= False)\n"), LOG)
    t = _decide(_slot(UNCLAIMED, IDLE), policy)
    assert (t.state, t.activity) == (OWNER, IDLE) and t.reason == "IS_OWNER = (START =?= False) was True"
    assert _decide(_slot(OWNER, IDLE), policy) is None
    default = Policy.from_config(config(pool_dir, "START = FALSE\n"), LOG)
    t = _decide(_slot(OWNER, IDLE), default)
    assert (t.state, t.reason) == (UNCLAIMED, "IS_OWNER = False was False"), "HTCondor's IS_OWNER default is False"


def test_busy_suspends_continues_and_retires(pool_dir: Path) -> None:
    job = ClassAd({"JobUniverse": 5})
    suspend = Policy.from_config(config(pool_dir, "WANT_SUSPEND = True\nSUSPEND = LoadAvg > 0.5\nCONTINUE = False\n"), LOG)
    t = _decide(_slot(CLAIMED, BUSY, job, starter=True), suspend)
    assert (t.state, t.activity) == (CLAIMED, SUSPENDED) and "SUSPEND = LoadAvg > 0.5 was True" in t.reason
    assert _decide(_slot(CLAIMED, SUSPENDED, job, starter=True), suspend) is None
    preempt = Policy.from_config(config(pool_dir, "PREEMPT = True\nMAXJOBRETIREMENTTIME = 1000\n"), LOG)
    t = _decide(_slot(CLAIMED, BUSY, job, starter=True), preempt)
    assert (t.state, t.activity, t.retire_why) == (CLAIMED, RETIRING, "preempt")
    retiring = _slot(CLAIMED, RETIRING, job, starter=True)
    retiring.retire_why = "preempt"
    assert _decide(retiring, preempt) is None, "the job ran 100 s of its 1000 s retirement"
    over = Policy.from_config(config(pool_dir, "PREEMPT = True\nMAXJOBRETIREMENTTIME = 50\nWANT_VACATE = False\n"), LOG)
    t = _decide(retiring, over)
    assert (t.state, t.activity) == (PREEMPTING, KILLING) and "WANT_VACATE = False was False" in t.reason
    job.set_expr("MaxJobRetirementTime", "10")
    t = _decide(retiring, preempt)
    assert (t.state, t.activity) == (PREEMPTING, VACATING), "the job's own MaxJobRetirementTime can only lower it"


def test_a_suspended_job_retires_for_a_shutdown_or_drain(pool_dir: Path) -> None:
    job = ClassAd({"JobUniverse": 5})
    suspend = Policy.from_config(config(pool_dir, "WANT_SUSPEND = True\nSUSPEND = True\nCONTINUE = False\n"), LOG)
    for m, why in ((Machine(now=time.time(), shutdown="graceful"), "shutdown"),
                   (Machine(now=time.time(), drain=Drain("1", "graceful", "", "nothing", None, 0)), "drain")):
        slot = _slot(CLAIMED, SUSPENDED, job, starter=True)
        t = _decide(slot, suspend, m)
        assert (t.state, t.activity, t.retire_why) == (CLAIMED, RETIRING, why), t
        slot.retire_why = why
        t = _decide(slot, suspend, m)
        assert (t.state, t.activity) == (PREEMPTING, VACATING), "MaxJobRetirementTime 0: vacated at once"


def test_vanilla_variants_apply_to_vanilla_jobs(pool_dir: Path) -> None:
    policy = Policy.from_config(config(pool_dir, "PREEMPT = False\nPREEMPT_VANILLA = True\n"), LOG)
    assert _decide(_slot(CLAIMED, BUSY, ClassAd({"JobUniverse": 5}), starter=True), policy).activity == RETIRING
    assert _decide(_slot(CLAIMED, BUSY, ClassAd({"JobUniverse": 7}), starter=True), policy) is None


def test_vacating_turns_to_killing(pool_dir: Path) -> None:
    policy = Policy.from_config(config(pool_dir, "MachineMaxVacateTime = 5\n"), LOG)
    slot = _slot(PREEMPTING, VACATING, ClassAd({}), starter=True)
    assert _decide(slot, policy) is None
    slot.entered_activity -= 6
    t = _decide(slot, policy)
    assert t.activity == KILLING and "MachineMaxVacateTime = 5 (5 s) ran out" in t.reason
    kill = Policy.from_config(config(pool_dir, "KILL = True\n"), LOG)
    assert _decide(_slot(PREEMPTING, VACATING, ClassAd({}), starter=True), kill).reason == "KILL = True was True"
    slot.starter = None
    t = _decide(slot, policy)
    assert (t.state, t.activity, t.end_claim) == (OWNER, IDLE, True), "with the job gone, the claim ends"


def test_claimed_idle_ends_on_worklife_start_and_drain(pool_dir: Path) -> None:
    policy = Policy.from_config(config(pool_dir, "CLAIM_WORKLIFE = 60\n"), LOG)
    slot = _slot(CLAIMED, IDLE, ClassAd({}))
    assert _decide(slot, policy) is None
    slot.claim.start -= 61  # type: ignore[union-attr]
    assert _decide(slot, policy).reason == "CLAIM_WORKLIFE = 60 has passed"
    no_start = Policy.from_config(config(pool_dir, "START = TARGET.Owner == \"bob\"\n"), LOG)
    decision = _decide(_slot(CLAIMED, IDLE, ClassAd({"Owner": "x"})), no_start)
    assert decision.reason == "START = TARGET.Owner == \"bob\" was False"
    drain = Drain("1", "graceful", "maintenance", "nothing", None, int(time.time()))
    t = _decide(_slot(CLAIMED, BUSY, ClassAd({}), starter=True), policy, Machine(now=time.time(), drain=drain))
    assert (t.activity, t.retire_why) == (RETIRING, "drain")
    t = _decide(_slot(UNCLAIMED, IDLE), policy, Machine(now=time.time(), drain=drain))
    assert (t.state, t.activity) == ("Drained", RETIRING) and "maintenance" in t.reason
