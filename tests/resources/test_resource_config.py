"""Custom machine resources from the config, without daemons: MACHINE_RESOURCE_<Name> as a count
or ids, inventory commands (htcd's gpu_discovery among them, its GPUs simulated because this
machine has none), the slot layout's shares of them, and the values htcd refuses with the knob
named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from htcd.classad import ClassAd
from htcd.config import load
from htcd.errors import UserError
from htcd.negotiator.matchmaker import dynamic_request
from htcd.startd import layout, resources
from htcd.startd.ads import within_resource_limits
from htcd.starter import assigned

TOTALS = {"cpus": 4, "memory": 8000, "disk": 100000}


def config(tmp: Path, text: str):
    top = tmp / "cfg"
    top.write_text(text)
    return load("STARTD", env={"HTCD_CONFIG": str(top)})


def test_count_and_id_list_resources(pool_dir: Path) -> None:
    found = resources.read(config(pool_dir, "MACHINE_RESOURCE_Bandwidth = 100\n"
                                            "MACHINE_RESOURCE_GPUs = CUDA0, CUDA1 CUDA2,CUDA3\n"))
    assert sorted(found) == ["bandwidth", "gpus"]
    bw, gpus = found["bandwidth"], found["gpus"]
    assert (bw.name, bw.count, bw.ids, bw.detected) == ("Bandwidth", 100, None, 100)
    assert (gpus.name, gpus.count, gpus.ids) == ("GPUs", 4, ["CUDA0", "CUDA1", "CUDA2", "CUDA3"])
    assert gpus.detected == "CUDA0,CUDA1,CUDA2,CUDA3"


def test_machine_resource_names_and_offline_ids(pool_dir: Path) -> None:
    found = resources.read(config(pool_dir, "MACHINE_RESOURCE_NAMES = GPUs\nMACHINE_RESOURCE_Cogs = 16\n"
                                            "MACHINE_RESOURCE_GPUs = CUDA0, CUDA1, CUDA2\n"
                                            "OFFLINE_MACHINE_RESOURCE_GPUs = CUDA1\n"))
    assert list(found) == ["gpus"], "MACHINE_RESOURCE_NAMES leaves out the resources it does not list"
    assert (found["gpus"].ids, found["gpus"].count, found["gpus"].offline) == (["CUDA0", "CUDA2"], 2, ["CUDA1"])


@pytest.mark.parametrize(("text", "knob", "reason"), [
    ("MACHINE_RESOURCE_GPUs = -2\n", "MACHINE_RESOURCE_GPUs", "-2 is not a count"),
    ("MACHINE_RESOURCE_Bandwidth = 1.5\n", "MACHINE_RESOURCE_Bandwidth", "1.5 is not a count"),
    ("MACHINE_RESOURCE_GPUs = CUDA0, CUDA0\n", "MACHINE_RESOURCE_GPUs", "names CUDA0 more than once"),
    ("MACHINE_RESOURCE_Cpus = 8\n", "MACHINE_RESOURCE_Cpus", "one of the startd's own resources"),
    ("MACHINE_RESOURCE_INVENTORY_GPUs = /no/such/discovery\n", "MACHINE_RESOURCE_INVENTORY_GPUs",
     "/no/such/discovery does not exist"),
    ("MACHINE_RESOURCE_INVENTORY_Cogs = /bin/echo Cogs=3\n", "MACHINE_RESOURCE_INVENTORY_Cogs",
     "its output has no DetectedCogs attribute"),
    ("MACHINE_RESOURCE_INVENTORY_Cogs = /bin/false\n", "MACHINE_RESOURCE_INVENTORY_Cogs",
     "exited with status 1"),
])
def test_bad_resource_values_are_refused_with_the_knob_file_and_line(pool_dir: Path, text: str, knob: str,
                                                                      reason: str) -> None:
    with pytest.raises(UserError) as err:
        resources.read(config(pool_dir, "# resources\n" + text))
    message = str(err.value)
    assert f"cfg:2: {knob} = " in message and reason in message, message


def test_inventory_command_sets_detected_ids_and_attributes(pool_dir: Path) -> None:
    script = pool_dir / "widgets.sh"
    script.write_text('#!/bin/sh\necho \'DetectedWidgets = "w1, w2, w3"\'\necho \'WidgetColor = "blue"\'\n'
                      'echo \'OfflineWidgets = "w2"\'\n')
    os.chmod(script, 0o755)
    found = resources.read(config(pool_dir, f"MACHINE_RESOURCE_INVENTORY_Widgets = {script}\n"))
    w = found["widgets"]
    assert (w.ids, w.count, w.offline) == (["w1", "w3"], 2, ["w2"]), "Offline<Name> takes w2 out of service"
    assert w.attrs["WidgetColor"] == '"blue"'


def test_feature_gpus_on_a_machine_without_gpus_detects_none(pool_dir: Path) -> None:
    """This machine has no GPU: ``use FEATURE : GPUs`` runs htcd's gpu_discovery, which finds none."""
    found = resources.read(config(pool_dir, "use FEATURE : GPUs\n"))
    assert (found["gpus"].count, found["gpus"].ids, found["gpus"].detected) == (0, None, 0)


