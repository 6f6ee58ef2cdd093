"""The simulated universe: a job "runs" for its SimulatedRuntime inside the starter, with no
process, and leaves the queue as a real job does (claim, shadow, events, history); an execute
point without STARTD_SIMULATED_JOBS never runs one, and ``-better-analyze`` says why."""

from __future__ import annotations

import time

from pooltools import wait_for


def test_simulated_jobs_run_and_complete_with_their_events(make_pool) -> None:
    pool = make_pool({"STARTD_SIMULATED_JOBS": "true"})
    abilities = pool.htcd("status", "-af", "StarterAbilityList").stdout.split()
    assert abilities and all("simulated" in a.split(",") for a in abilities), abilities
    began = time.monotonic()
    cluster = pool.submit("universe = simulated\nexecutable = /bin/sleep\n+SimulatedRuntime = 2\n+SimulatedExitCode = 3\nlog = s.log\n"
                          "queue\n"
                          "arguments = 1\n+SimulatedRuntime = undefined\n+SimulatedExitCode = undefined\nqueue\n",
                          "s.sub")
    wait_for(lambda: not pool.job_ids(), 90, "the simulated jobs to leave the queue")
    assert time.monotonic() - began >= 2, "the job ran for its SimulatedRuntime"
    history = {line.split()[0]: line.split()[1:] for line in pool.htcd(
        "history", str(cluster), "-af", "ProcId", "JobStatus", "ExitCode", "PluginUniverse", "NumJobStarts",
        "RemoteWallClockTime").stdout.splitlines()}
    assert history["0"][:4] == ["4", "3", "simulated", "1"], history  # completed, exit code 3
    assert history["1"][:4] == ["4", "0", "simulated", "1"], history  # the argument's second, exit 0
    assert float(history["0"][4]) >= 2.0, history
    log = (pool.jobs_dir / "s.log").read_text()
    for proc in ("000", "001"):
        for event in ("000", "001", "005"):
            assert f"{event} ({cluster:03d}.{proc}.000)" in log, (event, proc, log)
    assert "(return value 3)" in log and "(return value 0)" in log, log


def test_an_execute_point_without_the_knob_never_runs_simulated_jobs(make_pool) -> None:
    pool = make_pool()
    assert "simulated" not in pool.htcd("status", "-af", "StarterAbilityList").stdout
    sim = pool.submit("universe = simulated\nexecutable = /bin/sleep\n+SimulatedRuntime = 1\nqueue\n", "s.sub")
    real = pool.submit("executable = /bin/true\nqueue\n", "t.sub")
    wait_for(lambda: pool.job_ids() == [f"{sim}.0"], 60, f"job {real}.0 to run while {sim}.0 stays idle")
    assert pool.job_attr(f"{sim}.0", "JobStatus") == "1"
    report = pool.htcd("q", "-better-analyze", f"{sim}.0").stdout
    assert "no slot offers the simulated universe" in report, report
