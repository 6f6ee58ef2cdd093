"""The example universe: runs the job as a local process, like vanilla, and tells it so
through ``EXAMPLE_UNIVERSE`` in its environment."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

from htcd.universe import ExitStatus, JobContext, RunningJob, Universe, UniverseError, join_cgroup

from htcd_example import __version__


class ExampleJob(RunningJob):
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pgid = proc.pid  # the job leads its own session; the starter reaps the group

    async def wait(self) -> ExitStatus:
        code = await self.proc.wait()
        return ExitStatus(exit_code=code) if code >= 0 else ExitStatus(signal=-code)

    def signal(self, signum: int) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signum)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)


class ExampleUniverse(Universe):
    name = "example"
    greeting = "hello"

    def configure(self, config: Any) -> None:
        """Read the knobs (``config`` is the startd's htcd.config.Config), again at each reconfig."""
        self.greeting = config.get("EXAMPLE_GREETING") or "hello"

    def machine_attributes(self) -> dict[str, object]:
        return {"ExampleUniverseVersion": __version__}

    async def start(self, ctx: JobContext) -> RunningJob:
        env = {**ctx.environment, "EXAMPLE_UNIVERSE": self.greeting}
        try:
            with open(ctx.stdin, "rb") as i, open(ctx.stdout, "ab") as o, open(ctx.stderr, "ab") as e:
                proc = await asyncio.create_subprocess_exec(
                    ctx.executable, *ctx.arguments, cwd=ctx.sandbox, env=env, stdin=i, stdout=o, stderr=e,
                    start_new_session=True, user=ctx.uid, group=ctx.gid,
                    extra_groups=[] if ctx.uid is not None and os.geteuid() == 0 else None,
                    preexec_fn=join_cgroup(ctx.join_fds))
        except OSError as exc:
            raise UniverseError(f"cannot start {ctx.executable}: {exc.strerror or exc}") from None
        return ExampleJob(proc)