def test_feature_gpus_with_simulated_gpus(pool_dir: Path) -> None:
    """GPUs simulated (no GPU on this machine): GPU_DISCOVERY_EXTRA reaches gpu_discovery."""
    found = resources.read(config(pool_dir, "use FEATURE : GPUs\nGPU_DISCOVERY_EXTRA = -simulate:0,4\n"))
    gpus = found["gpus"]
    assert gpus.ids == ["GPU-a0223334", "GPU-b1223334", "GPU-c2223334", "GPU-d3223334"], \
        "the ids of HTCondor's cmd_gpu_discovery test for -simulate:0,4"
    assert 'DeviceName = "GeForce GT 330"' in gpus.attrs["Common"]


def gpu_discovery(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "htcd", "gpu_discovery", *args], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PATH": "/usr/bin:/bin"})


def test_gpu_discovery_command_simulated_and_real() -> None:
    """The GPUs are simulated: this machine has none, so a real run reports DetectedGPUs=0."""
    none = gpu_discovery("-properties")
    assert (none.returncode, none.stdout) == (0, "DetectedGPUs=0\n")
    sim = gpu_discovery("-simulate:0,1,3,2", "-properties", "-not-nested", "-by-index")
    assert sim.returncode == 0, sim.stderr
    ad = ClassAd()
    for line in sim.stdout.splitlines():
        name, _, value = line.partition("=")
        ad.set_expr(name, value)
    assert ad.get_value("DetectedGPUs") == "CUDA0, CUDA1, CUDA2"
    assert ad.get_value("CUDA1DeviceName") == "TITAN RTX" and ad.get_value("CUDA0GlobalMemoryMb") == 1024
    conf = gpu_discovery("-simulate:2,2", "-config")
    assert conf.stdout.splitlines() == ['DetectedGPUs = "GPU-a0223334, GPU-b1223334"', "NUM_DETECTED_GPUs = 2"]
    bad = gpu_discovery("-opencl")
    assert bad.returncode == 1 and "-opencl is not supported" in bad.stderr and "Traceback" not in bad.stderr


def test_slot_types_share_custom_resources(pool_dir: Path) -> None:
    text = ("SLOT_TYPE_1 = cpus=2, gpus=3, bandwidth=50%\nNUM_SLOTS_TYPE_1 = 1\n"
            "SLOT_TYPE_2 = cpus=1\nNUM_SLOTS_TYPE_2 = 2\n")
    specs = layout.layout(config(pool_dir, text), TOTALS, {"gpus": 4, "bandwidth": 100})
    assert [s.custom for s in specs] == [{"gpus": 3, "bandwidth": 50}, {"gpus": 0, "bandwidth": 25},
                                         {"gpus": 0, "bandwidth": 25}], "auto shares split what is left"
    with pytest.raises(UserError, match="ask for 5 gpus but the machine has 4"):
        layout.layout(config(pool_dir, "SLOT_TYPE_1 = gpus=5\nNUM_SLOTS_TYPE_1 = 1\n"), TOTALS, {"gpus": 4})
    with pytest.raises(UserError, match="'many' is not a count"):
        layout.layout(config(pool_dir, "SLOT_TYPE_1 = gpus=many\nNUM_SLOTS_TYPE_1 = 1\n"), TOTALS, {"gpus": 4})
    # HTCondor's example: a named share, and a bare one for every resource not named
    specs = layout.layout(config(pool_dir, "SLOT_TYPE_1 = cogs=50%, 50%\nNUM_SLOTS_TYPE_1 = 1\n"), TOTALS,
                          {"cogs": 16})
    assert (specs[0].cpus, specs[0].memory, specs[0].custom) == (2, 4000, {"cogs": 8})


