"""The master daemon: children as OS processes, restarted with backoff, shut down in order."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any

from htcd.classad import ClassAd
from htcd.daemon import Daemon
from htcd.wire.server import Handler, Request

KNOWN = ("COLLECTOR", "NEGOTIATOR", "SCHEDD", "STARTD")
# The collector first, so that the others find it; shut down in the reverse order.
START_ORDER = {"COLLECTOR": 0, "NEGOTIATOR": 1, "STARTD": 2, "SCHEDD": 3}


@dataclass
class Child:
    name: str
    proc: asyncio.subprocess.Process | None = None
    started: float = 0.0
    restarts: int = 0
    watcher: asyncio.Task[None] | None = None


class Master(Daemon):
    subsystem = "MASTER"
    ad_type = "DaemonMaster"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.children: dict[str, Child] = {}

    def command_handlers(self) -> dict[str, Handler]:
        return {"DAEMONS_OFF": self.cmd_off}

    async def cmd_off(self, req: Request) -> str:
        self.log.info("DAEMONS_OFF from %s", req.identity)
        self.request_stop(fast=bool(req.arg("fast")))
        return "ok"

    def reconfigured(self) -> None:
        """Pass the reconfig on to the children (SIGHUP), as HTCondor's master does."""
        for child in self.children.values():
            if child.proc and child.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    child.proc.send_signal(signal.SIGHUP)

    def daemon_list(self) -> list[str]:
        names = [n.upper() for n in self.config.get_list("DAEMON_LIST", ["MASTER"])]
        unknown = [n for n in names if n != "MASTER" and n not in KNOWN]
        for n in unknown:
            self.log.error("DAEMON_LIST names %s, which htcd does not have; ignoring it", n)
        return sorted((n for n in names if n in KNOWN), key=lambda n: START_ORDER[n])

    async def startup(self) -> None:
        for name in self.daemon_list():
            child = Child(name)
            self.children[name] = child
            await self.start_child(child)
            if name == "COLLECTOR":
                await self._wait_for_collector()

    async def _wait_for_collector(self, timeout: float = 20.0) -> None:
        path = self.config.get("COLLECTOR_ADDRESS_FILE")
        deadline = time.monotonic() + timeout
        while path and not os.path.exists(path) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    async def start_child(self, child: Child) -> None:
        env = dict(os.environ, HTCD_MASTER_PID=str(os.getpid()))
        child.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "htcd", child.name.lower(), "-f",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, env=env)
        child.started = time.monotonic()
        self.log.info("Started DaemonCore process \"%s -f\", pid and pgroup = %d", child.name.lower(),
                      child.proc.pid)
        child.watcher = self.spawn(self._watch(child, child.proc), f"watch {child.name}")

    async def _watch(self, child: Child, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        async for line in proc.stderr:  # a daemon's last words (a traceback) go to MasterLog
            self.log.info("%s stderr: %s", child.name, line.decode(errors="replace").rstrip())
        status = await proc.wait()
        if self.stopping.is_set():
            return
        how = f"signal {-status}" if status < 0 else f"status {status}"
        self.log.error("The %s (pid %d) exited with %s", child.name, proc.pid, how)
        if time.monotonic() - child.started > self.knob_int("MASTER_RECOVER_FACTOR", 300):
            child.restarts = 0
        delay = min(self.config.get_float("MASTER_BACKOFF_CEILING", 3600.0),
                    self.config.get_float("MASTER_BACKOFF_CONSTANT", 9.0)
                    * self.config.get_float("MASTER_BACKOFF_FACTOR", 2.0) ** child.restarts)
        child.restarts += 1
        self.log.info("restarting %s in %.1f seconds (restart %d)", child.name, delay, child.restarts)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), delay)
            return
        await self.start_child(child)

    async def shutdown(self, fast: bool) -> None:
        order = sorted(self.children.values(), key=lambda c: -START_ORDER[c.name])
        sig = signal.SIGQUIT if fast else signal.SIGTERM
        for child in order:
            if child.proc and child.proc.returncode is None:
                self.log.info("sending %s to %s (pid %d)", sig.name, child.name, child.proc.pid)
                with contextlib.suppress(ProcessLookupError):
                    child.proc.send_signal(sig)
        timeout = self.config.get_float("SHUTDOWN_GRACEFUL_TIMEOUT", 1800.0) if not fast else 10.0
        await self._reap(order, timeout)

    async def _reap(self, children: list[Child], timeout: float) -> None:
        procs = [c.proc for c in children if c.proc and c.proc.returncode is None]
        if not procs:
            return
        done, pending = await asyncio.wait([asyncio.ensure_future(p.wait()) for p in procs], timeout=timeout)
        for p in procs:
            if p.returncode is None:
                self.log.error("pid %d did not exit in time; killing it", p.pid)
                with contextlib.suppress(ProcessLookupError):
                    p.kill()
        if pending:
            await asyncio.wait(pending, timeout=10)
        for c in children:
            if c.watcher:
                c.watcher.cancel()

    def make_ad(self) -> ClassAd:
        ad = self.base_ad("DaemonMaster")
        ad["DaemonList"] = ", ".join(["MASTER", *self.children])
        ad["MasterIpAddr"] = str(self.server.address)
        for c in self.children.values():
            ad[f"{c.name.title()}Pid"] = c.proc.pid if c.proc else 0
        return ad

