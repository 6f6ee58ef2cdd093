"""The layouts of `htcd status` and `htcd ping`, checked against output of real HTCondor tools
(condor_status 23/24 and condor_ping), without a pool."""

from __future__ import annotations

import random

from htcd.classad import ClassAd
from htcd.cli import output
from htcd.cli.ping import Item, parse_tokens, render
from htcd.cli.status import sort_ads
from htcd.cli.status_tables import SCHEDDS, SLOTS, SUBMITTERS, compact, readable_mb, state_code

# condor_status of a 4-slot execute node (HTCondor 24), byte for byte
CONDOR_STATUS_4_SLOTS = """\
Name                                         OpSys      Arch   State     Activity LoadAv Mem   ActvtyTime

slot1@nudocker-test-stage5-compute.elkhcloud LINUX      X86_64 Unclaimed Idle      0.000 2048  0+00:00:00
slot2@nudocker-test-stage5-compute.elkhcloud LINUX      X86_64 Unclaimed Idle      0.000 2048  0+00:00:00
slot3@nudocker-test-stage5-compute.elkhcloud LINUX      X86_64 Unclaimed Idle      0.000 2048  0+00:00:00
slot4@nudocker-test-stage5-compute.elkhcloud LINUX      X86_64 Unclaimed Idle      0.000 2048  0+00:00:00

               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle

  X86_64/LINUX     4     0       0         4       0          0      0        0      0

         Total     4     0       0         4       0          0      0        0      0
"""

# condor_status of one big slot: the Mem column grows with its values
CONDOR_STATUS_BIG_MEMORY = """\
Name                                                 OpSys      Arch   State     Activity LoadAv Mem     ActvtyTime

slot1@jupyter-email-3ahorst-2eseverini-40gmail-2ecom LINUX      X86_64 Unclaimed Idle      0.000 257750  0+00:14:02
"""

# condor_status -compact of a machine with one partitionable slot (the last column's stand-in
# text for "no dynamic slots" is printed as is)
CONDOR_STATUS_COMPACT = """\
Machine      Platform       Slots Cpus Gpus  TotalGb FreCpu  FreeGb  CpuLoad ST Jobs/Min MaxSlotGb

8c4670305de5 x64/AlmaLinux9    0     6    0     5.79      6     5.79    0.00 Ui     0.00 *

               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle

x64/AlmaLinux9     1     0       0         1       0          0      0        0      0

         Total     1     0       0         1       0          0      0        0      0
"""


def slot(name: str, **attrs: object) -> ClassAd:
    base: dict[str, object] = {"Name": name, "Machine": name.split("@")[-1], "OpSys": "LINUX", "Arch": "X86_64",
                               "State": "Unclaimed", "Activity": "Idle", "CondorLoadAvg": 0.0, "Memory": 2048,
                               "EnteredCurrentActivity": 1_790_000_000, "MyCurrentTime": 1_790_000_000}
    base.update(attrs)
    return ClassAd(base)


def wire(ad: ClassAd) -> ClassAd:
    """The ad as a tool receives it from the collector (wire texts, parsed on use)."""
    return ClassAd.from_wire(ad.to_wire())


def test_slot_table_and_totals_match_condor_status() -> None:
    ads = [wire(slot(f"slot{i}@nudocker-test-stage5-compute.elkhcloud")) for i in (3, 1, 4, 2)]
    assert SLOTS.render(sort_ads(ads)) == CONDOR_STATUS_4_SLOTS


def test_memory_column_grows_and_activity_time_uses_the_ads_clock() -> None:
    ad = slot("slot1@jupyter-email-3ahorst-2eseverini-40gmail-2ecom", Memory=257750,
              EnteredCurrentActivity=1_790_000_000 - (14 * 60 + 2))
    table = SLOTS.render([wire(ad)])
    assert table.startswith(CONDOR_STATUS_BIG_MEMORY)


def test_totals_count_each_state_per_platform_and_report_malformed_ads() -> None:
    ads = [slot("slot1@a", State="Claimed", Activity="Busy"), slot("slot2@a", State="Owner"),
           slot("slot1@b", Arch="aarch64"), slot("slot1@c", State="Drained", Activity="Retiring"),
           slot("slot1@d", State="Backfill"), slot("slot1@e", State="Bogus")]
    totals = SLOTS.render(sort_ads([wire(a) for a in ads]), only_totals=True)
    lines = totals.splitlines()
    assert lines[0] == ""  # condor_status -total starts with a blank line
    assert lines[1] == "               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle"
    assert " aarch64/LINUX     1     0       0         1       0          0      0        0      0" in lines
    assert "  X86_64/LINUX     4     1       1         0       0          0      1        1      0" in lines
    assert "         Total     5     1       1         1       0          0      1        1      0" in lines
    assert "(Omitted 1 malformed ads in computed attribute totals)" in totals


