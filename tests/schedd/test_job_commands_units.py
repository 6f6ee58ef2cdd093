"""The pure parts of the job commands the daemons act on: crontab schedules, HTCondor's short
durations in hold reasons, the core file limit, machine attribute history."""

from __future__ import annotations

import datetime
import resource
import time

import pytest

from htcd import jobenv
from htcd.classad import ClassAd
from htcd.schedd import machineattrs
from htcd.schedd.crontab import CronError, Schedule
from htcd.schedd.jobs import Cluster, Job
from htcd.schedd.periodic import short_duration


def _at(*args: int) -> float:
    return time.mktime(datetime.datetime(*args).timetuple())  # type: ignore[arg-type]


def _next(now: float, **fields: str) -> str:
    when = Schedule.parse({f"Cron{k}": v for k, v in fields.items()}).next_time(now)
    assert when is not None
    return datetime.datetime.fromtimestamp(when).strftime("%Y-%m-%d %H:%M")


def test_crontab_next_times() -> None:
    now = _at(2026, 11, 27, 12, 5, 10)  # a Friday
    assert _next(now, Minute="*") == "2026-11-27 12:06", "never the current minute"
    assert _next(_at(2026, 11, 27, 12, 5, 0), Minute="*") == "2026-11-27 12:06"
    assert _next(now, Minute="*/15") == "2026-11-27 12:15"
    assert _next(now, Minute="1-10/3") == "2026-11-27 12:06", "HTCondor keeps the multiples of the step (3, 6, 9)"
    assert _next(now, Minute="0", Hour="3", DayOfWeek="1") == "2026-11-30 03:00"
    assert _next(now, Minute="0", Hour="0", DayOfWeek="7") == "2026-11-29 00:00", "7 is Sunday too"
    assert _next(now, Minute="30", Hour="8", DayOfMonth="1", DayOfWeek="6") == "2026-11-28 08:30", \
        "day of month or day of week, as cron"
    assert _next(now, Minute="0", Hour="0", DayOfMonth="29", Month="2") == "2028-02-29 00:00"
    assert Schedule.parse({"CronDayOfMonth": "30", "CronMonth": "2"}).next_time(now) is None


@pytest.mark.parametrize("field, text", [("CronMinute", "60"), ("CronHour", "x"), ("CronMinute", "*/0"),
                                         ("CronDayOfWeek", "1-"), ("CronMonth", "0")])
def test_crontab_refuses_bad_fields(field: str, text: str) -> None:
    with pytest.raises(CronError, match=field if "/" not in text else text.replace("*", r"\*")):
        Schedule.parse({field: text})


def test_short_durations_as_htcondor_prints_them() -> None:
    assert [short_duration(s) for s in (0, 2, 10, 75, 3600, 3661, 86400, 90061)] == \
        ["00:00", "00:02", "00:10", "01:15", "1:00:00", "1:01:01", "1+00:00:00", "1+01:01:01"]


def test_core_size_from_the_job_ad() -> None:
    assert [jobenv.core_size(v) for v in (None, True, "12", 0, 4096, 1e3)] == [0, 0, 0, 0, 4096, 1000]
    assert jobenv.core_size(-1) == resource.RLIM_INFINITY


def test_machine_attrs_record_and_rotate() -> None:
    job = Job(Cluster(1, {"JobMachineAttrs": '"Name, Cpus"', "JobMachineAttrsHistoryLength": "2"}), 0, {})
    assert not machineattrs.rotate(job), "nothing recorded yet"
    assert machineattrs.record(job, ClassAd({"Name": "slot1@a", "Cpus": 2}))
    assert machineattrs.rotate(job)
    machineattrs.record(job, ClassAd({"Name": "slot2@b"}))
    assert job.get("MachineAttrName0") == "slot2@b" and job.get("MachineAttrName1") == "slot1@a"
    assert job.text("MachineAttrCpus0") == "undefined" and job.get("MachineAttrCpus1") == 2
    assert job.text("MachineAttrName2") is None, "the history keeps two"
    none = Job(Cluster(2, {"JobMachineAttrs": '"Name"', "JobMachineAttrsHistoryLength": "0"}), 0, {})
    assert not machineattrs.record(none, ClassAd({"Name": "x"}))
