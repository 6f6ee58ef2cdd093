"""GPUs and other custom resources on a real pool.  The GPUs are simulated (this machine has
none): the slots hand out ids given by MACHINE_RESOURCE_GPUs, and the jobs report what their
environment says they were given."""

from __future__ import annotations

import os
import subprocess
import sys

from pooltools import wait_for
from startd.startd_tools import events, script, slot_ads

KNOBS = {"NUM_CPUS": "4", "MEMORY": "4096", "POLLING_INTERVAL": "1"}
GPUS = "MACHINE_RESOURCE_GPUs = CUDA0, CUDA1, CUDA2, CUDA3\n"
# Records what the job was given, then waits for go.<n> (or go): no timing guesses.
GPU_JOB = """#!/bin/sh
echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
echo "GPU_DEVICE_ORDINAL=$GPU_DEVICE_ORDINAL"
echo "_CONDOR_AssignedGPUs=$_CONDOR_AssignedGPUs"
grep '^AssignedGPUs' "$_CONDOR_JOB_AD"
grep '^AssignedGPUs' "$_CONDOR_MACHINE_AD" | sed 's/^/machine: /'
echo "$_CONDOR_AssignedGPUs" > {dir}/ids.$1.tmp && mv {dir}/ids.$1.tmp {dir}/ids.$1
while [ ! -e {dir}/go.$1 ] && [ ! -e {dir}/go ]; do sleep 0.1; done
"""


def ids(pool, proc: int) -> list[str]:
    path = pool.jobs_dir / f"ids.{proc}"
    return path.read_text().strip().split(",") if path.exists() else []


def test_two_jobs_get_disjoint_simulated_gpus_and_a_third_gets_the_freed_ones(make_pool) -> None:
    pool = make_pool(KNOBS, "use FEATURE : PartitionableSlot\n" + GPUS, slots=1)
    pslot = slot_ads(pool)["slot1"]
    assert (pslot.get_value("GPUs"), pslot.get_value("TotalGPUs"), pslot.get_value("TotalSlotGPUs")) == (4, 4, 4)
    assert pslot.get_value("AssignedGPUs") == "CUDA0,CUDA1,CUDA2,CUDA3"
    assert pslot.get_value("DetectedGPUs") == "CUDA0,CUDA1,CUDA2,CUDA3"
    assert pslot.get_value("MachineResources") == "Cpus Memory Disk GPUs"
    script(pool, "gpu.sh", GPU_JOB)
    cluster = pool.submit("executable = gpu.sh\narguments = $(Process)\noutput = out.$(Process)\nlog = gpu.log\n"
                          "request_gpus = 2\nrequest_cpus = 1\nrequest_memory = 100\n"
                          "job_machine_attrs = AssignedGPUs\nqueue 3\n")
    wait_for(lambda: len(ids(pool, 0)) == 2 and len(ids(pool, 1)) == 2, 90, "jobs 0 and 1 to start with 2 GPUs each")
    first, second = set(ids(pool, 0)), set(ids(pool, 1))
    assert not first & second and first | second == {"CUDA0", "CUDA1", "CUDA2", "CUDA3"}, (first, second)
    ads = slot_ads(pool)
    assert ads["slot1"].get_value("GPUs") == 0 and ads["slot1"].get_value("AssignedGPUs") is None
    assert sorted(ads["slot1"].get_value("ChildGPUs")) == [2, 2]
    dynamic = sorted(ads[n].get_value("AssignedGPUs") for n in ads if n != "slot1")
    assert dynamic == sorted(",".join(ids(pool, p)) for p in (0, 1))
    assert pool.job_attr(f"{cluster}.2", "JobStatus") == "1", "the third job waits: no GPU is left"
    assert pool.job_attr(f"{cluster}.0", "MachineAttrAssignedGPUs0") == ",".join(ids(pool, 0)), \
        "job_machine_attrs keeps the slot's AssignedGPUs in the schedd's job ad"
    assert not (pool.jobs_dir / "ids.2").exists()

    (pool.jobs_dir / "go.0").touch()
    wait_for(lambda: len(ids(pool, 2)) == 2, 90, "job 2 to start on the GPUs job 0 gave back")
    assert set(ids(pool, 2)) == first, "the third job got the ids the first one returned"
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: events(pool.jobs_dir / "gpu.log").count("005") == 3, 60, "the three jobs to end")
    wait_for(lambda: list(slot_ads(pool)) == ["slot1"], 30, "the dynamic slots to go")
    back = slot_ads(pool)["slot1"]
    assert back.get_value("GPUs") == 4 and back.get_value("AssignedGPUs") == "CUDA0,CUDA1,CUDA2,CUDA3"
    out = (pool.jobs_dir / "out.0").read_text().splitlines()
    cuda = ",".join(sorted(i.removeprefix("CUDA") for i in first))
    assert f"CUDA_VISIBLE_DEVICES={cuda}" in out and f"GPU_DEVICE_ORDINAL={cuda}" in out, out
    assert f"_CONDOR_AssignedGPUs={','.join(sorted(first))}" in out, out
    assert f'AssignedGPUs = "{",".join(sorted(first))}"' in out, "the job's own ad names its GPUs"
    assert f'machine: AssignedGPUs = "{",".join(sorted(first))}"' in out, "so does $_CONDOR_MACHINE_AD"


