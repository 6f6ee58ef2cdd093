"""The daemons act on the job attributes condor_submit makes of these submit commands, on one
real personal pool: deferral_time, max_retries / success_exit_code, allowed_job_duration,
allowed_execute_duration, job_machine_attrs, submit_event_notes, coresize, nice_user,
job_max_vacate_time and want_graceful_removal.

The attributes are written as condor_submit 24 writes them (``+Attr = value`` where the submit
side does not make them yet), so each test checks the run-time side alone."""

from __future__ import annotations

import json
import os
import time

import pytest
from pooltools import Pool, wait_for

KNOBS = {"NUM_CPUS": "4", "PERIODIC_EXPR_INTERVAL": "1", "NEGOTIATOR_INTERVAL": "1", "SCHEDD_INTERVAL": "1",
         "UPDATE_INTERVAL": "1", "POLLING_INTERVAL": "0.5", "STARTER_INITIAL_UPDATE_INTERVAL": "1",
         "STARTER_UPDATE_INTERVAL": "1", "MachineMaxVacateTime": "60"}
# A job that waits for ``go.<cluster>`` (or its SIGTERM, which it notes and exits on).
WAIT_SH = """#!/bin/sh
trap 'echo TERM > {dir}/term.$1; exit 3' TERM
echo $$ > {dir}/pid.$1
while [ ! -e {dir}/go.$1 ]; do sleep 0.1; done
"""
# The same, ignoring SIGTERM (it notes it and goes on): only SIGKILL ends it.
STUBBORN_SH = """#!/bin/sh
trap 'echo TERM > {dir}/term.$1' TERM
echo $$ > {dir}/pid.$1
while [ ! -e {dir}/go.$1 ]; do sleep 0.1; done
"""


@pytest.fixture(scope="module")
def pool(module_pool) -> Pool:
    p: Pool = module_pool(KNOBS, slots=4)
    for name, body in (("wait.sh", WAIT_SH), ("stubborn.sh", STUBBORN_SH)):
        path = p.jobs_dir / name
        path.write_text(body.format(dir=p.jobs_dir))
        os.chmod(path, 0o755)
    os.chmod(p.jobs_dir, 0o777)  # the jobs' accounts leave their marks here
    return p


def submit(pool: Pool, body: str, name: str) -> int:
    return pool.submit(body, f"{name}.sub")


def history(pool: Pool, cluster: int, *attrs: str) -> list[str]:
    out = pool.htcd("history", "-af", *attrs, "-constraint", f"ClusterId == {cluster}").stdout
    return out.split()


def events(pool: Pool, log: str) -> list[str]:
    path = pool.jobs_dir / log
    text = path.read_text() if path.exists() else ""
    return [line[:3] for line in text.splitlines() if line[:3].isdigit() and " (" in line]


def left_queue(pool: Pool, cluster: int) -> bool:
    return not pool.job_attr(str(cluster), "JobStatus")


def held(pool: Pool, cluster: int) -> bool:
    return pool.job_attr(f"{cluster}.0", "JobStatus") == "5"


def test_max_retries_reruns_the_job_until_its_retries_are_used(pool: Pool) -> None:
    """max_retries = 2: OnExitRemove = NumJobCompletions > JobMaxRetries || ExitCode is 0 reads the
    NumJobCompletions the schedd keeps; the failing job runs three times, then leaves the queue."""
    failing = submit(pool, "executable = /bin/sh\narguments = \"-c 'exit 3'\"\nmax_retries = 2\n"
                           "log = retries.log\nqueue\n", "retries")
    wait_for(lambda: left_queue(pool, failing), 90, "the failing job to use its retries")
    assert history(pool, failing, "NumJobCompletions", "NumJobStarts", "ExitCode", "JobStatus") == ["3", "3", "3", "4"]
    assert events(pool, "retries.log").count("005") == 3
    # success_exit_code = 4: JobSuccessExitCode, and an exit with it ends the retries at once
    ok = submit(pool, "executable = /bin/sh\narguments = \"-c 'exit 4'\"\n+JobMaxRetries = 5\n"
                      "+JobSuccessExitCode = 4\n+OnExitHold = false\n"
                      "+OnExitRemove = NumJobCompletions > JobMaxRetries || ExitCode is JobSuccessExitCode\n"
                      "queue\n", "success")
    wait_for(lambda: left_queue(pool, ok), 60, "the job with its success exit code")
    assert history(pool, ok, "NumJobCompletions", "ExitCode") == ["1", "4"]


