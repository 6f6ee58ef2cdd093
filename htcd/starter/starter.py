"""The starter: runs one job on a claimed slot, inside the startd's event loop.

A starter is a task, not a process: a Python process per job would cap an execute point near
30 job starts per second.  It makes the sandbox (0700, owned by the job's user, see users.py),
puts the job into its own cgroup when the machine allows (cgroup.py), hands the job to its
universe plugin, samples its whole process tree every STARTER_UPDATE_INTERVAL (monitor.py:
the job ad's usage attributes, ``on_update`` for the shadow, ``on_sample`` for the startd's
policy), enforces the memory limit, and at the end removes every process and file the job made
("renters clean up").  A state file beside each sandbox lets a restarted startd clean up after
a crash (sandbox.py).  A self-checkpointing job that exits with its checkpoint code has its
checkpoint sent to the shadow (``on_checkpoint``, checkpoint.py) and is restarted in the same
sandbox (docs/checkpoint.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import psutil

from htcd import jobenv
from htcd.classad import ClassAd
from htcd.starter import assigned as assigned_env
from htcd.starter import cgroup as cgroups
from htcd.starter import checkpoint, chirp, monitor, sandbox, users, workers
from htcd.starter.sandbox import clean_orphans
from htcd.transfer import TransferError, entries, outgoing, safe_name, starter_side
from htcd.transfer.starter_side import collect_output, write_input
from htcd.universe import ExitStatus, JobContext, RunningJob, Universe, UniverseError

_RESTOP_DELAYS = (0.25, 1.0, 3.0, 10.0)  # s after a suspend: the checks that every process stopped

__all__ = ["Starter", "StarterError", "clean_orphans"]

STDOUT = "_condor_stdout"
STDERR = "_condor_stderr"
HOLD_OUT_OF_RESOURCES = 34  # HoldReasonCode JobOutOfResources: over the memory limit
HOLD_SUBCODE_MEMORY = 102  # its subcode: the resource exceeded was memory (HTCondor's hold table)
HOLD_MISSED_DEFERRAL = 20  # HoldReasonCode MissedDeferredExecutionTime
MISSED_DEFERRAL = "Job missed deferred execution time"  # HTCondor's hold reason, word for word
THREAD_VARS = ("CUBACORES GOMAXPROCS JULIA_NUM_THREADS MKL_NUM_THREADS NUMEXPR_NUM_THREADS OMP_NUM_THREADS "
               "OMP_THREAD_LIMIT OPENBLAS_NUM_THREADS PYTHON_CPU_COUNT ROOT_MAX_THREADS "
               "TF_LOOP_PARALLEL_ITERATIONS TF_NUM_THREADS")
_PEAKS = ("ImageSize", "ResidentSetSize", "MemoryUsage")


class StarterError(Exception):
    """The job could not run; the message becomes its hold reason."""


@dataclass(eq=False)
class Starter:
    job_ad: ClassAd
    slot_name: str
    slot_id: int
    execute_dir: str
    universe: Universe
    log: logging.Logger
    files: dict[str, Any] = field(default_factory=dict)  # input entries (htcd.transfer.entries)
    config: Any = None  # the daemon's htcd.config.Config (slot users, UID_DOMAIN, limits, update interval)
    on_update: Callable[[dict[str, Any]], None] | None = None  # gets each periodic usage sample
    on_sample: Callable[[dict[str, Any]], None] | None = None  # the startd's hook (policy) for each sample
    # sends a checkpoint to the shadow; "" once it is stored in the spool, else why not
    on_checkpoint: Callable[[dict[str, Any]], Awaitable[str]] | None = None
    memory_mb: int = 0  # the slot's Memory: the job's memory limit (else its RequestMemory)
    assigned: dict[str, list[str]] = field(default_factory=dict)  # custom resource -> the slot's ids (GPUs...)
    machine_ad: ClassAd | None = None  # the slot's ad at the job's start: .machine.ad, $_CONDOR_MACHINE_AD
    running: RunningJob | None = None
    chirp_address: str = ""  # the startd's address, for a job with WantIOProxy (htcd/starter/chirp.py)
    chirp_cookie: str = ""  # what that job's chirp requests must carry
    environment: dict[str, str] = field(default_factory=dict)  # the job's, for ssh_to_job (htcd/starter/shell.py)
    workdir: str = ""  # the job's working directory: its sandbox, or its Iwd on a shared file system
    sandbox: str = ""
    killed: bool = False
    stopped: bool = False  # suspended -- also when asked before the job's process existed
    hold: tuple[str, int, int] | None = None  # (reason, code, subcode): the job is to be held
    runas: users.RunAs | None = None
    cgroup: cgroups.JobCgroup | None = None
    last_usage: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0
    io: starter_side.JobFiles | None = None  # file transfer, or the shared file system's Iwd and stdio
    executing: int = 0  # when the job's process started (epoch s): JobCurrentStartExecutingDate
    vacating: bool = False  # asked to leave (its KillSig sent): an exit now is no checkpoint to act on
    checkpoints: int = 0  # checkpoints this run sent to the spool
    last_checkpoint: int | None = None  # the number of the last checkpoint taken in this run
    earlier_cpu: tuple[float, float] = (0.0, 0.0)  # user, system CPU of the job's runs before its last restart
    _wake: asyncio.Event = field(default_factory=asyncio.Event, init=False, repr=False)  # ends a deferral wait (kill, vacate)

    # -- set-up ---------------------------------------------------------------------------
    def _knob(self, name: str, default: str | None = None) -> str | None:
        return self.config.get(name, default) if self.config is not None else default

    def _prepare(self) -> tuple[JobContext, Callable[[], None]]:
        """On the loop: the job's account, sandbox name, environment and the text of its ad files
        (the job ad is the startd's too: it is read and changed on the loop only); returns the
        job's context and the file work (``_make_files``) for the worker pool."""
        ad = self.job_ad
        runas = self.runas
        assert runas is not None
        uid, gid = runas.uid, runas.gid
        self.sandbox = sandbox.new_path(self.execute_dir, self.slot_id)
        assert self.io is not None
        cmd = str(ad.get_value("Cmd", "") or "")
        if not cmd and self.universe.needs_executable:
            raise StarterError("the job has no Cmd")
        transferred = bool(cmd) and ad.get_value("TransferExecutable", True) is not False and not self.io.shared_fs
        executable = os.path.join(self.sandbox, safe_name(cmd)) if transferred else cmd
        stdin_name = str(ad.get_value("In", "/dev/null") or "/dev/null")
        stdin = "/dev/null" if stdin_name == "/dev/null" else os.path.join(self.sandbox, safe_name(stdin_name))
        env = self._environment()
        for name, ids in self.assigned.items():  # the job's ad says which devices are its own
            if ids:
                ad[f"Assigned{name}"] = ",".join(ids)
        texts = {".job.ad": ad.to_old() + "\n"}
        env["_CONDOR_JOB_AD"] = os.path.join(self.sandbox, ".job.ad")
        if self.machine_ad is not None:  # what the slot gives the job (Cpus, Memory, AssignedGPUs...)
            texts[".machine.ad"] = self.machine_ad.to_old() + "\n"
            env["_CONDOR_MACHINE_AD"] = os.path.join(self.sandbox, ".machine.ad")
        request_memory = _int(ad.eval("RequestMemory"))
        self.environment = env
        ctx = JobContext(job_ad=ad, sandbox=self.sandbox, executable=executable,
                         arguments=jobenv.arguments(ad.get_value("Arguments"), ad.get_value("Args")),
                         environment=env, stdin=stdin, stdout=os.path.join(self.sandbox, STDOUT),
                         stderr=os.path.join(self.sandbox, STDERR), uid=uid, gid=gid,
                         request_cpus=_int(ad.eval("RequestCpus")) or 1, request_memory_mb=request_memory,
                         slot_name=self.slot_name, log=self.log,
                         job_id=f"{ad.get_value('ClusterId')}.{ad.get_value('ProcId')}",
                         memory_limit_mb=self.memory_mb or request_memory,
                         job_env=frozenset(jobenv.environment(ad.get_value("Environment"), ad.get_value("Env"))),
                         core_size=jobenv.core_size(ad.eval("CoreSize")))
        chirp_wanted = chirp.wanted(ad) and bool(self.chirp_address)
        use_cgroup = self.universe.local_processes
        return ctx, lambda: self._make_files(ctx, texts, transferred, chirp_wanted, use_cgroup)

    def _choose_user(self) -> None:
        """Who runs the job, and where its files are (a shared file system's Iwd is opened as that
        account).  On the loop: the account look-ups read files the page cache holds, and a hand-off
        to the worker pool costs more CPU than they do."""
        runas = users.choose(self.job_ad, self.slot_name, self.config)
        self.runas = runas = users.personal_fallback(self.job_ad, runas, self.execute_dir)
        self.io = starter_side.JobFiles(self.job_ad, self.files, self.config, self.slot_name, runas.name)

    def _make_files(self, ctx: JobContext, texts: dict[str, str], transferred: bool, chirp_wanted: bool,
                    use_cgroup: bool) -> None:
        """In the worker pool: the sandbox and its files, the job's cgroup, and the state file a
        restarted startd cleans up by -- written before the job's first process can exist.  The
        fewest file operations: the job's stdout and stderr are made here only when they must
        belong to another user (else the universe's open makes them)."""
        assert self.io is not None
        uid, gid = ctx.uid, ctx.gid
        sandbox.make_at(self.sandbox, self.execute_dir, uid, gid)
        if not self.io.shared_fs:
            self.io.urls = write_input(self.sandbox, self.files)
        if transferred:
            if not os.path.exists(ctx.executable):
                raise StarterError(f"executable {self.job_ad.get_value('Cmd')} was not transferred")
            os.chmod(ctx.executable, 0o755)
        for name, text in texts.items():
            with open(os.path.join(self.sandbox, name), "w") as f:
                f.write(text)
        if chirp_wanted:
            ctx.environment["_CONDOR_CHIRP_CONFIG"], self.chirp_cookie = chirp.write_config(self.sandbox,
                                                                                            self.chirp_address)
        if uid is not None:  # a checkpoint's stdout and stderr are continued, as HTCondor appends
            for p in (STDOUT, STDERR):
                open(os.path.join(self.sandbox, p), "ab" if p in self.files else "wb").close()
        sandbox.chown_tree(self.sandbox, uid, gid)
        joins = self._make_cgroup(ctx.memory_limit_mb) if use_cgroup else []
        self.started = time.time()
        self._write_state(None)
        stdin, stdout, stderr, cwd = self.io.stdio(ctx.stdin, ctx.stdout, ctx.stderr, self.sandbox)
        ctx.stdin, ctx.stdout, ctx.stderr, ctx.sandbox, ctx.join_fds = stdin, stdout, stderr, cwd, tuple(joins)
        self.workdir = cwd
        self.log.info("job %s: sandbox %s, user %s (%s), %s", ctx.job_id, self.sandbox, self.runas.name if self.runas
                      else "", self.runas.why if self.runas else "",
                      f"cgroup {self.cgroup.rel} (v{self.cgroup.layout.version})" if self.cgroup else "no cgroup")

    def _environment(self) -> dict[str, str]:
        """The job's environment (getenv was merged in at submit), plus what HTCondor's starter sets."""
        ad = self.job_ad
        env = jobenv.environment(ad.get_value("Environment"), ad.get_value("Env"))
        cpus = str(_int(ad.eval("RequestCpus")) or 1)
        for var in (self._knob("STARTER_NUM_THREADS_ENV_VARS") or THREAD_VARS).replace(",", " ").split():
            env.setdefault(var, cpus)
        env.update({"_CONDOR_SCRATCH_DIR": self.sandbox, "_CONDOR_SLOT": self.slot_name.split("@")[0],
                    "TMPDIR": self.sandbox, "TMP": self.sandbox, "TEMP": self.sandbox,
                    "BATCH_SYSTEM": "HTCondor"})
        env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
        env.update(assigned_env.environment(self.assigned, self._knob))
        return env

    def _make_cgroup(self, limit_mb: int) -> list[int]:
        """The job's cgroup with its CPU weight and memory limits (cgroup.apply_policy); the open
        cgroup.procs files the job's first process joins through ([] without a cgroup)."""
        base = self.config.get("BASE_CGROUP") if self.config is not None else "htcd"  # set empty: none
        if not base or os.geteuid() != 0:
            return []
        layout = cgroups.available(base.strip("/"), self.log.warning)
        if layout is None:
            return []
        group = cgroups.JobCgroup(layout, base.strip("/"), os.path.basename(self.sandbox))
        try:
            group.create()
            cgroups.apply_policy(group, self.config, self.job_ad, self.machine_ad, limit_mb, self.log)
            fds = group.open_joins()
        except OSError as exc:
            self.log.warning("cannot set up the job's cgroup %s (%s): following its processes without it",
                             group.rel, exc.strerror or exc)
            with contextlib.suppress(OSError):
                group.remove()
            return []
        self.cgroup = group
        return fds

    def _in_cgroup(self, pid: int) -> bool:
        """Is the job's first process in its cgroup (or already gone, so that it cannot tell)?"""
        assert self.cgroup is not None
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
            with open(f"/proc/{pid}/cgroup") as f:
                mine = f.read()
        except (OSError, psutil.Error):
            return True
        return not mine.strip() or f"/{self.cgroup.rel}\n" in mine + "\n" or pid in self.cgroup.procs()

    def _drop_cgroup(self) -> None:
        group, self.cgroup = self.cgroup, None
        if group is not None:
            with contextlib.suppress(OSError):
                group.remove()

    def _write_state(self, pgid: int | None) -> None:
        cg = {"paths": self.cgroup.paths, "version": self.cgroup.layout.version} if self.cgroup else None
        runas = self.runas
        sandbox.write_state(self.sandbox, pgid=pgid, cgroup=cg, start=self.started,
                            uid=runas.uid if runas is not None else None)

    async def _note_pgid(self) -> None:
        """Add the job's process group to its state file -- only without a cgroup: with one, the
        state written before the job started already names all a restart needs to kill it."""
        if self.running is not None and self.running.pgid and self.cgroup is None:
            await workers.run(self._write_state, self.running.pgid)

    # -- running --------------------------------------------------------------------------
    async def run(self) -> dict[str, Any]:
        """Run the job to its end; the reply the shadow gets."""
        start = time.time()
        before: set[str] = set()
        ctx: JobContext | None = None
        try:
            self._choose_user()
            ctx, make_files = self._prepare()
            await workers.run(make_files)
            assert self.io is not None
            if self.io.urls:  # plugins download in a thread: the startd's loop keeps serving
                await asyncio.to_thread(self.io.fetch, self.sandbox, ctx.uid, ctx.gid)
            before = set(os.listdir(self.sandbox))
            missed = await self._defer()
            if missed is not None or self.killed:
                self.io.close()
                for fd in ctx.join_fds:
                    os.close(fd)
                if missed is not None:
                    return await self._missed_deferral(missed, start)
                self.log.info("the job was stopped while its start was deferred: not starting it")
                try:
                    return await self._result(ExitStatus(signal=int(signal.SIGKILL)), before, start)
                finally:
                    await self._clean()
            # a self-checkpointing job that runs in its Iwd (shared file system) is restarted on the
            # same stdio descriptors: opening its Out and Err again would truncate them
            keep_stdio = self.io.shared_fs and checkpoint.wants_transfer(self.job_ad)
            try:
                self.running = await self.universe.start(ctx)
            finally:
                if not keep_stdio:
                    self.io.close()
                for fd in ctx.join_fds:
                    os.close(fd)
            if self.cgroup is not None and self.running.pgid and not self._in_cgroup(self.running.pgid):
                self.log.info("the %s universe did not put the job into its cgroup: following its processes",
                              self.universe.name or "job's")
                self._drop_cgroup()
            await self._note_pgid()
            if self.killed:  # killed or vacated while the job was being started
                self.kill()
            elif self.stopped:
                self._stop(True)
            self.log.info("started %s (pgid %s)", ctx.executable, self.running.pgid)
            self._executing()
            status = await self._watch(self.running)
            while checkpoint.is_checkpoint_exit(self.job_ad, status) and not (self.killed or self.vacating
                                                                               or self.hold):
                await self._checkpoint(before, status)
                if self.killed or self.vacating:
                    break
                self.earlier_cpu = (self.earlier_cpu[0] + status.user_cpu, self.earlier_cpu[1] + status.sys_cpu)
                status = await self._restart(ctx)
            self.io.close()
        except (StarterError, TransferError, UniverseError, OSError) as exc:
            self.log.error("job could not run: %s", exc)
            if self.io is not None:
                self.io.close()
            await self._clean()
            hold = ({"hold_code": exc.code, "hold_subcode": exc.subcode}
                    if isinstance(exc, (TransferError, UniverseError)) and exc.code else {})
            return {"error": str(exc), "start_time": start, "end_time": time.time(), **hold}
        except BaseException:
            self.kill()
            self.cleanup()
            raise
        try:
            reply = await self._result(status, before, start)
        finally:
            await self._clean()
        return reply

    async def _checkpoint(self, before: set[str], status: ExitStatus) -> None:
        """The job exited as it promised after a checkpoint: the checkpoint goes to the shadow,
        which keeps it in the job's spool; a checkpoint that cannot be sent or stored is logged
        and the job goes on from its sandbox (the spool keeps the previous one), as HTCondor's."""
        if self.io is not None and self.io.shared_fs:
            self.log.info("job exited with its checkpoint code; it runs in its Iwd on a shared file system, where "
                          "its checkpoint already is: restarting it")
            return
        number = checkpoint.next_number(self.job_ad, self.last_checkpoint)
        self.last_checkpoint = number
        now = time.time()
        self.log.info("job exited with %s after checkpoint %d: sending the checkpoint", f"signal {status.signal}"
                      if status.by_signal else f"status {status.exit_code}", number)
        files, why = checkpoint.collect(self.sandbox, self.job_ad, self.files, before, self.slot_name)
        if not why:
            if self.on_checkpoint is None:
                why = "no shadow takes checkpoints here"
            else:
                try:
                    why = await self.on_checkpoint({"number": number, "files": files, "time": int(now),
                                                    "usage": self.usage(fresh=False)})
                except Exception as exc:  # the shadow's side failed: the job still goes on
                    why = f"{type(exc).__name__}: {exc}"
        if why:
            self.log.warning("checkpoint %d was not stored: %s", number, why)
            return
        self.checkpoints += 1
        self.job_ad["CheckpointNumber"] = number
        self.job_ad["JobLastCheckpointTime"] = int(now)
        self.log.info("checkpoint %d stored (%d files, %d bytes); restarting the job in its sandbox", number,
                      len(files), entries.inline_size(files))

    async def _restart(self, ctx: JobContext) -> ExitStatus:
        """Start the job again in the same sandbox, with the same arguments (and its cgroup)."""
        joins = self.cgroup.open_joins() if self.cgroup is not None else []
        again = replace(ctx, join_fds=tuple(joins))  # on a shared file system its stdio stays open for this
        try:
            self.running = await self.universe.start(again)
        finally:
            for fd in joins:
                os.close(fd)
        await self._note_pgid()
        if self.killed:
            self.kill()
        elif self.stopped:
            self._stop(True)
        self.log.info("restarted %s after its checkpoint (pgid %s)", again.executable, self.running.pgid)
        return await self._watch(self.running)

    def _deferral(self) -> tuple[float, float] | None:
        """(DeferralTime, DeferralWindow) when the job asks to start at a set time, else None."""
        when = self.job_ad.eval("DeferralTime")
        if isinstance(when, bool) or not isinstance(when, (int, float)):
            return None
        window = self.job_ad.eval("DeferralWindow")
        if isinstance(window, bool) or not isinstance(window, (int, float)):
            window = 0
        return float(when), float(max(0, window))

    async def _defer(self) -> str | None:
        """Hold the job's start until its DeferralTime, as HTCondor's starter does; a time missed
        by more than DeferralWindow seconds is the returned reason for the job's hold.  A kill or
        vacate meanwhile ends the wait (the job then never starts)."""
        deferral = self._deferral()
        if deferral is None:
            return None
        when, window = deferral
        now = time.time()
        if now > when + window:
            self.log.info("job missed its deferred execution time %s by %d s (DeferralWindow = %d)",
                          time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when)), int(now - when), int(window))
            return MISSED_DEFERRAL
        if when <= now:
            return None
        self.log.info("deferring the job's start by %.0f s, until %s", when - now,
                      time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when)))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=when - now)
        return None

    async def _missed_deferral(self, reason: str, start: float) -> dict[str, Any]:
        await self._clean()
        return {"hold_reason": reason, "hold_code": HOLD_MISSED_DEFERRAL, "hold_subcode": 0, "exit_code": None,
                "signal": None, "killed": False, "start_time": start, "end_time": time.time()}

    def _executing(self) -> None:
        """Tell the shadow when the job began executing (JobCurrentStartExecutingDate, which
        AllowedExecuteDuration is measured from): after the input and any deferral."""
        self.executing = int(time.time())
        if self.on_update is None:
            return
        try:
            self.on_update({"JobCurrentStartExecutingDate": self.executing})
        except Exception:  # a hook's bug must not end the job
            self.log.exception("start notice hook failed")

    async def _clean(self) -> None:
        """cleanup() in the worker pool, then wait (briefly, without blocking the loop) for the
        killed processes to leave the job's cgroup, so that it is removed before the job's end is
        reported; the state file goes last."""
        if await workers.run(self._clean_files):
            return
        group = self.cgroup
        assert group is not None
        for _ in range(250):
            await workers.run(group.kill_all)
            await asyncio.sleep(0.02)
            if await workers.run(self._remove_cgroup, tries=0, quiet=True):
                await workers.run(sandbox.remove_state, self.sandbox)
                return
        self._remove_cgroup()

    def _clean_files(self) -> bool:
        """In the worker pool: cleanup(), then one try at the job's cgroup and, once it is gone, the
        state file; whether all is gone (else killed processes are still leaving the cgroup)."""
        self.cleanup(wait=False)
        if self.cgroup is None or not self.sandbox:
            return True
        if not self._remove_cgroup(tries=0, quiet=True):
            return False
        sandbox.remove_state(self.sandbox)
        return True

    async def _watch(self, running: RunningJob) -> ExitStatus:
        """Wait for the job's end, sampling its usage first after STARTER_INITIAL_UPDATE_INTERVAL,
        then every STARTER_UPDATE_INTERVAL seconds."""
        waiter = asyncio.ensure_future(running.wait())
        delay = min(self._interval(initial=True), self._interval(initial=False))
        try:
            while True:
                done, _ = await asyncio.wait({waiter}, timeout=delay)
                if done:
                    return waiter.result()
                self.update()
                delay = self._interval(initial=False)
        finally:
            waiter.cancel()

    def _interval(self, initial: bool) -> float:
        if self.config is None:
            return 8.0 if initial else 300.0
        if initial:
            return float(max(1, self.config.get_int("STARTER_INITIAL_UPDATE_INTERVAL", 8)))
        return float(max(1, self.config.get_int("STARTER_UPDATE_INTERVAL", 300)))

    def update(self) -> dict[str, Any]:
        """One periodic sample: into the job ad (so policy expressions see it), then to
        ``on_sample`` (the startd) and ``on_update`` (the shadow)."""
        usage = self.usage(fresh=True)
        self._check_memory(usage)
        for hook in (self.on_sample, self.on_update):
            if hook is not None:
                try:
                    sample = dict(usage)
                    if hook is self.on_update and self.executing:  # again, should the first notice be lost
                        sample["JobCurrentStartExecutingDate"] = self.executing
                    hook(sample)
                except Exception:  # a hook's bug must not end the job
                    self.log.exception("usage update hook failed")
        return usage

    def usage(self, fresh: bool = True) -> dict[str, Any]:
        """The job's usage as the job ad spells it (sizes in KiB, MemoryUsage in MB, CPU in
        seconds); ImageSize, ResidentSetSize and MemoryUsage are the peaks seen so far."""
        if not fresh and self.last_usage:
            return dict(self.last_usage)
        if self.running is None and not self.last_usage:
            return {"ImageSize": 0, "ResidentSetSize": 0, "MemoryUsage": 0, "RemoteUserCpu": 0.0,
                    "RemoteSysCpu": 0.0, "DiskUsage": monitor.disk_kib(self.sandbox) if self.sandbox else 0}
        return self._apply_usage(self._measure())

    def _measure(self) -> dict[str, Any]:
        """A fresh sample of the job's processes, cgroup and sandbox; reads only (the job ad is not
        touched)."""
        now = monitor.sample(monitor.tree(self.pid, self.cgroup), self.cgroup, self.sandbox)
        measured = self.running.usage() if self.running is not None else None
        if measured:  # a container engine's figures (the job is not in this process tree)
            now.update({k: v for k, v in measured.items() if k in now})
        return now

    def _final_sample(self) -> tuple[dict[str, Any], int, int]:
        """(usage sample, OOM kills, peak memory bytes) of the ended job (/proc and the cgroup's
        files: no disk to wait for)."""
        now = self._measure() if self.running is not None or self.last_usage else {}
        group = self.cgroup
        return now, group.oom_kills() if group is not None else 0, group.peak_bytes() if group is not None else 0

    def _apply_usage(self, now: dict[str, Any]) -> dict[str, Any]:
        """A sample into the peaks and the job ad (on the loop: the startd reads the ad too)."""
        for k in _PEAKS:
            now[k] = max(now[k], self.last_usage.get(k, 0))
        for k in ("RemoteUserCpu", "RemoteSysCpu"):  # CPU time never goes back
            now[k] = max(now[k], self.last_usage.get(k, 0.0))
        self.last_usage = now
        for k, v in now.items():
            self.job_ad[k] = v
        return dict(now)

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the job so far (the startd's load sample)."""
        if self.cgroup is not None:
            cpu = self.cgroup.cpu_seconds()
            if cpu is not None:
                return cpu[0] + cpu[1]
        total = 0.0
        for proc in monitor.tree(self.pid, self.cgroup):
            with contextlib.suppress(psutil.Error):
                t = proc.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
        return total

    def _memory_limit_mb(self) -> int:
        return self.memory_mb or _int(self.job_ad.eval("RequestMemory"))

    def _check_memory(self, usage: dict[str, Any], oom_kills: int | None = None) -> None:
        """Over the limit: with a cgroup the kernel's OOM killer struck; without one (and the
        hard policy) the sample shows it.  Either way the job is held and killed, as HTCondor's."""
        if self.hold is not None or self.killed:
            return
        limit = self._memory_limit_mb()
        if self.cgroup is not None:
            if (self.cgroup.oom_kills() if oom_kills is None else oom_kills) > 0:
                self._hold_for_memory(limit, usage, cgroup=True)
            return
        policy = (self._knob("CGROUP_MEMORY_LIMIT_POLICY", "hard") or "hard").lower()
        if policy == "hard" and limit > 0 and usage.get("MemoryUsage", 0) > limit:
            self._hold_for_memory(limit, usage, cgroup=False)

    def _hold_for_memory(self, limit_mb: int, usage: dict[str, Any], cgroup: bool) -> None:
        used = max(int(usage.get("MemoryUsage", 0) or 0),
                   (self.cgroup.peak_bytes() + (1 << 20) - 1) >> 20 if self.cgroup else 0)
        what = "cgroup memory limit" if cgroup else "memory limit"
        reason = (f"Job has gone over {what} of {limit_mb} megabytes. Last measured usage: {used} megabytes.  "
                  "Consider resubmitting with a higher request_memory.")
        self.log.info("Job was held due to OOM event: %s", reason)
        self.hold = (reason, HOLD_OUT_OF_RESOURCES, HOLD_SUBCODE_MEMORY)
        self.kill()

    async def _result(self, status: ExitStatus, before: set[str], start: float) -> dict[str, Any]:
        """The shadow's reply: the output is read (and big files moved out) in the worker pool."""
        peak = 0
        with contextlib.suppress(Exception):
            now, ooms, peak = self._final_sample()
            if now:
                self._apply_usage(now)
            if self.hold is None:
                self._check_memory(self.usage(fresh=False), ooms)
        shared = self.io is not None and self.io.shared_fs  # the job wrote its output in its Iwd itself
        files, missing, failure, stdout, stderr, staged = await workers.run(self._collect, shared, before)
        usage = self.last_usage or self.usage(fresh=True)
        user_cpu = max(status.user_cpu + self.earlier_cpu[0], float(usage.get("RemoteUserCpu", 0.0)))
        sys_cpu = max(status.sys_cpu + self.earlier_cpu[1], float(usage.get("RemoteSysCpu", 0.0)))
        peak_kib = peak // 1024
        max_rss = max(status.max_rss_kb, int(usage.get("ResidentSetSize", 0)), peak_kib)
        hold_reason, hold_code, hold_subcode = self.hold or (status.hold_reason, status.hold_code, 0)
        self.log.info("job exited: %s%s", f"signal {status.signal}" if status.by_signal else
                      f"status {status.exit_code}", f"; held: {hold_reason}" if hold_reason else "")
        return {
            "exit_code": status.exit_code, "signal": status.signal, "killed": self.killed,
            "user_cpu": user_cpu, "sys_cpu": sys_cpu, "max_rss_kb": max_rss,
            "hold_reason": hold_reason, "hold_code": hold_code, "hold_subcode": hold_subcode,
            "usage": usage, "stdout": stdout, "stderr": stderr,
            "files": files, "missing": missing, "transfer_failure": failure, "shared_fs": shared,
            "url_bytes": self.io.fetched if self.io is not None else 0,
            "start_time": start, "end_time": time.time(),
            **({"staged_output": staged} if staged else {}),
        }

    def _collect(self, shared: bool, before: set[str]) -> tuple[dict[str, Any], list[str], Any, Any, Any, Any]:
        """(files, missing, failure, stdout, stderr, staged): the job's output, read from its
        sandbox (in the worker pool)."""
        files, missing, failure = ({}, [], None) if shared else collect_output(
            self.sandbox, self.job_ad, self.files, before, {STDOUT, STDERR, ".job.ad"}, self.slot_name,
            entries.Inline(outgoing.STREAM_OVER, outgoing.INLINE_BUDGET))
        # output too big for the reply leaves the sandbox (by rename) before it is removed: the
        # startd streams it to the shadow when asked (htcd.transfer.outgoing)
        staging = outgoing.Staging(self.execute_dir, self.slot_name)
        try:
            files, failure = staging.files(self.sandbox, files, failure)
            stdout, stderr = (b"", b"") if shared else (staging.std(self.sandbox, STDOUT, "stdout"),
                                                        staging.std(self.sandbox, STDERR, "stderr"))
        except BaseException:
            staging.discard()
            raise
        return files, missing, failure, stdout, stderr, staging.note()

    # -- signals --------------------------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL to every process of the job (its cgroup, else its group and tree)."""
        self.killed = True
        self._wake.set()
        if self.running is None:
            return
        self.running.kill()
        if self.cgroup is not None:
            self.cgroup.kill_all()
        else:
            monitor.kill(monitor.tree(self.pid, None))

    def signal(self, signum: int) -> None:
        if self.running is not None:
            self.running.signal(signum)

    def _stop(self, stop: bool) -> None:
        """Suspend or continue the whole tree: SIGSTOP/SIGCONT to every process of it (a setsid'd
        child is not in the process group), as HTCondor's suspend of a job's family.  With a
        freezer the group is frozen while the signals go out, so that no process forks past them."""
        if self.running is None:
            return
        frozen = False
        if stop and self.cgroup is not None and self.cgroup.can_freeze():
            with contextlib.suppress(OSError):
                self.cgroup.freeze(True)
                frozen = True
        signum = signal.SIGSTOP if stop else signal.SIGCONT
        try:
            self.signal(signum)
            for proc in monitor.tree(self.pid, self.cgroup):
                with contextlib.suppress(psutil.Error):
                    proc.send_signal(signum)
        finally:
            if frozen and self.cgroup is not None:
                with contextlib.suppress(OSError):
                    self.cgroup.freeze(False)

    def suspend(self) -> None:
        """Claimed/Suspended: the whole job stops.  The stop is checked again a few times (a
        process caught forking, or frozen while the SIGSTOP arrived, can miss it) and repeated for
        any process of the job that is not stopped yet."""
        self.stopped = True
        self._stop(True)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for delay in _RESTOP_DELAYS:
            loop.call_later(delay, self._restop)

    def _restop(self) -> None:
        if not self.stopped or self.running is None:
            return
        if self.cgroup is not None and self.cgroup.can_freeze():
            with contextlib.suppress(OSError):  # a group left frozen would hold its SIGSTOPs back
                self.cgroup.freeze(False)
        for proc in monitor.tree(self.pid, self.cgroup):
            with contextlib.suppress(psutil.Error):
                if proc.status() not in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                    self.log.info("process %d of the suspended job was not stopped: SIGSTOP again", proc.pid)
                    proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.stopped = False
        self._stop(False)

    def vacate(self) -> None:
        """The soft kill: the job's KillSig (SIGTERM unless it asks otherwise), after resuming it
        so that it can act on it.  A job not started yet has nothing to save: killed."""
        if self.running is None:
            self.kill()
            return
        self.resume()
        self.vacating = True
        sig = jobenv.kill_signal(self.job_ad.get_value("KillSig"))
        self.log.info("vacating the job: %s", signal.Signals(sig).name)
        self.signal(sig)

    def wants_checkpoint_signal(self) -> bool:
        return self.job_ad.get_value("WantCheckpointSignal") is True

    def checkpoint(self) -> bool:
        """A periodic checkpoint: the job's CheckpointSig (else its KillSig), only for a job that
        asked with ``+WantCheckpointSignal = True``."""
        if self.running is None or not self.wants_checkpoint_signal():
            return False
        value = self.job_ad.get_value("CheckpointSig")
        sig = jobenv.kill_signal(value if value is not None else self.job_ad.get_value("KillSig"))
        self.log.info("sending the job its checkpoint signal %s", signal.Signals(sig).name)
        self.signal(sig)
        self.job_ad["LastCheckpointTime"] = int(time.time())
        return True

    @property
    def pid(self) -> int | None:
        """The leader of the job's process tree (its process group), if it runs as one."""
        return self.running.pgid if self.running is not None else None

    # -- clean-up -------------------------------------------------------------------------
    def cleanup(self, wait: bool = True) -> None:
        """Kill whatever the job left running and remove its sandbox (and cgroup; ``wait``:
        retry that from the event loop while killed processes are still leaving it)."""
        left = 0
        if self.cgroup is not None:
            left += self.cgroup.kill_all()
        if self.running is not None and self.running.pgid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.running.pgid, signal.SIGKILL)
            if self.cgroup is None:
                left += monitor.kill(monitor.tree(self.running.pgid, None))
                uid = self.runas.uid if self.runas is not None else None
                left += monitor.kill(monitor.marked(self.sandbox, self.started, uid))
        if self.runas is not None and self.runas.dedicated and self.runas.uid:
            left += monitor.kill(monitor.user_processes(self.runas.uid))
        if left:
            self.log.info("killed %d processes the job left behind", left)
        if self.sandbox:
            shutil.rmtree(self.sandbox, ignore_errors=True)
            if self.cgroup is None or (wait and self._remove_cgroup()):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(sandbox.state_path(self.sandbox))

    def _remove_cgroup(self, tries: int = 100, quiet: bool = False) -> bool:
        """rmdir the cgroup; while killed processes are still leaving it, try again shortly
        (the state file stays until then, so a crash meanwhile is still cleaned up)."""
        assert self.cgroup is not None
        try:
            if self.cgroup.remove():
                cgroups.sweep_stale(self.cgroup.paths, self.log)
                return True
        except OSError as exc:
            self.log.warning("cannot remove cgroup %s: %s", self.cgroup.rel, exc)
            return True
        if tries <= 0:
            if quiet:
                return False
            self.log.warning("cgroup %s still has processes; a restart of the startd removes it", self.cgroup.rel)
            return False
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False

        def again() -> None:
            assert self.cgroup is not None
            self.cgroup.kill_all()
            if self._remove_cgroup(tries - 1):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(sandbox.state_path(self.sandbox))

        loop.call_later(0.05, again)
        return False


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value)