def test_count_resource_is_carved_and_an_oversized_request_never_matches(make_pool) -> None:
    pool = make_pool(KNOBS, "use FEATURE : PartitionableSlot\nMACHINE_RESOURCE_Bandwidth = 100\n", slots=1)
    script(pool, "gpu.sh", GPU_JOB)
    pool.submit("executable = gpu.sh\narguments = $(Process)\nlog = bw.log\noutput = out.$(Process)\n"
                "request_bandwidth = 60\nrequest_memory = 100\nqueue 2\n")
    wait_for(lambda: (pool.jobs_dir / "ids.0").exists() or (pool.jobs_dir / "ids.1").exists(), 90,
             "one job to start")
    ads = slot_ads(pool)
    dslot = next(ad for n, ad in ads.items() if n != "slot1")
    assert (dslot.get_value("Bandwidth"), dslot.get_value("TotalSlotBandwidth")) == (60, 60)
    assert dslot.get_value("AssignedBandwidth") is None, "a count has no ids to assign"
    assert (ads["slot1"].get_value("Bandwidth"), ads["slot1"].get_value("TotalBandwidth")) == (40, 100)
    running = 0 if (pool.jobs_dir / "ids.0").exists() else 1
    assert not (pool.jobs_dir / f"ids.{1 - running}").exists(), "60 + 60 is more bandwidth than there is"
    (pool.jobs_dir / f"go.{running}").touch()
    wait_for(lambda: (pool.jobs_dir / f"ids.{1 - running}").exists(), 90, "the other job after the first")
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: events(pool.jobs_dir / "bw.log").count("005") == 2, 60, "both jobs to end")


def test_static_slots_split_the_gpu_ids(make_pool) -> None:
    pool = make_pool({**KNOBS, "NUM_CPUS": "2"}, GPUS + "SLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 2\n", slots=2)
    ads = slot_ads(pool)
    assert [(ads[n].get_value("GPUs"), ads[n].get_value("AssignedGPUs")) for n in ("slot1", "slot2")] == \
        [(2, "CUDA0,CUDA1"), (2, "CUDA2,CUDA3")]
    script(pool, "gpu.sh", GPU_JOB)
    pool.submit("executable = gpu.sh\narguments = $(Process)\nlog = s.log\noutput = out.$(Process)\n"
                "request_gpus = 2\nrequest_memory = 100\nqueue 1\n")
    wait_for(lambda: len(ids(pool, 0)) == 2, 90, "the job to start")
    assert ids(pool, 0) in (["CUDA0", "CUDA1"], ["CUDA2", "CUDA3"]), "a static slot gives the job its own GPUs"
    (pool.jobs_dir / "go").touch()
    wait_for(lambda: events(pool.jobs_dir / "s.log").count("005") == 1, 60, "the job to end")


def test_simulated_gpus_through_feature_gpus_and_an_inventory(make_pool) -> None:
    widgets = "#!/bin/sh\necho 'DetectedWidgets = \"w1, w2\"'\necho 'WidgetColor = \"blue\"'\n"
    pool = make_pool(KNOBS, "use FEATURE : PartitionableSlot\nuse FEATURE : GPUs\n"
                            "GPU_DISCOVERY_EXTRA = -simulate:2,2\n"
                            "MACHINE_RESOURCE_INVENTORY_Widgets = $(LOCAL_DIR)/../jobs/widgets.sh\n",
                     start=False)
    script(pool, "widgets.sh", widgets)
    pool.start(1)
    ad = slot_ads(pool)["slot1"]
    assert ad.get_value("DetectedGPUs") == "GPU-a0223334,GPU-b1223334" and ad.get_value("TotalGPUs") == 2
    assert ad.eval_expr("Common.DeviceName") == "Tesla V100-PCIE-16GB", "the inventory's properties are published"
    assert (ad.get_value("AssignedWidgets"), ad.get_value("WidgetColor")) == ("w1,w2", "blue")
    assert ad.get_value("MachineResources") == "Cpus Memory Disk GPUs Widgets"


def test_a_bad_machine_resource_stops_the_startd_with_the_knob_named(make_pool) -> None:
    pool = make_pool(KNOBS, "MACHINE_RESOURCE_GPUs = -1\n", start=False)
    done = subprocess.run([sys.executable, "-m", "htcd", "startd", "-f"], env=pool.env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert f"{os.path.basename(pool.config_file)}:" in done.stderr and "MACHINE_RESOURCE_GPUs = -1" in done.stderr
    assert "-1 is not a count" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_bad_gpu_environment_rewrite_stops_the_startd_with_the_knob_named(make_pool) -> None:
    pool = make_pool(KNOBS, GPUS + "ENVIRONMENT_FOR_AssignedGPUs = CUDA_VISIBLE_DEVICES=/(/x/\n", start=False)
    done = subprocess.run([sys.executable, "-m", "htcd", "startd", "-f"], env=pool.env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert f"{os.path.basename(pool.config_file)}:" in done.stderr, done.stderr
    assert "ENVIRONMENT_FOR_AssignedGPUs" in done.stderr and "bad pattern" in done.stderr, done.stderr