def test_deferral_time_holds_the_start_and_a_missed_time_holds_the_job(pool: Pool) -> None:
    at = int(time.time()) + 4
    cluster = submit(pool, "executable = /bin/sh\narguments = \"-c 'date +%s'\"\noutput = deferred.out\n"
                           f"+DeferralTime = {at}\n+DeferralWindow = 30\n+DeferralPrepTime = 10\nqueue\n", "defer")
    wait_for(lambda: left_queue(pool, cluster), 60, "the deferred job to run")
    started = int((pool.jobs_dir / "deferred.out").read_text().split()[0])
    assert started >= at, f"the job ran at {started}, before its DeferralTime {at}"
    (executing,) = history(pool, cluster, "JobCurrentStartExecutingDate")
    assert int(executing) >= at
    ads = pool.collector_ads("Machine", ["HasJobDeferral"])
    assert ads and all(ad.get("HasJobDeferral") == "true" for ad in ads), ads
    # a DeferralTime missed by more than the DeferralWindow: held as HTCondor holds it
    late = submit(pool, f"executable = /bin/true\n+DeferralTime = {int(time.time()) - 100}\n"
                        "+DeferralWindow = 10\nqueue\n", "late")
    wait_for(lambda: held(pool, late), 60, "the job that missed its deferral time to be held")
    assert pool.job_attr(f"{late}.0", "HoldReason") == "Job missed deferred execution time"
    assert pool.job_attr(f"{late}.0", "HoldReasonCode") == "20"
    assert pool.job_attr(f"{late}.0", "HoldReasonSubCode") == "0"
    pool.htcd("rm", str(late))
    # removed while its start is deferred: the wait ends and the job never runs
    far = submit(pool, "executable = /bin/sh\narguments = \"-c 'date > never.out'\"\n"
                       f"+DeferralTime = {int(time.time()) + 600}\nqueue\n", "far")
    wait_for(lambda: pool.job_attr(f"{far}.0", "JobStatus") == "2", 60, "the deferred job to be activated")
    pool.htcd("rm", str(far))
    wait_for(lambda: left_queue(pool, far), 30, "the deferred job to be removed")
    assert not (pool.jobs_dir / "never.out").exists()
    assert "the job was stopped while its start was deferred" in "".join(
        p.read_text() for p in (pool.local / "log").glob("StarterLog*"))


def test_cron_schedule_sets_the_deferral_time(pool: Pool) -> None:
    """cron_minute etc.: the schedd sets DeferralTime to the schedule's next time (the run itself
    is the deferral above); a schedule that does not parse holds the job (code 25)."""
    before = int(time.time())
    cron = submit(pool, "executable = /bin/true\n+CronMinute = \"*\"\n+CronHour = \"*\"\n+DeferralWindow = 0\n"
                        "requirements = false\nqueue\n", "cron")
    wait_for(lambda: pool.job_attr(f"{cron}.0", "DeferralTime") != "undefined", 30, "the cron job's DeferralTime")
    deferral = int(pool.job_attr(f"{cron}.0", "DeferralTime"))
    assert deferral % 60 == 0 and before < deferral <= int(time.time()) + 60, deferral
    bad = submit(pool, "executable = /bin/true\n+CronMinute = \"61\"\nrequirements = false\nqueue\n", "badcron")
    wait_for(lambda: held(pool, bad), 30, "the job with an invalid schedule to be held")
    assert pool.job_attr(f"{bad}.0", "HoldReason") == \
        "Invalid cron schedule parameters: Invalid parameter value '61' for CronMinute"
    assert pool.job_attr(f"{bad}.0", "HoldReasonCode") == "25"
    pool.htcd("rm", str(cron), str(bad))


def test_allowed_job_and_execute_durations_hold_the_job(pool: Pool) -> None:
    job = submit(pool, "executable = wait.sh\narguments = $(Cluster)\n+AllowedJobDuration = 2\nqueue\n", "dur")
    execute = submit(pool, "executable = wait.sh\narguments = $(Cluster)\n+AllowedExecuteDuration = 2\nqueue\n",
                     "exe")
    wait_for(lambda: held(pool, job) and held(pool, execute), 60, "both jobs held for their duration")
    assert pool.job_attr(f"{job}.0", "HoldReason") == "The job exceeded allowed job duration of 00:02"
    assert pool.job_attr(f"{job}.0", "HoldReasonCode") == "46"
    assert pool.job_attr(f"{execute}.0", "HoldReason") == "The job exceeded allowed execute duration of 00:02"
    assert pool.job_attr(f"{execute}.0", "HoldReasonCode") == "47"
    assert int(pool.job_attr(f"{execute}.0", "JobCurrentStartExecutingDate")) >= \
        int(pool.job_attr(f"{execute}.0", "ShadowBday"))
    pool.htcd("rm", str(job), str(execute))


def test_job_machine_attrs_record_each_match(pool: Pool) -> None:
    """Two runs (OnExitRemove false after the first): MachineAttr<Name>0 is the second slot's,
    <Name>1 the first's; a name the slot lacks is undefined."""
    cluster = submit(pool, "executable = /bin/true\n+JobMachineAttrs = \"Name,Cpus,NoSuchAttr\"\n"
                           "+JobMachineAttrsHistoryLength = 3\n+OnExitRemove = NumJobCompletions >= 2\nqueue\n",
                     "mattrs")
    wait_for(lambda: left_queue(pool, cluster), 60, "both runs")
    names = history(pool, cluster, "MachineAttrName0", "MachineAttrName1", "MachineAttrCpus0",
                    "MachineAttrNoSuchAttr0", "MachineAttrName2", "NumJobMatches")
    assert names[0].startswith("slot") and names[1].startswith("slot"), names
    assert names[2:] == ["1", "undefined", "undefined", "2"], names