def test_assigned_environment_as_htcondor_sets_it() -> None:
    knobs = {"ENVIRONMENT_FOR_AssignedGPUs": "GPU_DEVICE_ORDINAL=/(CUDA|OCL)//  CUDA_VISIBLE_DEVICES",
             "ENVIRONMENT_VALUE_FOR_UnAssignedGPUs": "10000",
             "ENVIRONMENT_FOR_AssignedCogs": "VISIBLE_COGS=/^/cog:/"}
    env = assigned.environment({"GPUs": ["CUDA1", "CUDA2"], "Cogs": ["a", "b"]}, knobs.get)
    assert env == {"_CONDOR_AssignedGPUs": "CUDA1,CUDA2", "GPU_DEVICE_ORDINAL": "1,2", "CUDA_VISIBLE_DEVICES": "1,2",
                   "NVIDIA_VISIBLE_DEVICES": "1,2", "_CONDOR_AssignedCogs": "a,b", "VISIBLE_COGS": "cog:a,cog:b"}
    none = assigned.environment({"GPUs": []}, knobs.get)
    assert none == {"GPU_DEVICE_ORDINAL": "10000", "CUDA_VISIBLE_DEVICES": "10000"}, \
        "a job given no GPU must not see them all"
    with pytest.raises(UserError, match="the rewrite must be /pattern/replacement/"):
        assigned.parse_env_specs("CUDA_VISIBLE_DEVICES=CUDA", "ENVIRONMENT_FOR_AssignedGPUs")


def test_matching_compares_custom_requests() -> None:
    """The slot's WithinResourceLimits tests Request<Name> <= <Name>; the negotiator takes the
    job's request out of a partitionable slot's custom resources as out of its cpus."""
    slot = ClassAd({"Cpus": 4, "Memory": 4096, "Disk": 10000, "GPUs": 1, "MachineResources": "Cpus Memory Disk GPUs"})
    slot.set_expr("WithinResourceLimits", within_resource_limits(["GPUs"]))
    job = ClassAd({"RequestCpus": 1, "RequestMemory": 100, "RequestDisk": 10, "RequestGPUs": 2})
    assert slot.eval("WithinResourceLimits", target=job) is False
    job["RequestGPUs"] = 1
    assert slot.eval("WithinResourceLimits", target=job) is True
    del job["RequestGPUs"]
    assert slot.eval("WithinResourceLimits", target=job) is True, "a job asking for no GPU fits"
    job["RequestGPUs"] = 1
    assert dynamic_request(job, slot, {})["GPUs"] == 1


def test_feature_gpus_monitor_runs_only_where_there_are_gpus(pool_dir: Path) -> None:
    """FEATURE : GPUs brings a STARTD_CRON monitor whose CONDITION is TotalGPUs > 0: on a machine
    without GPUs it is not run (and says so once)."""
    import asyncio
    import logging

    from htcd.startd import cron

    jobs = cron.load_jobs(config(pool_dir, "use FEATURE : GPUs\n"), logging.getLogger("test"))
    monitor = next(j for j in jobs if j.name == "GPUs_MONITOR")
    assert monitor.condition == 'TotalGPUs > 0 && OpSys =!= "WINDOWS"'
    seen: list[str] = []
    machine = ClassAd({"TotalGPUs": 0, "OpSys": "LINUX"})
    runner = cron.Cron(logging.getLogger("test"), lambda name, attrs: None,
                       lambda text: seen.append(text) or machine.eval_expr(text) is True)
    asyncio.run(runner._run(monitor))
    assert seen == [monitor.condition] and runner._held_back == {"GPUs_MONITOR"}, "the monitor was not started"