def test_compact_matches_condor_status() -> None:
    pslot = slot("slot1@8c4670305de5", OpSysAndVer="AlmaLinux9", PartitionableSlot=True, SlotType="Partitionable",
                 NumDynamicSlots=0, TotalSlotCpus=6, TotalSlotGpus=0, TotalSlotMemory=5929, Cpus=6, Memory=5929,
                 TotalLoadAvg=0.0, TotalCpus=6, RecentJobStarts=0)
    assert compact([wire(pslot)]) == CONDOR_STATUS_COMPACT


def test_compact_folds_static_slots_and_rolls_up_dynamic_ones() -> None:
    static = [slot(f"slot{i}@st", OpSysAndVer="Debian12", SlotType="Static", TotalSlotCpus=1, TotalSlotMemory=1024,
                   Cpus=1, Memory=1024, TotalLoadAvg=2.0, TotalCpus=4,
                   State="Claimed" if i == 1 else "Unclaimed", Activity="Busy" if i == 1 else "Idle")
              for i in range(1, 5)]
    pslot = slot("slot1@ps", OpSysAndVer="Debian12", PartitionableSlot=True, SlotType="Partitionable",
                 NumDynamicSlots=2, TotalSlotCpus=8, TotalSlotMemory=8192, Cpus=0, Memory=0, TotalLoadAvg=2.0,
                 TotalCpus=8, ChildState=["Claimed", "Claimed"], ChildActivity=["Busy", "Busy"],
                 ChildMemory=[4096, 4096])
    out = compact(sort_ads([wire(a) for a in [*static, pslot]]))
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:4]}
    # 4 static slots in one row: 3 free cpus and 3 GB, mixed states -> '*'
    assert rows["st"] == ["st", "x64/Debian12", "4S", "1", "1.00", "3", "3.00", "0.50", "**", "_", "1.00"]
    # an exhausted partitionable slot shows its children's state; max child memory 4 GB
    assert rows["ps"] == ["ps", "x64/Debian12", "2", "8", "8.00", "0", "0.00", "0.25", "Cb", "_", "4.00"]
    assert "  x64/Debian12     6     0       3         3" in out  # 1+2 claimed, 3 unclaimed; no exhausted pslot


def test_state_codes() -> None:
    assert state_code("Unclaimed", "Idle") == "Ui"
    assert state_code("Claimed", "Retiring") == "Cr"
    assert state_code("Drained", "Idle") == "Di"


def test_schedd_and_submitter_totals_blocks() -> None:
    schedd = wire(ClassAd({"Name": "ap40.example.org", "Machine": "ap40.example.org", "TotalRunningJobs": 12,
                           "TotalIdleJobs": 3, "TotalHeldJobs": 0}))
    assert SCHEDDS.render([schedd]) == (
        "Name             Machine          RunningJobs   IdleJobs   HeldJobs\n\n"
        "ap40.example.org ap40.example.org          12          3          0\n\n"
        "                TotalRunningJobs      TotalIdleJobs      TotalHeldJobs\n\n"
        "              \n"
        "         Total                12                  3                  0\n")
    subs = [wire(ClassAd({"Name": f"{u}@example.org", "Machine": "ap40", "RunningJobs": r, "IdleJobs": i,
                          "HeldJobs": h})) for u, r, i, h in (("bob", 1, 2, 0), ("alice", 4, 0, 1))]
    lines = SUBMITTERS.render(sort_ads(subs)).splitlines()
    assert lines[5] == "                 RunningJobs   IdleJobs   HeldJobs"  # keys as wide as the longest
    assert lines[7] == "alice@example.org          4          0          1"
    assert lines[8] == "  bob@example.org          1          2          0"
    assert lines[10] == "            Total          5          2          1"


def test_no_ads_prints_nothing() -> None:
    assert SLOTS.render([]) == "" and compact([]) == ""


def test_readable_mb() -> None:
    assert readable_mb(7800) == "7.6 GB" and readable_mb(512) == "512.0 MB" and readable_mb(None) == "??"


def test_natural_order() -> None:
    names = [f"slot{i}@node{n}" for n in (10, 2, 1) for i in (10, 2, 1)]
    ads = sort_ads([wire(slot(n)) for n in names])
    assert [a.get_value("Name") for a in ads] == [f"slot{i}@node{n}" for n in (1, 2, 10) for i in (1, 2, 10)]


def test_autoformat_fast_path_prints_what_evaluation_prints() -> None:
    """Literals printed from their wire text equal the evaluated values, for every kind of value."""
    rnd = random.Random(7)
    values = ['"plain"', '"with \\"quote\\""', '"tab\\there"', "0", "7", "-3", "007", "12345678901234567890", "1.5",
              "1e3", "true", "FALSE", "undefined", "error", "{1, 2}", "[a = 1]", "1 + 2", '"a" + "b"', "Missing",
              'strcat("x", "y")', '""', "true || false"]
    ads = []
    for _ in range(200):
        ad = ClassAd.from_wire({"V": rnd.choice(values), "W": rnd.choice(values)})
        ads.append(ad)
    fast = output.autoformat(ads, ["V", "W"]).splitlines()
    slow = [f"{output.value_text(a, 'V')} {output.value_text(a, 'W')}" for a in ads]
    assert fast == slow
    assert output.autoformat(ads, ["V"]).splitlines() == [output.value_text(a, "V") for a in ads]
    assert output.autoformat([ads[0]], ["NoSuch"]) == "undefined\n"