def test_submit_event_notes_in_the_submit_event(pool: Pool) -> None:
    cluster = submit(pool, "executable = /bin/true\nlog = notes.log\n+SubmitEventNotes = \"node A of the run\"\n"
                           "queue\n", "notes")
    wait_for(lambda: "005" in events(pool, "notes.log"), 60, "the job to finish")
    text = (pool.jobs_dir / "notes.log").read_text()
    first = text.split("...\n")[0].splitlines()
    assert first[0].startswith(f"000 ({cluster:03d}.000.000)") and "Job submitted from host: " in first[0]
    assert first[1:] == ["    node A of the run"]
    pool.htcd("wait", "notes.log")  # htcd's own reader takes the event with its notes


def test_coresize_is_the_core_file_limit(pool: Pool) -> None:
    code = "import resource; print(resource.getrlimit(resource.RLIMIT_CORE)[0])"
    body = f"executable = /usr/bin/python3\narguments = \"-c '{code}'\"\ntransfer_executable = false\n"
    cluster = submit(pool, body + "+CoreSize = 4096\noutput = core.$(Process)\nqueue\n"
                            "+CoreSize = undefined\nqueue\n", "core")
    wait_for(lambda: left_queue(pool, cluster), 60, "the jobs")
    assert (pool.jobs_dir / "core.0").read_text().split() == ["4096"]
    assert (pool.jobs_dir / "core.1").read_text().split() == ["0"], "without CoreSize, no core file"


def test_nice_user_jobs_are_charged_to_the_nice_user_submitter(pool: Pool) -> None:
    """nice_user = true: condor_submit 9+ makes the job's accounting group nice-user.<owner>, whose
    priority factor is NICE_USER_PRIO_FACTOR (1e10) at the negotiator."""
    owner = pool.htcd("q", "-af", "Owner", "-constraint", "true").stdout.split() or [os.environ.get("USER", "root")]
    me = owner[0] if owner[0] else "root"
    cluster = submit(pool, f"executable = wait.sh\narguments = $(Cluster)\n+AccountingGroup = \"nice-user.{me}\"\n"
                           f"+AcctGroup = \"nice-user\"\n+AcctGroupUser = \"{me}\"\n+MaxJobRetirementTime = 0\n"
                           "queue\n", "nice")

    def nice_record() -> dict | None:
        rows = json.loads(pool.htcd("userprio", "-json", "-allusers").stdout)
        return next((r for r in rows if str(r.get("Name", "")).startswith("nice-user.")), None)

    wait_for(lambda: (nice_record() or {}).get("ResourcesUsed") == 1, 60, "the nice user's job charged")
    record = nice_record()
    assert record is not None and record["PriorityFactor"] == 1e10, record
    (pool.jobs_dir / f"go.{cluster}").touch()
    wait_for(lambda: left_queue(pool, cluster), 60, "the nice job to finish")


def test_job_max_vacate_time_bounds_the_vacate(pool: Pool) -> None:
    """The job ignores SIGTERM; vacated, it is killed after its JobMaxVacateTime (1 s), not after
    MachineMaxVacateTime (60 s)."""
    cluster = submit(pool, "executable = stubborn.sh\narguments = $(Cluster)\n+JobMaxVacateTime = 1\n"
                           "log = vacate.log\nqueue\n", "vacate")
    pid_file = pool.jobs_dir / f"pid.{cluster}"
    wait_for(pid_file.exists, 60, "the job to start")
    pool.htcd("vacate_job", f"{cluster}.0")
    wait_for(lambda: "004" in events(pool, "vacate.log"), 30, "the job evicted within its vacate time")
    assert (pool.jobs_dir / f"term.{cluster}").read_text() == "TERM\n", "the soft kill came first"
    assert "killing it after JobMaxVacateTime = 1" in pool.log("StartLog")
    pool.htcd("rm", str(cluster))


def test_want_graceful_removal_gives_the_job_its_soft_kill(pool: Pool) -> None:
    graceful = submit(pool, "executable = wait.sh\narguments = $(Cluster)\n+WantGracefulRemoval = true\n"
                            "log = rm.log\nqueue\n", "graceful")
    hard = submit(pool, "executable = wait.sh\narguments = $(Cluster)\nlog = rm.log\nqueue\n", "hard")
    for cluster in (graceful, hard):
        path = pool.jobs_dir / f"pid.{cluster}"
        wait_for(path.exists, 60, f"job {cluster} to start")
    pool.htcd("rm", str(graceful), str(hard))
    wait_for(lambda: events(pool, "rm.log").count("009") == 2, 30, "both removals")
    assert (pool.jobs_dir / f"term.{graceful}").read_text() == "TERM\n"
    assert not (pool.jobs_dir / f"term.{hard}").exists(), "without WantGracefulRemoval the job is killed"
