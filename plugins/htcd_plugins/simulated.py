"""The simulated universe (``universe = simulated``): the job "runs" for a time read from its ad,
inside the starter, with no process, then exits with a code from its ad.

It exists to exercise the scheduling plane -- collector, negotiator, schedds, shadows, claims,
the job queue and its events -- at the size of a large pool on one machine, where a process per
running job would exhaust the machine long before the daemons (``bench/scale_bench.py``).  The
starter still makes and removes the sandbox, transfers files and samples usage; the shadow, the
claim, the event log and the accounting see a job like any other.

Off unless ``STARTD_SIMULATED_JOBS`` is true on the execute point: without it the universe is
not in ``StarterAbilityList``, so its jobs, whose Requirements ask for it, never match there (as
``htcd q -better-analyze`` shows), and a start asked for anyway is refused with that reason.

The job ad says how long and how it ends: ``SimulatedRuntime`` (seconds; else the first
argument, when it is a number, so that a ``sleep N`` job needs only its universe changed) and
``SimulatedExitCode`` (default 0).  SIGSTOP stops the clock and SIGCONT starts it again (a
suspended job); SIGKILL and any other signal end the job as if that signal had killed it.
"""

from __future__ import annotations

import asyncio
import signal
import time
from typing import Any

from htcd.classad import UndefinedType
from htcd.hookspecs import hookimpl
from htcd.universe import ExitStatus, JobContext, RunningJob, Universe, UniverseError, UniverseRegistry

KNOB = "STARTD_SIMULATED_JOBS"


def runtime_of(ctx: JobContext) -> float:
    """Seconds the job runs: its SimulatedRuntime, else its first argument when a number."""
    value = ctx.job_ad.eval("SimulatedRuntime") if "SimulatedRuntime" in ctx.job_ad else None
    if isinstance(value, UndefinedType):
        value = None
    if value is None and ctx.arguments:
        try:
            value = float(ctx.arguments[0])
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise UniverseError("a simulated job needs SimulatedRuntime (seconds, >= 0) in its ad, "
                            "or a number of seconds as its first argument")
    return float(value)


def exit_code_of(ctx: JobContext) -> int:
    """The code the job exits with: its SimulatedExitCode (default 0)."""
    value = ctx.job_ad.eval("SimulatedExitCode") if "SimulatedExitCode" in ctx.job_ad else None
    if value is None or isinstance(value, UndefinedType):
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        raise UniverseError(f"SimulatedExitCode must be an integer from 0 to 255, not {value!r}")
    return value


class SimulatedJob(RunningJob):
    """A timer on the startd's event loop standing for the job's process."""

    def __init__(self, runtime: float, exit_code: int) -> None:
        self.loop = asyncio.get_running_loop()
        self.left = runtime
        self.exit_code = exit_code
        self.since = time.monotonic()
        self._exited: asyncio.Future[ExitStatus] = self.loop.create_future()
        self._timer: asyncio.TimerHandle | None = self.loop.call_later(runtime, self._end, None)

    def _end(self, signum: int | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._exited.done():
            self._exited.set_result(ExitStatus(exit_code=None if signum else self.exit_code, signal=signum))

    async def wait(self) -> ExitStatus:
        return await asyncio.shield(self._exited)

    def signal(self, signum: int) -> None:
        if self._exited.done():
            return
        if signum == signal.SIGSTOP:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
                self.left = max(0.0, self.left - (time.monotonic() - self.since))
        elif signum == signal.SIGCONT:
            if self._timer is None:
                self.since = time.monotonic()
                self._timer = self.loop.call_later(self.left, self._end, None)
        else:
            self._end(signum)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)

    def usage(self) -> dict[str, int | float] | None:
        return {"RemoteUserCpu": 0.0, "RemoteSysCpu": 0.0, "ResidentSetSize": 0, "ImageSize": 0, "MemoryUsage": 0}


class SimulatedUniverse(Universe):
    name = "simulated"
    local_processes = False  # no process: no cgroup, nothing to follow
    needs_executable = False

    def __init__(self) -> None:
        self.enabled = False

    def configure(self, config: Any) -> None:
        self.enabled = bool(config.get_bool(KNOB, False))

    def available(self) -> bool:
        return self.enabled

    async def start(self, ctx: JobContext) -> RunningJob:
        if not self.enabled:
            raise UniverseError(f"this execute point does not run simulated jobs ({KNOB} is not true)")
        return SimulatedJob(runtime_of(ctx), exit_code_of(ctx))


@hookimpl
def htcd_register_universes(registry: UniverseRegistry) -> None:
    registry.add("simulated", SimulatedUniverse)