def test_ping_sentences_table_and_verbose() -> None:
    reply = {"identity": "alice@example.org", "method": "FS", "daemon": "SCHEDD", "name": "ap40",
             "levels": {"WRITE": None, "ADMINISTRATOR": "alice@example.org (authenticated by FS) does not hold "
                                                         "ADMINISTRATOR"}}
    items = parse_tokens(["WRITE", "ADMINISTRATOR"])
    out, err, ok = render(reply, items, "sentence", "<addr>")
    assert out.splitlines() == [
        "WRITE command using (no encryption, no integrity, and FS) succeeded as alice@example.org to schedd ap40.",
        "ADMINISTRATOR command using (no encryption, no integrity, and FS) failed as alice@example.org to schedd ap40."]
    assert not ok and err == "ADMINISTRATOR: alice@example.org (authenticated by FS) does not hold ADMINISTRATOR\n"
    table, _, _ = render(reply, items, "table", "<addr>")
    assert table.splitlines() == [
        "         Instruction Authentication Encryption Integrity Decision Identity",
        "               WRITE             FS       none      none    ALLOW alice@example.org",
        "       ADMINISTRATOR             FS       none      none     DENY alice@example.org"]
    verbose, _, _ = render(reply, items[:1], "verbose", "<addr>", "0.1.0")
    assert "Authorized:                  TRUE" in verbose and "Remote Mapping:              alice@example.org" in verbose
    quiet, _, ok = render(reply, items[:1], "quiet", "<addr>")
    assert quiet == "" and ok


def test_ping_tokens() -> None:
    assert parse_tokens([]) == [Item("WRITE", "WRITE", parse_tokens(["WRITE"])[0].command)]
    assert [i.level for i in parse_tokens(["QUERY_JOBS", "drain_jobs"])] == ["READ", "ADMINISTRATOR"]
    assert len(parse_tokens(["ALL"])) == 9
    try:
        parse_tokens(["FROBNICATE"])
    except Exception as exc:  # UserError is what main prints
        assert 'could not understand TOKEN "FROBNICATE"' in str(exc)
    else:
        raise AssertionError("an unknown token must be refused")


def test_plain_value_reads_literals_as_evaluation_does() -> None:
    texts = ['"x"', '"a\\"b"', "0", "42", "-7", "007", "1.5", "-0.25", "10.", ".5", "1e3", "true", "undefined",
             "1 + 1", "99999999999999999999", '""']
    for text in texts:
        ad = ClassAd.from_wire({"A": text})
        assert output.plain_value(ad, "A", "dflt") == ad.get_value("A", "dflt"), text
    assert output.plain_value(ClassAd(), "A", "dflt") == "dflt"


def test_partitionable_and_dynamic_slots_are_listed_and_counted_like_condor_status() -> None:
    host = "exec.example.org"
    ads = [slot(f"slot1@{host}", PartitionableSlot=True, SlotType="Partitionable", Memory=1024,
                ChildState=["Claimed", "Claimed"]),
           slot(f"slot1_2@{host}", DynamicSlot=True, SlotType="Dynamic", State="Claimed", Activity="Busy"),
           slot(f"slot1_1@{host}", DynamicSlot=True, SlotType="Dynamic", State="Claimed", Activity="Busy"),
           slot(f"slot10@{host}"), slot(f"slot2@{host}")]
    lines = SLOTS.render(sort_ads([wire(a) for a in ads])).splitlines()
    assert [line.split()[0] for line in lines[2:7]] == [f"slot1@{host}", f"slot1_1@{host}", f"slot1_2@{host}",
                                                         f"slot2@{host}", f"slot10@{host}"]
    assert lines[-1] == "         Total     5     0       2         3       0          0      0        0      0"


def test_autoformat_options() -> None:
    ad = ClassAd.from_wire({"Name": '"slot1@x"', "Cpus": "2", "Req": "Cpus > 1"})
    assert output.autoformat([ad], ["Name", "Cpus"], "V") == '"slot1@x" 2\n'
    assert output.autoformat([ad], ["Name", "Req"], "lr") == 'Name = "slot1@x" Req = Cpus > 1\n'
    assert output.autoformat([ad], ["Name", "Req"], ",h") == 'Name,Req\nslot1@x,true\n'
    assert output.autoformat([ad], ["Cpus", "Req"], "t") == "2\ttrue\n"
