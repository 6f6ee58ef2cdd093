"""The slot ads of a live startd: facts from the machine, slot types, STARTD_ATTRS, STARTD_CRON,
attribute-provider plugins and DC_QUERY_SELF."""

from __future__ import annotations

import socket
import subprocess
import sys

import psutil
from pooltools import wait_for
from startd.startd_tools import call_startd, script, slot_ads

from htcd.classad import ClassAd


def test_slot_ads_describe_the_machine(make_pool) -> None:
    pool = make_pool({"NUM_CPUS": "4", "MEMORY": "2000", "SLOT_TYPE_1": "cpus=2, memory=50%, disk=1/2",
                      "NUM_SLOTS_TYPE_1": "1", "SLOT_TYPE_2": "auto", "NUM_SLOTS_TYPE_2": "2",
                      "STARTD_ATTRS": "Color, Size", "STARTD_EXPRS": "Wide", "Color": '"blue"',
                      "SLOT2_Color": '"red"', "Size": "Cpus * 10", "Wide": "(Cpus > 1)",
                      "SLOT3_STARTD_ATTRS": "Only3", "Only3": "True"}, slots=3)
    ads = slot_ads(pool)
    assert sorted(ads) == ["slot1", "slot2", "slot3"]
    s1, s2, s3 = ads["slot1"], ads["slot2"], ads["slot3"]
    assert [(a.get_value("Cpus"), a.get_value("Memory")) for a in (s1, s2, s3)] == [(2, 1000), (1, 500), (1, 500)]
    assert s1.get_value("Disk") == 2 * s2.get_value("Disk") == 2 * s3.get_value("Disk")
    assert [a.get_value("SlotTypeID") for a in (s1, s2, s3)] == [1, 2, 2]
    assert all(a.get_value("SlotType") == "Static" and a.get_value("TotalSlots") == 3 for a in (s1, s2, s3))
    vm = psutil.virtual_memory().total // (1024 * 1024)
    for ad in (s1, s2, s3):
        assert (ad.get_value("TotalCpus"), ad.get_value("TotalMemory")) == (4, 2000)
        assert (ad.get_value("DetectedCpus"), ad.get_value("DetectedMemory")) == (psutil.cpu_count(), vm)
        assert ad.get_value("OpSys") == "LINUX" and ad.get_value("OpSysAndVer") == \
            f"{ad.get_value('OpSysName')}{ad.get_value('OpSysMajorVer')}"
        assert isinstance(ad.get_value("KeyboardIdle"), int) and isinstance(ad.get_value("ConsoleIdle"), int)
        assert ad.get_value("KeyboardIdle") <= ad.get_value("ConsoleIdle")
        assert isinstance(ad.get_value("TotalLoadAvg"), float) and ad.get_value("CondorLoadAvg") == 0.0
        assert ad.get_value("StartdIpAddr") == ad.get_value("MyAddress")
        assert ad.get_value("Machine") == (pool.htcd("config_val", "FULL_HOSTNAME").stdout.strip() or socket.getfqdn())
        assert ad.expr_text("Requirements") == "START && WithinResourceLimits" and ad.get_value("Start") is True
        assert ad.get_value("State") == "Unclaimed" and ad.get_value("IsOwner") is False
    assert [a.get_value("Color") for a in (s1, s2, s3)] == ["blue", "red", "blue"], "SLOT2_Color wins for slot2"
    assert [a.get_value("Size") for a in (s1, s2, s3)] == [20, 10, 10], "STARTD_ATTRS are expressions"
    assert s1.get_value("Wide") is True and s2.get_value("Wide") is False
    assert s3.get_value("Only3") is True and "Only3" not in s1
    published = pool.htcd("status", "-af", "Name", "Color", "Cpus").stdout.split("\n")
    assert any(line.startswith("slot2@") and " red 1" in line for line in published)


def test_dc_query_self_answers_with_the_slot_ads(pool) -> None:
    wires = call_startd(pool, "DC_QUERY_SELF")
    names = sorted(str(ClassAd.from_wire(w).get_value("Name")).split("@")[0] for w in wires)
    assert names == ["slot1", "slot2"]
    assert all(ClassAd.from_wire(w).get_value("MyType") == "Machine" for w in wires)


