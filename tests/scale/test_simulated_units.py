"""The simulated universe's parts without a pool: what the ad says, the clock, the knob."""

from __future__ import annotations

import asyncio
import signal

import pytest
from htcd_plugins.simulated import SimulatedJob, SimulatedUniverse, exit_code_of, runtime_of

from htcd.classad import ClassAd
from htcd.config import Config
from htcd.universe import JobContext, UniverseError


def config(text: str) -> Config:
    cfg = Config("STARTD", env={})
    if text:
        cfg.define("STARTD_SIMULATED_JOBS", text, "test", 1)
    return cfg


def ctx(attrs: str = "", arguments: list[str] | None = None) -> JobContext:
    ad = ClassAd()
    for line in attrs.splitlines():
        name, expr = line.split("=", 1)
        ad.set_expr(name.strip(), expr.strip())
    return JobContext(job_ad=ad, sandbox="/nonexistent", executable="", arguments=arguments or [], environment={},
                      stdin="/dev/null", stdout="/dev/null", stderr="/dev/null")


def test_runtime_and_exit_code_come_from_the_ad_or_the_first_argument() -> None:
    assert runtime_of(ctx("SimulatedRuntime = 2 * 30")) == 60.0
    assert runtime_of(ctx("SimulatedRuntime = undefined", ["7"])) == 7.0
    assert runtime_of(ctx("", ["0.5", "x"])) == 0.5
    for bad in (ctx(""), ctx("", ["forever"]), ctx('SimulatedRuntime = "ten"'), ctx("SimulatedRuntime = -1")):
        with pytest.raises(UniverseError, match="SimulatedRuntime"):
            runtime_of(bad)
    assert exit_code_of(ctx("")) == 0
    assert exit_code_of(ctx("SimulatedExitCode = 3")) == 3
    with pytest.raises(UniverseError, match="0 to 255"):
        exit_code_of(ctx("SimulatedExitCode = 256"))


def test_off_unless_the_knob_enables_it() -> None:
    universe = SimulatedUniverse()
    universe.configure(config(""))
    assert not universe.available()
    with pytest.raises(UniverseError, match="STARTD_SIMULATED_JOBS is not true"):
        asyncio.run(universe.start(ctx("SimulatedRuntime = 0")))
    universe.configure(config("true"))
    assert universe.available()


def test_the_clock_stops_while_suspended_and_a_signal_ends_the_job() -> None:
    universe = SimulatedUniverse()
    universe.configure(config("true"))

    async def scenario() -> tuple[object, ...]:
        loop = asyncio.get_running_loop()
        job = await universe.start(ctx("SimulatedRuntime = 0.2\nSimulatedExitCode = 4"))
        assert isinstance(job, SimulatedJob)
        job.signal(signal.SIGSTOP)
        assert job._timer is None and 0.0 < job.left <= 0.2, "a stopped job has no end scheduled"
        paused = loop.time()
        job.signal(signal.SIGCONT)
        done = await asyncio.wait_for(job.wait(), 5)
        killed = await universe.start(ctx("SimulatedRuntime = 3600"))
        killed.signal(signal.SIGTERM)
        return done.exit_code, done.signal, loop.time() - paused, (await asyncio.wait_for(killed.wait(), 5)).signal

    code, sig, took, killed_by = asyncio.run(scenario())
    assert (code, sig, killed_by) == (4, None, signal.SIGTERM)
    assert took >= 0.1, "the rest of the runtime ran after SIGCONT"
