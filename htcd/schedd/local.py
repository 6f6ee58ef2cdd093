"""Local and scheduler universe jobs: run by the schedd itself, on the access point.

As in HTCondor, these jobs are never negotiated: the schedd starts an idle one whenever
``START_LOCAL_UNIVERSE`` (``START_SCHEDULER_UNIVERSE``) is true, evaluated with the Scheduler ad
as MY and the job as TARGET.  The job runs in its Iwd with its own stdin/stdout/stderr paths,
as its owner when the schedd is root, through the universe plugins (a plugin may register
``local`` or ``scheduler``; otherwise the vanilla universe's process handling runs it).  It
gets the same events, history and hold/remove behaviour as any job: the schedd's job
lifecycle (``job_started``, ``job_exited``, ``finish_removal``, ``job_vacated``) is called
exactly as a shadow calls it, with :class:`LocalShadow` standing in for the shadow.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from htcd import jobenv
from htcd.classad import ClassAd, ClassAdSyntaxError, is_true, parse_expr
from htcd.plugins import get_plugin_manager
from htcd.schedd.jobs import HELD, IDLE, RUNNING, Job
from htcd.universe import JobContext, RunningJob, Universe, UniverseError

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd
    from htcd.schedd.queue import JobId

SCHEDULER, LOCAL = 7, 12
AP_UNIVERSES = {str(SCHEDULER): "scheduler", str(LOCAL): "local"}
# knob, its default (HTCondor's), and the Scheduler ad's running count it usually reads
START_KNOB = {"local": ("START_LOCAL_UNIVERSE", "TotalLocalJobsRunning < 200"),
              "scheduler": ("START_SCHEDULER_UNIVERSE", "TotalSchedulerJobsRunning < 500")}
AD_PREFIX = {"local": "Local", "scheduler": "Scheduler"}
HOLD_CODE_CANNOT_START = 6  # HTCondor's "the job could not be started" hold code
DEFAULT_VACATE_SECONDS = 10  # KillSig to SIGKILL, when the job sets no JobMaxVacateTime
CAUSE_SIGNAL = {"remove": "RemoveKillSig", "hold": "HoldKillSig"}
SHUTDOWN_SECONDS = 10  # a schedd shutting down waits this long for its AP jobs to go after SIGTERM


def ap_universe(job: Job) -> str | None:
    """``"local"`` or ``"scheduler"`` for a job the access point runs itself, else None."""
    text = job.text("JobUniverse")
    return AP_UNIVERSES.get(text.strip()) if text else None


class LocalShadow:
    """What the schedd's lifecycle expects of a shadow (``RunningShadow``), for a job run on the AP."""

    def __init__(self, runner: LocalJobs, job: Job) -> None:
        self.runner = runner
        self.job = job
        self.startd = str(runner.schedd.server.address)  # the execute event names the schedd
        self.slot_name = ""
        self.running: RunningJob | None = None

    async def kill(self, cause: str = "") -> None:
        """Remove (``cause`` "remove": RemoveKillSig), hold ("hold": HoldKillSig) or any other
        stop: the job's KillSig when it names no signal for the cause, as HTCondor's schedd;
        then SIGKILL after JobMaxVacateTime seconds."""
        running = self.running
        if running is None:
            return
        running.signal(stop_signal(self.job, cause))
        grace = self.job.get("JobMaxVacateTime")
        grace = grace if isinstance(grace, int) and not isinstance(grace, bool) else DEFAULT_VACATE_SECONDS
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(running.wait(), max(0, grace))
            return
        running.kill()


def stop_signal(job: Job, cause: str) -> int:
    """The signal that stops an AP job for ``cause``: RemoveKillSig or HoldKillSig when the job
    sets it, else KillSig (SIGTERM when unset)."""
    attr = CAUSE_SIGNAL.get(cause)
    if attr is not None and isinstance(job.get(attr), (str, int)) and str(job.get(attr)).strip():
        return jobenv.kill_signal(job.get(attr))
    return jobenv.kill_signal(job.get("KillSig"))


