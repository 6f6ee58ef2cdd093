"""The master daemon: keeps every daemon of DAEMON_LIST alive, as HTCondor's condor_master does.

- Children are OS processes (``python -m htcd <daemon> -f``).  One that dies is restarted after
  a backoff (``htcd/master/backoff.py``); one that exits with status 99 (DAEMON_NO_RESTART, e.g.
  after DAEMON_SHUTDOWN) or was turned off with ``htcd off`` stays off until ``htcd on``.
- Hang detection: each child sends DC_CHILDALIVE with the timeout it promises; a child that
  misses it is killed (SIGABRT first with NOT_RESPONDING_WANT_CORE, then SIGKILL) and restarted.
- Every MASTER_CHECK_NEW_EXEC_INTERVAL the master looks at the installation (MASTER_WATCH_FILE);
  a new one stops the children per MASTER_NEW_BINARY_RESTART and re-executes the master.
- Every MASTER_CHECK_DISK_INTERVAL it checks the free space under LOG and SPOOL; below
  MASTER_MIN_FREE_DISK it stops the children gracefully and exits with status 99.
- Stopping is HTCondor's: peaceful (no time limit), graceful (SIGTERM, SIGQUIT after
  SHUTDOWN_GRACEFUL_TIMEOUT), fast (SIGQUIT, SIGKILL after SHUTDOWN_FAST_TIMEOUT); startds go
  first, the collector last.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from typing import Any

from htcd.classad import ClassAd
from htcd.daemon import Daemon, keepalive
from htcd.errors import UserError
from htcd.master import checks, fdlimit
from htcd.master.backoff import Backoff, seconds_text
from htcd.master.child import FAST, GRACEFUL, KILL, KNOWN, PEACEFUL, RANK, START_ORDER, Child, mode_of
from htcd.wire import locate
from htcd.wire.client import acall
from htcd.wire.errors import CommandError, WireError
from htcd.wire.server import Handler, Request

SHUTDOWN_GRACEFUL_TIMEOUT = 1800.0
SHUTDOWN_FAST_TIMEOUT = 300.0
CORE_WAIT = 600.0  # how long a hung child gets to write its core before SIGKILL (HTCondor's)
_STOP_STATUSES = (0, -signal.SIGTERM, -signal.SIGQUIT, -signal.SIGKILL)
_ADVERBS = {GRACEFUL: "Gracefully", PEACEFUL: "Peacefully", FAST: "Fast"}


class Master(Daemon):
    subsystem = "MASTER"
    ad_type = "DaemonMaster"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.children: dict[str, Child] = {}
        self.daemons_off = False  # DAEMONS_OFF / START_DAEMONS = false: start nothing until "on"
        self.restart_self = False  # re-execute the master once the children are gone
        self.restart_delay = 0.0
        self._watch_stamp: float | None = None
        self._new_exec_seen = False
        self._start_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._invalidated = False
        self._leaving: set[Child] = set()  # removed from DAEMON_LIST, not yet gone
        self._hung_scanner: asyncio.Task[None] | None = None
        self._bootstrap_security()

    def _bootstrap_security(self) -> None:
        """The central manager's keys, CA, host certificate and daemon token, created if missing
        (htcd/master/keys.py) before any daemon starts; the server then uses them."""
        from htcd.master import keys
        from htcd.wire.tokens import TokenError

        try:
            keys.bootstrap(self.config, self.log, self.hostname, [locate.bind_host(self.config)])
        except (OSError, TokenError) as exc:
            self.log.error("security bootstrap failed: %s", exc)
        lacking = keys.missing(self.config)
        if lacking:
            self.log.info("no network authentication set up yet (only local FS connections work); missing: %s",
                          "; ".join(lacking))
        self._configure_security()
        self._started = False  # no ad updates before the collector had its chance to start

    def command_handlers(self) -> dict[str, Handler]:
        return {"DAEMONS_OFF": self.cmd_daemons_off, "DAEMONS_ON": self.cmd_daemons_on,
                "DAEMON_OFF": self.cmd_daemon_off, "DAEMON_ON": self.cmd_daemon_on,
                "RESTART": self.cmd_restart, "DC_CHILDALIVE": self.cmd_child_alive}

    def _bg(self, coro: Any, what: str) -> asyncio.Task[Any]:
        """A background task held until it ends (the event loop keeps only weak references)."""
        task = self.spawn(coro, what)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- configuration ------------------------------------------------------------------------
    def daemon_list(self) -> list[str]:
        """DAEMON_LIST's daemons (MASTER aside) in start order; with USE_SHARED_PORT and
        AUTO_INCLUDE_SHARED_PORT_IN_DAEMON_LIST (both true), SHARED_PORT too, as HTCondor's."""
        names = [n.upper() for n in self.config.get_list("DAEMON_LIST", ["MASTER"])]
        if (locate.uses_shared_port(self.config) and "SHARED_PORT" not in names
                and self.config.get_bool("AUTO_INCLUDE_SHARED_PORT_IN_DAEMON_LIST", True)):
            names.append("SHARED_PORT")
        for n in names:
            if n != "MASTER" and n not in KNOWN:
                self.log.error("DAEMON_LIST names %s, which htcd does not have; ignoring it", n)
        return sorted(dict.fromkeys(n for n in names if n in KNOWN), key=lambda n: START_ORDER[n])

    def ordered(self) -> list[Child]:
        return sorted(self.children.values(), key=lambda c: START_ORDER[c.name])

    def _timeout(self, knob: str, default: float) -> float:
        return max(0.0, self.config.get_float(knob, default))

    def reconfigured(self) -> None:
        """Follow DAEMON_LIST changes, then pass the reconfig on to the children (SIGHUP)."""
        wanted = self.daemon_list()
        for name in [n for n in self.children if n not in wanted]:
            child = self.children.pop(name)
            self.log.info("%s is no longer in DAEMON_LIST: stopping it", name)
            self._cancel_restart(child)
            if child.running:
                self._leaving.add(child)
                self._bg(self._stop_removed(child), f"stop {name}")
        added = [n for n in wanted if n not in self.children]
        for name in added:
            self.children[name] = Child(name, on_hold=self.daemons_off)
        if added and not self.daemons_off and not self.stopping.is_set():
            self._bg(self.start_all(), "start new daemons")
        for child in self.ordered():
            if child.running and child.stop_state is None:
                self._signal(child, signal.SIGHUP)
        self.publish_soon()

    # -- starting -------------------------------------------------------------------------------
    async def startup(self) -> None:
        fdlimit.raise_limit(self.config, self.log)  # before any daemon starts: they inherit it
        for name in self.daemon_list():
            self.children[name] = Child(name)
        watched = checks.watch_file(self.config)
        self._watch_stamp = checks.timestamp(watched)
        mode, _ = checks.restart_mode(self.config)
        if mode != "NEVER":
            self.log.info("Master restart (%s) is watching %s (mtime:%d)", mode, watched, self._watch_stamp or 0)
        # not a daemon timer: hang detection goes on while the master stops its daemons
        self._hung_scanner = asyncio.create_task(self._scan_hung_forever(), name="hung children")
        self.every(self._new_exec_interval, self._check_new_exec, "new installation check",
                   first=min(5.0, self._new_exec_interval()))
        self.every(self._disk_interval, self._check_disk, "free disk check", first=self._disk_interval())
        if await self._check_disk():
            return
        if not self.config.get_bool("START_DAEMONS", True):
            self.log.info("START_DAEMONS is false: no daemon starts until 'htcd on'")
            self.daemons_off = True
            for child in self.children.values():
                child.on_hold = True
            self._started = True
            return
        await self.start_all()
        self._started = True

    def publish_soon(self) -> None:
        if self._started:
            super().publish_soon()

    async def start_all(self) -> None:
        """Start every daemon that is down and not held, the collector first."""
        async with self._start_lock:
            for child in self.ordered():
                if self.stopping.is_set():
                    return
                if child.running or child.on_hold or self.children.get(child.name) is not child:
                    continue
                self._cancel_restart(child, quiet=True)
                await self.start_child(child)
                if child.name == "COLLECTOR" and child.running:
                    await self._wait_for_collector()
                elif child.name == "SHARED_PORT" and child.running:
                    await self._wait_for_file(locate.shared_port_ad_file(self.config))
            self.log.info("All daemons of DAEMON_LIST that are on were started")

    async def _wait_for_collector(self, timeout: float = 20.0) -> None:
        await self._wait_for_file(self.config.get("COLLECTOR_ADDRESS_FILE"), timeout)

    async def _wait_for_file(self, path: str | None, timeout: float = 20.0) -> None:
        """Until a daemon just started writes the file that says it is listening."""
        deadline = time.monotonic() + timeout
        # the collector (another process) writes the file: poll it, a stat being quick
        while path and not os.path.exists(path) and time.monotonic() < deadline and not self.stopping.is_set():  # noqa: ASYNC110, ASYNC240
            await asyncio.sleep(0.02)

    async def start_child(self, child: Child) -> None:
        if child.running or self.stopping.is_set():
            return
        if child.name in ("COLLECTOR", "SHARED_PORT"):  # a stale file would hide a daemon not yet up
            with contextlib.suppress(OSError):
                os.unlink((self.config.get("COLLECTOR_ADDRESS_FILE") if child.name == "COLLECTOR"
                           else locate.shared_port_ad_file(self.config)) or "")
        env = dict(os.environ, HTCD_MASTER_PID=str(os.getpid()))
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "htcd", child.name.lower(), "-f",
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE, env=env, process_group=0,  # its own, as HTCondor's
                preexec_fn=fdlimit.for_child(self.config, child.name, self.log))
        except OSError as exc:
            self.log.error("Create_Process failed trying to start %s: %s", child.process_name, exc)
            self._schedule_restart(child)
            return
        child.proc, child.exited = proc, asyncio.Event()
        child.start_time, child.started, child.next_start = int(time.time()), time.monotonic(), 0.0
        child.stop_state, child.not_responding, child.alive_messages = None, False, 0
        # Until its first keepalive, the timeout the child will promise (as this master reads the
        # config): a daemon that hangs during startup is caught too.
        child.hung_deadline = child.started + self._promised_timeout(child)
        self.log.info('Started DaemonCore process "%s -f", pid and pgroup = %d', child.process_name, proc.pid)
        if child.restarts > 0:
            child.recover_task = self._bg(self._recover(child, proc), f"recover {child.name}")
        self._bg(self._watch(child, proc), f"watch {child.name}")
        self.publish_soon()

    async def _recover(self, child: Child, proc: asyncio.subprocess.Process) -> None:
        await asyncio.sleep(Backoff.for_daemon(self.config, child.name).recover)
        if child.proc is proc:
            child.restarts = 0
            self.log.info("%s recovered", child.name)
            self.publish_soon()

    async def _watch(self, child: Child, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        async for line in proc.stderr:  # a daemon's last words (a traceback) go to MasterLog
            self.log.info("%s stderr: %s", child.name, line.decode(errors="replace").rstrip())
        status = await proc.wait()
        self._exited(child, proc, status)

    def _exited(self, child: Child, proc: asyncio.subprocess.Process, status: int) -> None:
        """HTCondor's reaper: say how the daemon ended, then restart it, or not."""
        if child.proc is not proc:
            return
        if child.not_responding:
            how = "was killed because it was no longer responding"
        elif status < 0:
            how = f"died due to signal {-status} ({signal.strsignal(-status) or 'unknown'})"
        else:
            how = f"exited with status {status}"
            if status == keepalive.DAEMON_NO_RESTART:
                how += " (daemon will not restart automatically)"
                child.on_hold = True
        asked = child.on_hold or child.stop_state is not None or self.stopping.is_set()
        # a daemon told to stop may also die of the signal itself (e.g. while still starting up)
        expected = status == keepalive.DAEMON_NO_RESTART or (asked and status in _STOP_STATUSES)
        (self.log.info if expected else self.log.error)("The %s (pid %d) %s", child.name, proc.pid, how)
        child.proc, child.start_time, child.last_exit = None, 0, how
        child.stop_state, child.not_responding, child.hung_deadline = None, False, None
        if child.recover_task is not None:
            child.recover_task.cancel()
            child.recover_task = None
        child.exited.set()
        self.publish_soon()
        if self.stopping.is_set() or child.on_hold or self.children.get(child.name) is not child:
            return
        if expected:  # stopped on purpose and not held (restart -daemon, on during off): at once
            child.restarts = 0
            self._bg(self.start_child(child), f"start {child.name}")
        else:
            self._schedule_restart(child)

    def _schedule_restart(self, child: Child) -> None:
        delay = Backoff.for_daemon(self.config, child.name).delay(child.restarts)
        child.restarts += 1
        child.next_start = time.time() + delay
        self.log.info("restarting %s in %s seconds", child.process_name, seconds_text(delay))
        self._cancel_restart(child, quiet=True)
        child.restart_task = asyncio.create_task(self._start_later(child, delay), name=f"restart {child.name}")
        self.publish_soon()

    async def _start_later(self, child: Child, delay: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), delay)
            return
        child.restart_task = None
        if not child.on_hold and self.children.get(child.name) is child:
            try:
                await self.start_child(child)
            except Exception:
                self.log.exception("restarting %s failed", child.name)

    def _cancel_restart(self, child: Child, quiet: bool = False) -> None:
        if child.restart_pending:
            assert child.restart_task is not None
            if not quiet:
                self.log.info("Canceling timer to re-start %s", child.name)
            child.restart_task.cancel()
        child.restart_task, child.next_start = None, 0.0

    # -- stopping -------------------------------------------------------------------------------
    def _signal(self, child: Child, sig: signal.Signals) -> None:
        if child.proc is None:
            return
        try:
            child.proc.send_signal(sig)
        except ProcessLookupError:
            return
        self.log.info("Sent %s to %s (pid %d)", sig.name, child.name, child.pid)

    async def _tell_peaceful(self, child: Child) -> None:
        """Ask a schedd or startd for a peaceful shutdown (its jobs finish first); the others
        have no jobs, so SIGTERM is the same thing for them."""
        address = locate.local_daemon(self.config, child.name) if child.name in ("SCHEDD", "STARTD") else None
        if address is not None:
            try:
                await acall(address, "DC_OFF_GRACEFUL", timeout=10.0, peaceful=True)
                self.log.info("Sent peaceful shutdown request to %s (pid %d)", child.name, child.pid)
                return
            except (WireError, UserError) as exc:
                self.log.warning("cannot ask %s for a peaceful shutdown (%s); sending SIGTERM", child.name, exc)
        self._signal(child, signal.SIGTERM)

    async def stop_child(self, child: Child, mode: str) -> None:
        """Stop one daemon in ``mode``, escalating when its time runs out; returns once it is gone."""
        self._cancel_restart(child)
        proc, exited = child.proc, child.exited
        if proc is None:
            return
        if child.stop_state is not None and RANK[child.stop_state] >= RANK[mode]:
            await exited.wait()
            return
        child.stop_state = mode
        self.publish_soon()
        if mode == PEACEFUL:
            await self._tell_peaceful(child)
            timeout = None
        elif mode == GRACEFUL:
            self._signal(child, signal.SIGTERM)
            timeout = self._timeout("SHUTDOWN_GRACEFUL_TIMEOUT", SHUTDOWN_GRACEFUL_TIMEOUT)
        else:
            self._signal(child, signal.SIGQUIT)
            timeout = self._timeout("SHUTDOWN_FAST_TIMEOUT", SHUTDOWN_FAST_TIMEOUT)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(exited.wait(), timeout)
            return
        if child.proc is not proc:
            return
        if mode == GRACEFUL:
            self.log.info("Timeout for graceful shutdown has expired for %s.", child.name)
            await self.stop_child(child, FAST)
            return
        self.log.info("Timeout for fast shutdown has expired for %s.", child.name)
        child.stop_state = KILL
        self._signal(child, signal.SIGKILL)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(exited.wait(), 30.0)

    async def _stop_removed(self, child: Child) -> None:
        try:
            await self.stop_child(child, GRACEFUL)
        finally:
            self._leaving.discard(child)

    async def stop_all(self, mode: str) -> None:
        """Startds first (their jobs report back to running schedds), then the others, the
        collector last so that everyone can withdraw their ads."""
        for child in self.children.values():
            self._cancel_restart(child)
        startds = [c for c in self.ordered() if c.name == "STARTD" and c.running]
        if startds:
            await asyncio.gather(*(self.stop_child(c, mode) for c in startds))
        others = [c for c in self.ordered() if c.running and c.name not in ("COLLECTOR", "SHARED_PORT")]
        if others:
            if startds:
                self.log.info("All STARTDs are gone.  Stopping other daemons %s", _ADVERBS.get(mode, mode))
            await asyncio.gather(*(self.stop_child(c, mode) for c in others))
        collectors = [c for c in self.ordered() if c.running and c.name != "SHARED_PORT"]
        if self.stopping.is_set():  # the master goes too: withdraw its ad while a collector listens
            await self.invalidate()
        await asyncio.gather(*(self.stop_child(c, mode) for c in collectors))
        # the shared port last, and only with the master: HTCondor's "off" leaves it running, so
        # the master stays reachable over the network
        ports = [c for c in self.ordered() if c.running and c.name == "SHARED_PORT"]
        if ports and self.stopping.is_set():
            await asyncio.gather(*(self.stop_child(c, mode) for c in ports))
        self.log.info("All daemons are gone.")

    async def shutdown(self, fast: bool) -> None:
        mode = mode_of(fast, self.peaceful)
        self.log.info("Shutting down the daemons (%s)", mode.lower())
        await self.stop_all(mode)

    async def invalidate(self) -> None:
        if not self._invalidated:
            self._invalidated = True
            await super().invalidate()

    async def serve(self) -> None:
        try:
            await super().serve()
        finally:
            await self._reap_leftovers()
            if self._hung_scanner is not None:
                self._hung_scanner.cancel()
        if self.restart_self:
            await self._exec_master()

    async def _reap_leftovers(self) -> None:
        """No child outlives the master (e.g. after a fast shutdown was cut short)."""
        left = [c for c in (*self.children.values(), *self._leaving) if c.running]
        for child in left:
            if child.stop_state is None or RANK[child.stop_state] < RANK[FAST]:
                child.stop_state = FAST
                self._signal(child, signal.SIGQUIT)
        if left:
            _, pending = await asyncio.wait([asyncio.ensure_future(c.exited.wait()) for c in left], timeout=10.0)
            for child in left:
                if child.running:
                    self._signal(child, signal.SIGKILL)
            if pending:
                await asyncio.wait(pending, timeout=10.0)

    async def _exec_master(self) -> None:
        """Replace this process with a fresh master (same PID, so whoever started it still holds it)."""
        if self.restart_delay > 0:
            self.log.info("Restarting master in %s seconds.", seconds_text(self.restart_delay))
            await asyncio.sleep(self.restart_delay)
        else:
            self.log.info("Restarting master right away.")
        argv = [sys.executable, "-m", "htcd", "master", "-f"]
        if self.terminal:
            argv.append("-t")
        if self.config.local_name:
            argv += ["-local-name", self.config.local_name]
        self.log.info('Doing exec( "%s" )', " ".join(argv))
        for handler in self.log.handlers:
            handler.flush()
        try:
            os.execv(sys.executable, argv)
        except OSError as exc:
            self.log.error("Cannot execute the master (%s); exiting", exc)
            keepalive.set_exit_status(1)

    # -- periodic checks --------------------------------------------------------------------------
    async def _scan_hung_forever(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            try:
                await self._scan_hung()
            except Exception:
                self.log.exception("the scan for hung children failed")

    async def _scan_hung(self) -> None:
        now = time.monotonic()
        for child in list(self.children.values()):
            if child.running and child.hung_deadline is not None and now > child.hung_deadline:
                self._kill_hung(child, now)

    def _promised_timeout(self, child: Child) -> float:
        default = self.config.get_int("NOT_RESPONDING_TIMEOUT", keepalive.NOT_RESPONDING_TIMEOUT)
        return float(max(1, self.config.get_int(f"{child.name}_NOT_RESPONDING_TIMEOUT", default)))

    def _kill_hung(self, child: Child, now: float) -> None:
        """HTCondor's KillHungChild: SIGABRT first for a core if NOT_RESPONDING_WANT_CORE, SIGKILL
        after CORE_WAIT more seconds (or at once without it)."""
        first = not child.not_responding
        child.not_responding = True
        self.log.error("Child pid %d appears hung! Killing it hard.", child.pid)
        want_core = self.config.get_bool("NOT_RESPONDING_WANT_CORE", False)
        if want_core and first:
            self.log.info("Sending SIGABRT to child to generate a core file.")
            self._signal(child, signal.SIGABRT)
            self._signal(child, signal.SIGCONT)  # a stopped process takes the signal only when it runs
            child.hung_deadline = now + CORE_WAIT
        else:
            if want_core:
                self.log.info("Child pid %d is still hung!  Perhaps it hung while generating a core file.  "
                              "Killing it harder.", child.pid)
            child.hung_deadline = None
            self._signal(child, signal.SIGKILL)
        self.publish_soon()

    def _new_exec_interval(self) -> float:
        interval = self.knob_int("MASTER_CHECK_NEW_EXEC_INTERVAL", 300)
        return float(interval) if interval > 0 else 60.0

    async def _check_new_exec(self) -> None:
        if (self.knob_int("MASTER_CHECK_NEW_EXEC_INTERVAL", 300) <= 0 or self._new_exec_seen
                or self.daemons_off or self.stopping.is_set()):
            return
        watched = checks.watch_file(self.config)
        stamp = checks.timestamp(watched)
        if stamp is None or self._watch_stamp is None or stamp == self._watch_stamp:
            if self._watch_stamp is None:
                self._watch_stamp = stamp
            return
        old, self._watch_stamp = self._watch_stamp, stamp
        mode, complaint = checks.restart_mode(self.config)
        if complaint:
            self.log.warning("%s", complaint)
        if mode == "NEVER":
            self.log.info("%s was modified (%d != %d), but master restart mode is NEVER", watched, stamp, old)
            return
        self._new_exec_seen = True
        self.log.info("%s was modified (%d != %d), restarting htcd master %s.", watched, stamp, old,
                      _ADVERBS[mode])
        self.restart_self = True
        self.restart_delay = max(0.0, self.config.get_float("MASTER_NEW_BINARY_DELAY", 120.0))
        self.request_stop(fast=mode == FAST, peaceful=mode == PEACEFUL)

    def _disk_interval(self) -> float:
        interval = self.knob_int("MASTER_CHECK_DISK_INTERVAL", 60)
        return float(interval) if interval > 0 else 60.0

    async def _check_disk(self) -> bool:
        """True (and the master on its way out with status 99) when LOG or SPOOL is nearly full."""
        if self.knob_int("MASTER_CHECK_DISK_INTERVAL", 60) <= 0 or self.stopping.is_set():
            return False
        low = checks.low_disk(self.config)
        if low is None:
            return False
        message = f"{low}: shutting down the daemons and exiting"
        self.log.error("%s", message)
        print(f"htcd master: {message}", file=sys.stderr, flush=True)
        keepalive.set_exit_status(keepalive.DAEMON_NO_RESTART)
        self.request_stop()
        return True

    # -- commands -------------------------------------------------------------------------------
    def _mode(self, req: Request) -> str:
        return mode_of(req.arg_bool("fast"), req.arg_bool("peaceful"))

    def _child(self, req: Request) -> Child:
        name = req.arg_str("daemon", required=True).upper()
        child = self.children.get(name)
        if child is None:
            listed = ", ".join(["MASTER", *(c.name for c in self.ordered())])
            raise CommandError(f"{name} is not a daemon of this master (DAEMON_LIST: {listed})", "BAD_REQUEST")
        return child

    async def cmd_daemons_off(self, req: Request) -> str:
        mode = self._mode(req)
        self.log.info("Got DAEMONS_OFF (%s) from %s", mode.lower(), req.identity)
        self.daemons_off = True
        for child in self.children.values():
            child.on_hold = child.name != "SHARED_PORT"  # it stays, as HTCondor's: the master stays reachable
        self._bg(self.stop_all(mode), "DAEMONS_OFF")
        return "ok"

    async def cmd_daemons_on(self, req: Request) -> str:
        self.log.info("Got DAEMONS_ON from %s", req.identity)
        self.daemons_off = False
        for child in self.children.values():
            child.on_hold = False
        self._bg(self.start_all(), "DAEMONS_ON")
        return "ok"

    async def cmd_daemon_off(self, req: Request) -> str:
        child, mode = self._child(req), self._mode(req)
        self.log.info("Got DAEMON_OFF (%s) for %s from %s", mode.lower(), child.name, req.identity)
        child.on_hold = True
        self._bg(self.stop_child(child, mode), f"DAEMON_OFF {child.name}")
        self.publish_soon()
        return "ok"

    async def cmd_daemon_on(self, req: Request) -> str:
        child = self._child(req)
        self.log.info("Got DAEMON_ON for %s from %s", child.name, req.identity)
        child.on_hold = False
        if not child.running:
            self._cancel_restart(child)
            child.restarts = 0
            self._bg(self.start_child(child), f"DAEMON_ON {child.name}")
        return "ok"

    async def cmd_restart(self, req: Request) -> str:
        mode = self._mode(req)
        daemon = (req.arg_str("daemon") or "MASTER").upper()
        self.log.info("Got RESTART (%s) of %s from %s", mode.lower(), daemon, req.identity)
        if daemon == "MASTER":
            self.restart_self, self.restart_delay = True, 0.0
            self.request_stop(fast=mode == FAST, peaceful=mode == PEACEFUL)
            return "ok"
        child = self._child(req)
        child.on_hold = False
        if child.running:  # its exit is expected and it is not held: _exited starts it again
            self._bg(self.stop_child(child, mode), f"RESTART {child.name}")
        else:
            self._cancel_restart(child)
            child.restarts = 0
            self._bg(self.start_child(child), f"RESTART {child.name}")
        return "ok"

    async def cmd_child_alive(self, req: Request) -> str:
        pid, timeout = req.arg_int("pid", required=True), req.arg_float("timeout_secs", required=True)
        child = next((c for c in self.children.values() if c.running and c.pid == pid), None)
        if child is None:
            self.log.info("Received child alive command from unknown pid %d", pid)
            raise CommandError(f"pid {pid} is not a daemon of this master", "BAD_REQUEST")
        self.log.debug("received childalive, pid=%d, secs=%g", pid, timeout)
        child.hung_deadline = time.monotonic() + timeout
        child.not_responding = False
        child.alive_messages += 1
        if child.alive_messages == 1:
            self.publish_soon()
        return "ok"

    # -- the ad -----------------------------------------------------------------------------------
    def make_ad(self) -> ClassAd:
        """HTCondor's DaemonMaster ad: per daemon ``<NAME>_StartTime`` (0 while down) and
        ``<NAME>_Timestamp`` (of the watched installation), plus htcd's ``<NAME>_PID``,
        ``<NAME>_State`` and ``<NAME>_Restarts``."""
        ad = self.base_ad("DaemonMaster")
        ad["MasterIpAddr"] = str(self.server.address)
        ad["DaemonList"] = ", ".join(["MASTER", *(c.name for c in self.ordered())])
        stamp = int(self._watch_stamp or 0)
        ad["MASTER_StartTime"], ad["MASTER_Timestamp"] = self.start_time, stamp
        for c in self.ordered():
            ad[f"{c.name}_StartTime"] = c.start_time
            ad[f"{c.name}_Timestamp"] = stamp
            ad[f"{c.name}_PID"] = c.pid
            ad[f"{c.name}_State"] = c.state()
            ad[f"{c.name}_Restarts"] = c.restarts
        return ad
