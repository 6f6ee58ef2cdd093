"""STARTD_CRON: scripts whose output adds attributes to the slot ads, on a schedule.

``STARTD_CRON_JOBLIST`` names the jobs; per job ``STARTD_CRON_<name>_EXECUTABLE``, ``_PERIOD``
(seconds, or with an s/m/h suffix), ``_MODE`` (``Periodic``: start every period; ``WaitForExit``:
start again a period after it exits, a script that keeps running publishes an ad at every
``-`` line; ``OneShot``: once), ``_ARGS``, ``_ENV``, ``_CWD``, ``_PREFIX`` (put before every
attribute name) and ``_KILL`` (kill a Periodic run still going when the next one is due).
A script writes ``Attr = expression`` lines; a line starting with ``-`` ends one ad.

Scripts run as asyncio subprocesses in their own session: a slow or hanging one never blocks the
startd; its failures are logged (with its stderr), it is killed when the startd stops, and an
output line that is not ``Attr = expression`` is logged and skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from htcd import jobenv
from htcd.classad import parse_expr
from htcd.config import Config
from htcd.errors import UserError

MODES = {"periodic": "Periodic", "waitforexit": "WaitForExit", "oneshot": "OneShot"}
_ATTR = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*?)\s*$")


@dataclass
class CronJob:
    name: str
    executable: str
    period: float
    mode: str = "Periodic"
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    prefix: str = ""
    kill: bool = False
    cwd: str | None = None
    condition: str | None = None  # STARTD_CRON_<name>_CONDITION: the job runs only while it is true


def parse_period(text: str) -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text, re.IGNORECASE)
    if m is None:
        raise ValueError(f"{text!r} is not a period (seconds, or a number with s, m or h)")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2).lower()]


def _words(text: str | None) -> list[str]:
    """Arguments: double-quoted text is HTCondor's new syntax, anything else splits on blanks."""
    if not text:
        return []
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] == '"':
        return jobenv.split_v2(t[1:-1])
    return t.split()


def _environment(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] == '"':
        return jobenv.environment(t[1:-1], None)
    return jobenv.environment(None, t)


def load_jobs(config: Config, log: logging.Logger) -> list[CronJob]:
    """The jobs of STARTD_CRON_JOBLIST; a job with a bad definition is logged and left out."""
    jobs = []
    for name in dict.fromkeys(config.get_list("STARTD_CRON_JOBLIST")):
        try:
            jobs.append(_job(config, name))
        except (ValueError, UserError) as exc:
            where = config.where(f"STARTD_CRON_{name}_EXECUTABLE") or config.where("STARTD_CRON_JOBLIST")
            at = f"{where[0]}:{where[1]}: " if where else ""
            log.error("%sSTARTD_CRON job %s is not run: %s", at, name, exc)
    return jobs


def _job(config: Config, name: str) -> CronJob:
    executable = config.get(f"STARTD_CRON_{name}_EXECUTABLE")
    if not executable:
        raise ValueError(f"STARTD_CRON_{name}_EXECUTABLE is not defined")
    mode_text = config.get(f"STARTD_CRON_{name}_MODE") or "Periodic"
    mode = MODES.get(mode_text.lower())
    if mode is None:
        raise ValueError(f"STARTD_CRON_{name}_MODE = {mode_text}: not one of {', '.join(MODES.values())}")
    period_text = config.get(f"STARTD_CRON_{name}_PERIOD")
    if period_text is None and mode != "OneShot":
        raise ValueError(f"STARTD_CRON_{name}_PERIOD is not defined (a {mode} job needs one)")
    period = parse_period(period_text) if period_text else 0.0
    if mode == "Periodic" and period <= 0:
        raise ValueError(f"STARTD_CRON_{name}_PERIOD = {period_text}: a Periodic job needs a period above 0")
    return CronJob(name=name, executable=executable, period=period, mode=mode,
                   args=_words(config.get(f"STARTD_CRON_{name}_ARGS")),
                   env=_environment(config.get(f"STARTD_CRON_{name}_ENV")),
                   prefix=config.get(f"STARTD_CRON_{name}_PREFIX") or "",
                   kill=config.get_bool(f"STARTD_CRON_{name}_KILL", False),
                   cwd=config.get(f"STARTD_CRON_{name}_CWD"),
                   condition=config.get(f"STARTD_CRON_{name}_CONDITION"))


def parse_line(line: str, prefix: str = "") -> tuple[str, str]:
    """``Attr = expression`` -> (prefixed name, expression text); ValueError if it is not one."""
    m = _ATTR.fullmatch(line)
    if m is None or not m.group(2):
        raise ValueError(f"not 'Attr = expression': {line.strip()!r}")
    parse_expr(m.group(2))  # UserError if it does not parse
    return prefix + m.group(1), m.group(2)


