"""The vanilla universe: the job is a process tree in its own session on the execute point.

When the starter made a cgroup for the job, the first process joins it before it executes the
job (``join_cgroup``), so everything the job spawns is counted, limited and killed with it.

The process is reaped through a pidfd watched by the event loop (no thread per job), with
``wait4`` so that its CPU time and peak memory come back with the exit status.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess

from htcd.hookspecs import hookimpl
from htcd.universe import (
    ExitStatus,
    JobContext,
    RunningJob,
    Universe,
    UniverseError,
    UniverseRegistry,
    spawning,
)


class VanillaJob(RunningJob):
    pgid: int  # always set: the job leads its own process group

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pgid = proc.pid  # start_new_session: the job leads its own process group
        self._exited = asyncio.get_running_loop().create_future()
        self._pidfd = os.pidfd_open(proc.pid)
        asyncio.get_running_loop().add_reader(self._pidfd, self._reap)

    def _reap(self) -> None:
        try:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status, usage = self.proc.pid, 0, None
        if pid == 0:
            return
        asyncio.get_running_loop().remove_reader(self._pidfd)
        os.close(self._pidfd)
        self.proc.returncode = os.waitstatus_to_exitcode(status)  # keeps Popen from reaping again
        result = ExitStatus()
        if os.WIFSIGNALED(status):
            result.signal = os.WTERMSIG(status)
        else:
            result.exit_code = os.WEXITSTATUS(status)
        if usage is not None:
            result.user_cpu, result.sys_cpu, result.max_rss_kb = usage.ru_utime, usage.ru_stime, usage.ru_maxrss
        if not self._exited.done():
            self._exited.set_result(result)

    async def wait(self) -> ExitStatus:
        return await asyncio.shield(self._exited)

    def signal(self, signum: int) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pgid, signum)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)


class VanillaUniverse(Universe):
    name = "vanilla"

    async def start(self, ctx: JobContext) -> RunningJob:
        # Forking waits for the child's exec (and opening the job's files for the disk): done in a
        # thread, so that the startd's loop serves other jobs meanwhile.  A start whose caller is
        # cancelled is waited for and its process killed: no job runs that nobody follows.
        spawn = asyncio.ensure_future(asyncio.to_thread(self._spawn, ctx))
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                started = await spawn
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(started.pid, signal.SIGKILL)
                started.wait()
            raise
        return VanillaJob(proc)

    @staticmethod
    def _spawn(ctx: JobContext) -> subprocess.Popen[bytes]:
        try:
            with open(ctx.stdin, "rb") as stdin, open(ctx.stdout, "ab") as out, open(ctx.stderr, "ab") as err, \
                    spawning(ctx) as setup:
                return subprocess.Popen(
                    [ctx.executable, *ctx.arguments], cwd=ctx.sandbox, env=ctx.environment,
                    stdin=stdin, stdout=out, stderr=err, start_new_session=True, close_fds=True,
                    user=ctx.uid, group=ctx.gid, extra_groups=[] if ctx.uid is not None and os.geteuid() == 0 else None,
                    preexec_fn=setup,
                )
        except OSError as exc:
            raise UniverseError(f"cannot start {ctx.executable}: {exc.strerror or exc}") from None


@hookimpl
def htcd_register_universes(registry: UniverseRegistry) -> None:
    registry.add("vanilla", VanillaUniverse)