def test_a_bad_slot_layout_stops_the_startd_with_file_and_line(make_pool) -> None:
    pool = make_pool({"SLOT_TYPE_1": "cpus=99", "NUM_SLOTS_TYPE_1": "1"}, start=False)
    proc = subprocess.run([sys.executable, "-m", "htcd", "startd", "-f"], env=pool.env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"{pool.config_file}:" in proc.stderr and "SLOT_TYPE_1 = cpus=99: the slot types (SLOT_TYPE_1) ask " \
        "for 99 cpus but the machine has 2" in proc.stderr


CRON = """#!/bin/sh
echo "Temperature = 40 + 2"
echo "Broken = (1 +"
echo "Zone = \\"$ZONE\\""
"""
STREAM = """#!/bin/sh
n=0
while true; do
  n=$((n + 1))
  echo "Beat = $n"
  echo "-"
  sleep 0.3
done
"""


def test_startd_cron_publishes_attributes_and_survives_bad_scripts(make_pool) -> None:
    pool = make_pool(start=False)
    probe = script(pool, "probe.sh", CRON)
    stream = script(pool, "stream.sh", STREAM)
    failing = script(pool, "failing.sh", "#!/bin/sh\necho Half = 1\necho oops >&2\nexit 3\n")
    hanging = script(pool, "hanging.sh", "#!/bin/sh\necho $$ > {dir}/hang.pid\nexec sleep 600\n")
    pool.config_file.write_text(pool.config_file.read_text() + f"""
STARTD_CRON_JOBLIST = probe stream failing hanging
STARTD_CRON_probe_EXECUTABLE = {probe}
STARTD_CRON_probe_PERIOD = 1
STARTD_CRON_probe_PREFIX = Cron_
STARTD_CRON_probe_ENV = ZONE=north
STARTD_CRON_stream_EXECUTABLE = {stream}
STARTD_CRON_stream_MODE = WaitForExit
STARTD_CRON_stream_PERIOD = 1
STARTD_CRON_failing_EXECUTABLE = {failing}
STARTD_CRON_failing_PERIOD = 1
STARTD_CRON_hanging_EXECUTABLE = {hanging}
STARTD_CRON_hanging_PERIOD = 2
STARTD_CRON_hanging_KILL = true
""")
    pool.start()
    ad = wait_for(lambda: (a := slot_ads(pool).get("slot1")) is not None and "Cron_Temperature" in a and a, 30,
                  "the cron attribute")
    assert ad.get_value("Cron_Temperature") == 42 and ad.get_value("Cron_Zone") == "north"
    assert "Cron_Broken" not in ad and "Half" not in ad, "bad lines and failed runs publish nothing"
    first = ad.get_value("Beat")
    wait_for(lambda: slot_ads(pool)["slot1"].get_value("Beat") > first, 30, "a WaitForExit script's next ad")
    hung = pool.jobs_dir / "hang.pid"
    first = int(wait_for(lambda: hung.exists() and hung.read_text().strip(), 30, "the hanging script"))
    wait_for(lambda: "STARTD_CRON job hanging still runs after its period of 2 s: killing it"
             in pool.log("StartLog"), 30, "the hanging script to be killed")
    wait_for(lambda: not _alive(first), 30, "the hanging script's process to be gone")
    log = pool.log("StartLog")
    assert "STARTD_CRON job failing exited with status 3: oops" in log
    assert "STARTD_CRON job probe: " in log, "the line that does not parse is reported"
    call_startd(pool, "PING")  # the startd kept answering all along
    assert slot_ads(pool)["slot1"].get_value("State") == "Unclaimed"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


PLUGIN = '''
from htcd.hookspecs import hookimpl

@hookimpl
def htcd_machine_attributes(config):
    return {"HasWidget": True, "WidgetCount": 3, "WidgetNames": ["a", "b"]}
'''
BROKEN = '''
from htcd.hookspecs import hookimpl

@hookimpl
def htcd_machine_attributes(config):
    raise RuntimeError("widget probe failed")
'''


def test_attribute_provider_plugins(make_pool) -> None:
    pool = make_pool(start=False)
    site = pool.dir / "site"
    site.mkdir()
    (site / "widget_provider.py").write_text(PLUGIN)
    (site / "broken_provider.py").write_text(BROKEN)
    dist = site / "widget_provider-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: widget-provider\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[htcd]\nwidget = widget_provider\nbroken = broken_provider\n")
    pool.env["PYTHONPATH"] = str(site)
    pool.start()
    ad = slot_ads(pool)["slot1"]
    assert ad.get_value("HasWidget") is True and ad.get_value("WidgetCount") == 3
    assert ad.get_value("WidgetNames") == ["a", "b"]
    assert "plugin broken disabled: htcd_machine_attributes raised RuntimeError('widget probe failed')" \
        in pool.log("StartLog")
    script(pool, "t.sh", "#!/bin/sh\necho widget\n")
    pool.submit("executable = t.sh\noutput = t.out\nrequirements = TARGET.HasWidget && TARGET.WidgetCount >= 3\n"
                "queue\n")
    wait_for(lambda: (pool.jobs_dir / "t.out").exists(), 60, "a job that needs the provided attributes")