class LocalJobs:
    """The schedd's runner of local and scheduler universe jobs."""

    def __init__(self, schedd: Schedd) -> None:
        self.schedd = schedd
        self.jobs: dict[JobId, Job] = {}  # every queued AP job (few): counted without scanning the queue
        self.running: dict[JobId, LocalShadow] = {}
        self._universes: dict[str, Universe] | None = None
        self._pass: asyncio.Handle | None = None
        self._timer = False

    # -- bookkeeping ---------------------------------------------------------------------
    def note(self, jobs: Iterable[Job]) -> None:
        """Jobs entering the queue: remember those the AP runs."""
        for job in jobs:
            if ap_universe(job):
                self.jobs[job.id] = job

    def _live(self) -> list[Job]:
        queue = self.schedd.jobs
        gone = [jid for jid, job in self.jobs.items() if queue.get(jid) is not job]
        for jid in gone:
            del self.jobs[jid]
        return list(self.jobs.values())

    def counts(self, owner: str | None = None) -> Counter[tuple[str, int]]:
        """(universe, status) -> number of queued AP jobs, of one owner or of all."""
        out: Counter[tuple[str, int]] = Counter()
        for job in self._live():
            if owner is None or job.owner == owner:
                out[(ap_universe(job) or "local", job.status)] += 1
        return out

    def ad_attributes(self, owner: str | None = None) -> dict[str, int]:
        """The Scheduler ad's ``TotalLocalJobsIdle``... (``owner`` given: the Submitter ad's
        ``LocalJobsIdle``...)."""
        c = self.counts(owner)
        pre = "" if owner is not None else "Total"
        out = {}
        for uni, word in AD_PREFIX.items():
            out[f"{pre}{word}JobsIdle"] = c[(uni, IDLE)]
            out[f"{pre}{word}JobsRunning"] = c[(uni, RUNNING)]
        return out

    # -- starting ------------------------------------------------------------------------
    def universes(self) -> dict[str, Universe]:
        if self._universes is None:
            pm = get_plugin_manager(self.schedd.config, self.schedd.log)
            self._universes = pm.universes()
            self.schedd.log.info("universes for local and scheduler jobs: %s",
                                 ", ".join(sorted(self._universes)) or "none")
        return self._universes

    def start_soon(self) -> None:
        """Look for AP jobs to start once the current step is over (coalesced)."""
        if not self.jobs:
            return
        if not self._timer:  # jobs held back by START_*_UNIVERSE are looked at again every SCHEDD_INTERVAL
            self._timer = True
            interval = lambda: max(1, self.schedd.knob_int("SCHEDD_INTERVAL", 300))  # noqa: E731
            self.schedd.every(interval, self._tick, "start local universe jobs", first=interval())
        if self._pass is None:
            self._pass = asyncio.get_running_loop().call_soon(self.start_idle)

    async def _tick(self) -> None:
        self.start_idle()

    def _start_expr(self, universe: str) -> tuple[str, Any]:
        knob, default = START_KNOB[universe]
        text = self.schedd.config.get(knob) or default
        try:
            return text, parse_expr(text)
        except ClassAdSyntaxError as exc:
            self.schedd.log.error("%s = %s does not parse (%s): no %s universe job starts", knob, text, exc,
                                  universe)
            return text, None

    def start_idle(self) -> int:
        """Start every idle AP job that START_LOCAL_UNIVERSE / START_SCHEDULER_UNIVERSE allows."""
        self._pass = None
        schedd = self.schedd
        if schedd.stopping.is_set():
            return 0
        # (a job released while its last run is still ending waits for that run to be gone)
        idle = [j for j in self._live() if j.status == IDLE and not j.matched and not j.removing
                and j.id not in self.running]
        if not idle:
            return 0
        exprs = {u: self._start_expr(u)[1] for u in START_KNOB}
        ad = schedd.make_ad()
        started = 0
        for job in idle:
            universe = ap_universe(job) or "local"
            expr = exprs[universe]
            if expr is None or not schedd.may_start():
                continue
            if not is_true(expr.eval(ad, job.ad)):
                continue
            self._start(job, universe)
            started += 1
            # the next job sees this one running
            word = AD_PREFIX[universe]
            ad[f"Total{word}JobsRunning"] = int(ad.get_value(f"Total{word}JobsRunning", 0) or 0) + 1
            ad[f"Total{word}JobsIdle"] = max(0, int(ad.get_value(f"Total{word}JobsIdle", 0) or 0) - 1)
        return started

    def _start(self, job: Job, universe: str) -> None:
        job.matched = True
        shadow = LocalShadow(self, job)
        self.running[job.id] = shadow
        task = self.schedd.spawn(self._run(job, universe, shadow), f"{universe} universe job {job.id_text}")
        self.schedd.shadow_tasks.add(task)  # counted, waited for and cancelled like shadows
        task.add_done_callback(self.schedd.shadow_tasks.discard)

    # -- running -------------------------------------------------------------------------
    def _context(self, job: Job) -> JobContext:
        iwd = str(job.get("Iwd", "") or "") or "/"
        uid, gid = self.schedd.events.owner_ids(job.owner) if os.geteuid() == 0 else (None, None)

        def path(attr: str) -> str:
            value = str(job.get(attr, "") or "") or "/dev/null"
            return value if os.path.isabs(value) else os.path.join(iwd, value)

        stdout, stderr = path("Out"), path("Err")
        for p in {stdout, stderr} - {"/dev/null"}:  # a fresh run starts fresh files, owned by the job's user
            self.schedd.write_as_owner(job, p, b"")
        env = jobenv.environment(job.get("Environment"), job.get("Env"))
        env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
        env["_CONDOR_JOB_IWD"] = iwd
        if ap_universe(job) == "scheduler":  # as HTCondor's schedd: a DAGMan finds its own id and this schedd
            env["CONDOR_ID"] = job.id_text
            address_file = self.schedd.config.get("SCHEDD_ADDRESS_FILE")
            if address_file and self.schedd.config.get_bool("USE_LOCAL_SCHEDD_FOR_SCHEDULER_UNIVERSE", True):
                env["_CONDOR_SCHEDD_ADDRESS_FILE"] = address_file
        cmd = str(job.get("Cmd", "") or "")
        return JobContext(job_ad=job.ad, sandbox=iwd, executable=cmd if os.path.isabs(cmd) else os.path.join(iwd, cmd),
                          arguments=jobenv.arguments(job.get("Arguments"), job.get("Args")), environment=env,
                          stdin=path("In"), stdout=stdout, stderr=stderr, uid=uid, gid=gid,
                          request_cpus=int(job.get("RequestCpus", 1) or 1),
                          request_memory_mb=int(job.get("RequestMemory", 0) or 0),
                          slot_name=self.schedd.name, log=self.schedd.shadow_log)

    def _universe_for(self, universe: str) -> Universe:
        found = self.universes()
        chosen = found.get(universe) or found.get("vanilla")
        if chosen is None:
            raise UniverseError(f"no universe plugin can run {universe} universe jobs (vanilla is not loaded)")
        return chosen

    async def _run(self, job: Job, universe: str, shadow: LocalShadow) -> None:
        schedd, log = self.schedd, self.schedd.shadow_log
        lifecycle = schedd.lifecycle
        try:
            try:
                ctx = self._context(job)
                running = await self._universe_for(universe).start(ctx)
            except (UniverseError, OSError) as exc:
                job.matched = False
                lifecycle.hold(job, f"Cannot start {universe} universe job: {exc}", code=HOLD_CODE_CANNOT_START)
                return
            shadow.running = running
            slot = ClassAd()
            slot["Name"] = schedd.name
            lifecycle.job_started(job, slot, shadow)
            log.info("(%s) %s universe job started on the access point (pid %s)", job.id_text, universe,
                     running.pgid)
            try:
                status = await running.wait()
            except asyncio.CancelledError:  # the schedd is stopping: SIGTERM (a DAGMan leaves its nodes
                # queued for the next start), SIGKILL after a while; the job stays RUNNING in the queue
                # and is started again when the schedd starts again
                running.signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(asyncio.shield(running.wait()), SHUTDOWN_SECONDS)
                except Exception:
                    running.kill()
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(asyncio.shield(running.wait()), 5)
                raise
            finally:
                if running.pgid:  # renters clean up: nothing the job started outlives it
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(running.pgid, signal.SIGKILL)
            result = {"exit_code": status.exit_code, "signal": status.signal, "user_cpu": status.user_cpu,
                      "sys_cpu": status.sys_cpu, "max_rss_kb": status.max_rss_kb}
            if job.status == HELD:
                lifecycle.job_vacated(job)
            elif job.removing:
                lifecycle.finish_removal(job)
            else:
                lifecycle.job_exited(job, result, bytes_received=0, bytes_sent=0)
            log.info("(%s) %s universe job ended: %s", job.id_text, universe,
                     f"signal {status.signal}" if status.by_signal else f"exit code {status.exit_code}")
        finally:
            self.running.pop(job.id, None)
            if job.status == IDLE:  # never started (or put back): free for the next pass
                job.matched = False
            if not schedd.stopping.is_set():
                self.start_soon()