class Cron:
    """Runs the cron jobs; ``publish(job_name, attrs)`` receives each ad a script writes."""

    def __init__(self, log: logging.Logger, publish: Callable[[str, dict[str, str]], None],
                 condition: Callable[[str], bool] | None = None) -> None:
        self.log = log
        self.publish = publish
        self.condition = condition  # evaluates a job's CONDITION against the machine's attributes
        self._held_back: set[str] = set()  # jobs whose CONDITION was false at their last turn
        self.jobs: list[CronJob] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._procs: dict[str, asyncio.subprocess.Process] = {}

    def start(self, jobs: list[CronJob]) -> None:
        self.jobs = jobs
        for job in jobs:
            self._tasks.append(asyncio.create_task(self._loop(job), name=f"cron {job.name}"))
        if jobs:
            self.log.info("STARTD_CRON jobs: %s", ", ".join(f"{j.name} ({j.mode}, {j.period:g} s)" for j in jobs))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        for name in list(self._procs):
            self._kill(name)

    async def restart(self, jobs: list[CronJob]) -> None:
        """After a reconfig: the jobs as the new config defines them."""
        await self.stop()
        self.start(jobs)

    def _kill(self, name: str) -> None:
        proc = self._procs.pop(name, None)
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

    async def _loop(self, job: CronJob) -> None:
        try:
            if job.mode == "OneShot":
                await self._run(job)
                return
            if job.mode == "WaitForExit":
                while True:
                    await self._run(job)
                    await asyncio.sleep(job.period)
            while True:  # Periodic: a run starts every period
                started = time.monotonic()
                run = asyncio.create_task(self._run(job))
                done, _ = await asyncio.wait({run}, timeout=job.period)
                if not done:
                    if job.kill:
                        self.log.warning("STARTD_CRON job %s still runs after its period of %g s: killing it",
                                         job.name, job.period)
                        self._kill(job.name)
                    else:
                        self.log.warning("STARTD_CRON job %s still runs after its period of %g s; the next run "
                                         "waits for it (STARTD_CRON_%s_KILL = true would kill it)",
                                         job.name, job.period, job.name)
                    await run
                await asyncio.sleep(max(0.0, started + job.period - time.monotonic()))
        except asyncio.CancelledError:
            self._kill(job.name)
            raise

    async def _run(self, job: CronJob) -> None:
        """One run: publish an ad at every ``-`` line and, after a clean exit, what is left."""
        if job.condition and self.condition is not None and not self.condition(job.condition):
            if job.name not in self._held_back:
                self._held_back.add(job.name)
                self.log.info("STARTD_CRON job %s is not run: its condition %s is not true", job.name,
                              job.condition)
            return
        self._held_back.discard(job.name)
        env = {**os.environ, **job.env}
        try:
            proc = await asyncio.create_subprocess_exec(
                job.executable, *job.args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=env, cwd=job.cwd, start_new_session=True)
        except OSError as exc:
            self.log.error("STARTD_CRON job %s cannot start %s: %s", job.name, job.executable,
                           exc.strerror or exc)
            return
        self._procs[job.name] = proc
        assert proc.stdout is not None and proc.stderr is not None
        err_task = asyncio.create_task(proc.stderr.read(64 * 1024))
        attrs: dict[str, str] = {}
        try:
            async for raw in proc.stdout:
                line = raw.decode(errors="replace").rstrip("\n")
                if line.startswith("-"):
                    self._publish(job, attrs)
                    attrs = {}
                elif line.strip():
                    try:
                        name, text = parse_line(line, job.prefix)
                    except (ValueError, UserError) as exc:
                        self.log.warning("STARTD_CRON job %s: %s", job.name, getattr(exc, "message", exc))
                        continue
                    attrs[name] = text
            status = await proc.wait()
        except asyncio.CancelledError:
            err_task.cancel()
            raise
        finally:
            if self._procs.get(job.name) is proc:
                del self._procs[job.name]
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
        stderr = (await err_task).decode(errors="replace").strip()
        if status != 0:
            how = f"signal {-status}" if status < 0 else f"status {status}"
            self.log.warning("STARTD_CRON job %s exited with %s%s", job.name, how,
                             f": {stderr[-500:]}" if stderr else "")
            return
        if attrs:
            self._publish(job, attrs)

    def _publish(self, job: CronJob, attrs: dict[str, str]) -> None:
        if attrs:
            self.log.debug("STARTD_CRON job %s published %s", job.name, ", ".join(attrs))
            self.publish(job.name, attrs)
