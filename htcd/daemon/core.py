"""The daemon base class and its server loop (startup, main loop, graceful shutdown).

Shaped like uvicorn's server: ``run_daemon`` installs signal handlers, starts the daemon,
waits for a stop request and shuts down gracefully on the first SIGTERM/SIGINT and fast on
the second.  SIGHUP re-reads the config, and with it the logs' debug levels and sizes.

Like HTCondor's DaemonCore, the base keeps statistics on its own event loop (``stats.py``):
every command, timer and signal is counted and timed, the loop's time waiting for I/O is
measured, and an iteration that holds the loop for more than 100 ms is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import Awaitable, Callable
from time import perf_counter
from typing import Any

from htcd import __version__
from htcd.classad import ClassAd
from htcd.config import Config, unused
from htcd.config import load as load_config
from htcd.daemon import keepalive
from htcd.daemon.advertise import Advertiser
from htcd.daemon.ccbtarget import CCBTarget
from htcd.daemon.log import LOG_NAMES, LogSettings, open_log, parse_limit
from htcd.daemon.stats import DEFAULT_QUANTUM, DEFAULT_WINDOW, DaemonStats, parse_publish
from htcd.debug import dprintf, parse_debug
from htcd.errors import UserError
from htcd.version import platform_string, version_string
from htcd.wire import authz, locate
from htcd.wire.errors import CommandError
from htcd.wire.server import Handler, Request, Server
from htcd.wire.sharedport import handover_path

VERSION_STRING = version_string()
PLATFORM_STRING = platform_string()


def restart_knobs_changed(old: Config, new: Config) -> list[str]:
    """Knobs the param table marks restart-only whose value differs between two configs."""
    from htcd.config import table

    params = table()
    names = {n.upper() for n in (*old.names(), *new.names())}
    return sorted(n for n in names
                  if n.lower() in params and not params[n.lower()].reconfig and old.get(n) != new.get(n))


class Daemon:
    """Base of every htcd daemon.  Subclasses set ``subsystem`` and override the hooks."""

    subsystem = "DAEMON"
    ad_type = "Generic"

    def __init__(self, config: Config, terminal: bool = False) -> None:
        self.config = config
        self.terminal = terminal
        self.name = self.default_name()
        self.start_time = int(time.time())
        self.stopping = asyncio.Event()
        self.fast_event = asyncio.Event()
        self.peaceful = False  # off -peaceful: let running jobs finish, however long they take
        self._logs: dict[str, tuple[str, str]] = {}  # logger name -> (subsystem, suffix), reopened on reconfig
        self.log = self.open_log(self.subsystem)
        self.stats = DaemonStats(on_block=self._on_block)
        self._configure_stats()
        handlers: dict[str, Handler] = {
            "PING": self._cmd_ping, "DC_OFF_GRACEFUL": self._cmd_off, "DC_RECONFIG": self._cmd_reconfig,
            "DC_CONFIG_PERSIST": self._cmd_config_persist, "DC_CONFIG_RUNTIME": self._cmd_config_runtime,
            "DC_SEC_QUERY": self._cmd_sec_query, "DC_QUERY_SELF": self._cmd_query_self,
        }
        handlers.update(self.command_handlers())
        self.server = Server(self.subsystem.lower(), self.uid_domain, handlers, self.log,
                             on_command=self.stats.command)
        # the ALLOW/DENY authorization policy (not ``policy``: the startd's is its START/PREEMPT/... policy)
        self.authz = self._apply_policy(self._build_policy(config))
        self._configure_limits()
        self._configure_security()
        self.advertiser = Advertiser(self)
        self._timers: list[asyncio.Task[None]] = []
        self._timers_ended = False
        self._sequence = 0
        self._publishing: asyncio.Task[Any] | None = None
        self.pending_restart: list[str] = []
        self.runtime_config: dict[str, str] = {}  # config_val -rset: kept until this daemon exits
        self.ccb_target: CCBTarget | None = None  # CCB_ADDRESS: the registration with the CCB server

    # -- identity and configuration -------------------------------------------------------
    def _warn_unused_knobs(self) -> None:
        """Nothing silent: a knob the config sets that htcd does not act on is named in the log."""
        for line in unused.warnings(self.config):
            self.log.warning(line)

    @property
    def uid_domain(self) -> str:
        return self.config.get("UID_DOMAIN") or socket.getfqdn()

    @property
    def hostname(self) -> str:
        return self.config.get("FULL_HOSTNAME") or socket.getfqdn()

    def default_name(self) -> str:
        return self.hostname

    def knob_int(self, name: str, default: int = 0) -> int:
        """``get_int``: the config, else the param table, else ``default``."""
        return self.config.get_int(name, default)

    def open_log(self, subsys: str, suffix: str = "") -> logging.Logger:
        """The log of ``subsys`` (``$(<SUBSYS>_LOG)``), e.g. ``StarterLog`` + ``.slot1``, with its
        ``<SUBSYS>_DEBUG`` categories, size and rotation; reopened on every reconfig."""
        name = f"{subsys.lower()}{suffix}"
        existing = logging.getLogger(f"htcd.{name}")
        if existing.handlers and subsys != self.subsystem and name in self._logs:
            return existing
        self._logs[name] = (subsys, suffix)
        return self._open_log(name, subsys, suffix, first=True)

    def _open_log(self, name: str, subsys: str, suffix: str, first: bool) -> logging.Logger:
        settings, problems = self.log_settings(subsys, suffix)
        log = open_log(name, settings, self.terminal and subsys == self.subsystem, first=first)
        for problem in problems:
            log.warning(problem)
        return log

    def log_settings(self, subsys: str, suffix: str = "") -> tuple[LogSettings, list[str]]:
        """What the config says about the log of ``subsys``, and what in it is wrong (a bad
        value is reported in the log and the default used: a daemon does not die of its log)."""
        cfg = self.config
        problems: list[str] = []
        path = cfg.get(f"{subsys}_LOG") or os.path.join(cfg.get("LOG") or ".",
                                                          LOG_NAMES.get(subsys, subsys.title() + "Log"))
        flags = parse_debug([("ALL_DEBUG", cfg.get("ALL_DEBUG")), (f"{subsys}_DEBUG", cfg.get(f"{subsys}_DEBUG"))])
        settings = LogSettings(path=path + suffix, flags=flags)
        knob = f"MAX_{subsys}_LOG"
        try:
            settings.limit = parse_limit(cfg.get(knob) or cfg.get("MAX_DEFAULT_LOG"))
        except UserError as exc:
            problems.append(f"{knob}: {exc}; using 10 MiB")
        for key, read in (("max_num", lambda: cfg.get_int(f"MAX_NUM_{subsys}_LOG", 1)),
                          ("truncate", lambda: cfg.get_bool(f"TRUNC_{subsys}_LOG_ON_OPEN", False)),
                          ("keep_open", lambda: cfg.get_bool(f"{subsys}_LOG_KEEP_OPEN", True)),
                          ("unix_time", lambda: cfg.get_bool("LOGS_USE_TIMESTAMP", False))):
            try:
                setattr(settings, key, read())
            except UserError as exc:
                problems.append(f"{exc}; using the default")
        time_format = (cfg.get("DEBUG_TIME_FORMAT") or "").strip()
        if len(time_format) >= 2 and time_format[0] == time_format[-1] == '"':
            time_format = time_format[1:-1]
        if time_format:
            settings.time_format = time_format
        return settings, problems

    def _reopen_logs(self) -> None:
        for name, (subsys, suffix) in list(self._logs.items()):
            try:
                self._open_log(name, subsys, suffix, first=False)
            except OSError as exc:
                self.log.error("cannot reopen the log of %s: %s", name, exc)

    def _configure_stats(self) -> None:
        """STATISTICS_WINDOW_SECONDS[_DC|_DAEMONCORE], STATISTICS_WINDOW_QUANTUM[...] and
        STATISTICS_TO_PUBLISH; a bad value is logged and the default kept."""
        cfg = self.config
        try:
            window = cfg.get_int("STATISTICS_WINDOW_SECONDS", DEFAULT_WINDOW)
            window = cfg.get_int("STATISTICS_WINDOW_SECONDS_DAEMONCORE", window)
            window = cfg.get_int("STATISTICS_WINDOW_SECONDS_DC", window)
            quantum = cfg.get_int("STATISTICS_WINDOW_QUANTUM", DEFAULT_QUANTUM)
            quantum = cfg.get_int("STATISTICS_WINDOW_QUANTUM_DAEMONCORE", quantum)
            quantum = cfg.get_int("STATISTICS_WINDOW_QUANTUM_DC", quantum)
        except UserError as exc:
            self.log.warning("%s; the statistics window keeps its size", exc)
            window, quantum = self.stats.window, self.stats.quantum
        flags, problems = parse_publish(cfg.get("STATISTICS_TO_PUBLISH"))
        for problem in problems:
            self.log.warning("STATISTICS_TO_PUBLISH: %s", problem)
        self.stats.configure(window, quantum, flags)

    def _configure_limits(self) -> None:
        """What the server allows peers (frame sizes, deadlines, connections in handshake); a bad
        value is logged and the limits kept."""
        from htcd.wire.framing import Limits

        try:
            self.server.limits = Limits.from_config(self.config)
        except UserError as exc:
            self.log.warning("%s; the protocol limits are unchanged", exc)

    def _build_policy(self, config: Config) -> authz.Policy:
        """The ALLOW/DENY policy of ``config`` (a malformed entry is a UserError naming its knob)."""
        return authz.build(config, self.subsystem, self.log)

    def _apply_policy(self, policy: authz.Policy) -> authz.Policy:
        """Make ``policy`` the server's authorizer; log it, and warn of levels granted by host alone."""
        self.server.authorizer = policy.check
        for line in policy.describe():
            dprintf(self.log, "D_SECURITY", "authorization: %s", line)
        for level, rule, loose in policy.host_only_rules():
            self.log.warning("SECURITY WARNING: %s = %s grants %s by host alone (%s): any user or program on "
                             "those hosts holds it. Use this (e.g. `use SECURITY : Host_Based`) only on a "
                             "trusted, closed network; see docs/security.md", rule.knob, rule.text, level,
                             ", ".join(e.text for e in loose))
        return policy

    def _configure_security(self) -> None:
        """Authentication (htcd/wire/authn.py): what the server accepts and requires per level,
        and what this daemon offers as a client (SEC_DAEMON_*, its tokens, the pool CA).  A bad
        value is logged and the running settings kept."""
        from htcd.wire import client
        from htcd.wire.authn import ClientSecurity, SecurityConfigError, ServerSecurity

        try:
            self.server.security = ServerSecurity(self.config, self.uid_domain, self.log)
            client.configure(ClientSecurity.from_config(self.config, "DAEMON"))
        except (SecurityConfigError, UserError) as exc:
            self.log.error("%s; the authentication settings are unchanged", exc)
            return
        if self.server.security.tls is None:
            dprintf(self.log, "D_SECURITY", "no TLS on TCP: %s", self.server.security.tls_problem)

    def _on_block(self, busy: float, cpu: float, what: str) -> None:
        self.log.info("DaemonCore: the event loop was busy for %.3f s (%.3f s of CPU) between two waits "
                      "for I/O; longest callback: %s", busy, cpu, what)

    # -- hooks for subclasses --------------------------------------------------------------
    def command_handlers(self) -> dict[str, Handler]:
        return {}

    async def startup(self) -> None:
        """Called once the server listens."""

    async def shutdown(self, fast: bool) -> None:
        """Called on the way out, before the server closes."""

    def reconfigured(self) -> None:
        """Called after a successful reconfig."""

    def make_ad(self) -> ClassAd | None:
        """This daemon's own ad for the collector, or None."""
        return None

    def own_ads(self) -> list[ClassAd]:
        """What ``DC_QUERY_SELF`` (``htcd status -direct``) answers: this daemon's ads."""
        ad = self.make_ad()
        return [ad] if ad is not None else []

    # -- common machinery --------------------------------------------------------------------
    def base_ad(self, my_type: str) -> ClassAd:
        self._sequence += 1
        ad = ClassAd()
        ad["MyType"] = my_type
        ad["Name"] = self.name
        ad["Machine"] = self.hostname
        ad["MyAddress"] = str(self.server.address)
        ad["CondorVersion"] = VERSION_STRING
        ad["CondorPlatform"] = PLATFORM_STRING
        ad["DaemonStartTime"] = self.start_time
        ad["MyCurrentTime"] = int(time.time())
        ad["UpdateSequenceNumber"] = self._sequence
        ad["UpdateInterval"] = self.update_interval()
        ad["ClassAdLifetime"] = 3 * self.update_interval()
        if my_type == self.ad_type:  # the daemon's own ads (a startd's slots too), not e.g. Submitter ads
            self.stats.publish(ad, sockets=self.server.connections)
        return ad

    def update_interval(self) -> int:
        return max(1, self.knob_int("UPDATE_INTERVAL", 300))

    def every(self, interval: Callable[[], float], action: Callable[[], Awaitable[Any]], what: str,
              first: float = 0.0, during_shutdown: bool = False) -> None:
        """Run ``action`` now (after ``first`` seconds) and then every ``interval()`` seconds; a
        timer ``during_shutdown`` (the master's keepalive) keeps running until the daemon exits."""

        async def loop() -> None:
            delay = first
            while not self._timers_ended and (during_shutdown or not self.stopping.is_set()):
                if during_shutdown:
                    await asyncio.sleep(delay)
                else:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.stopping.wait(), delay)
                        return
                dprintf(self.log, "D_DAEMONCORE:2", "Calling timer handler %r", what)
                started = perf_counter()
                try:
                    await action()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    self.log.exception("timer %s failed", what)
                finally:
                    self.stats.timer(what, perf_counter() - started)
                try:
                    delay = interval()
                except Exception:
                    self.log.exception("timer %s: its interval failed; trying again in 60 s", what)
                    delay = 60.0

        dprintf(self.log, "D_DAEMONCORE", "Registered timer %r (first in %.1f s)", what, first)
        self._timers.append(asyncio.create_task(loop(), name=what))

    def spawn(self, coro: Awaitable[Any], what: str) -> asyncio.Task[Any]:
        """A background task whose failure is logged rather than lost."""

        async def guarded() -> Any:
            try:
                return await coro
            except asyncio.CancelledError:
                raise
            except Exception:
                self.log.exception("%s failed", what)
                return None

        return asyncio.create_task(guarded(), name=what)

    async def send_to_collector(self, command: str, **args: Any) -> Any:
        return await self.advertiser.call(command, **args)

    async def publish(self) -> None:
        ad = self.make_ad()
        if ad is not None:
            await self.advertiser.update(self.ad_type, ad.to_wire())

    def address_changed(self) -> None:
        """The daemon's address changed (a CCB registration gave it a CCBID): the address file and
        the ads say so at once."""
        self._write_address_file()
        self.publish_soon()

    def publish_soon(self) -> None:
        """Publish shortly, coalescing a burst of state changes into one round of updates."""
        if self._publishing is None or self._publishing.done():
            async def later() -> None:
                await asyncio.sleep(0.05)
                await self.publish()
            self._publishing = self.spawn(later(), "publish")

    async def invalidate(self) -> None:
        await self.advertiser.invalidate(self.ad_type, self.name)

    # -- built-in commands ---------------------------------------------------------------
    async def _cmd_ping(self, req: Request) -> dict[str, Any]:
        return {"identity": str(req.identity), "method": req.identity.method, "daemon": self.subsystem,
                "name": self.name, "version": __version__}

    async def _cmd_off(self, req: Request) -> str:
        self.log.info("shutdown requested by %s", req.identity)
        self.request_stop(fast=req.arg_bool("fast"), peaceful=req.arg_bool("peaceful"))
        return "ok"

    async def _cmd_sec_query(self, req: Request) -> dict[str, Any]:
        """Whether the caller holds each asked-for authorization level, and why not."""
        from htcd.wire import auth

        levels = [x.upper() for x in req.arg_list("levels", str, [auth.READ])]
        if "ALL" in levels:
            levels = list(auth.LEVELS)
        unknown = [lv for lv in levels if lv not in auth.LEVELS]
        if unknown:
            raise CommandError(f"unknown authorization level {', '.join(unknown)} "
                               f"(known: {', '.join(auth.LEVELS)}, ALL)", "BAD_REQUEST")
        return {"identity": str(req.identity), "method": req.identity.method, "daemon": self.subsystem,
                "name": self.name, "encrypted": req.identity.encrypted,
                "scopes": sorted(req.identity.scopes) if req.identity.scopes is not None else None,
                "levels": {lv: self.server.authorized(req.identity, lv) for lv in levels}}

    async def _cmd_query_self(self, req: Request) -> list[dict[str, str]]:
        """``{statistics: "DC:2"}`` publishes the statistics at that level instead of the
        configured one (condor_status -direct NAME -statistics DC:2)."""
        ads = self.own_ads()
        text = req.arg_str("statistics")
        if text:
            flags, problems = parse_publish(text)
            if problems:
                raise CommandError(f"bad statistics {text!r}: {'; '.join(problems)}", "BAD_REQUEST")
            for ad in ads:
                if "DaemonCoreDutyCycle" in ad:
                    self.stats.unpublish(ad)
                    self.stats.publish(ad, flags, sockets=self.server.connections)
        return [ad.to_wire() for ad in ads]

    def load_config(self) -> Config:
        """The config as this daemon sees it: files, persistent settings (read by ``load``), then
        -rset settings, applied like environment overrides."""
        env = dict(os.environ)
        env.update({f"_HTCD_{k}": v for k, v in self.runtime_config.items()})
        return load_config(self.subsystem, self.config.local_name, env=env)

    async def _cmd_config_persist(self, req: Request) -> str:
        """``config_val -set/-unset``: checked, then written to this daemon's persistent file."""
        from htcd.config.persist import persist_changes

        try:
            path = persist_changes(self.config, req.arg_list("set", str), req.arg_list("unset", str))
        except UserError as exc:
            raise CommandError(str(exc), "BAD_CONFIG") from None
        self.log.info("persistent config %s changed by %s: set %s, unset %s", path, req.identity,
                      req.arg("set"), req.arg("unset"))
        return "ok"

    async def _cmd_config_runtime(self, req: Request) -> str:
        """``config_val -rset/-runset``: checked like -set, kept in memory until this daemon exits."""
        from htcd.config.persist import parse_changes

        if not self.config.get_bool("ENABLE_RUNTIME_CONFIG", False):
            raise CommandError(f"the {self.subsystem.lower()} refuses runtime config: "
                               "ENABLE_RUNTIME_CONFIG is not true", "DENIED")
        try:
            changes, names = parse_changes(self.config, req.arg_list("set", str), req.arg_list("unset", str))
        except UserError as exc:
            raise CommandError(str(exc), "BAD_CONFIG") from None
        self.runtime_config.update(changes)
        for name in names:
            self.runtime_config.pop(name, None)
        self.log.info("runtime config changed by %s: %s", req.identity, self.runtime_config)
        return "ok"

    async def _cmd_reconfig(self, req: Request) -> dict[str, Any]:
        self.log.info("reconfig requested by %s", req.identity)
        return self.reconfig()

    def reconfig(self) -> dict[str, Any]:
        """Re-read the config.  Reconfigurable knobs take effect now; a changed restart-only knob
        (per the param table) is logged and reported as pending.  A broken config is refused and
        the running one kept."""
        try:
            config = self.load_config()
        except UserError as exc:
            self.log.error("reconfig failed, keeping the running config: %s", exc)
            raise CommandError(f"{self.subsystem.lower()} kept its running config: {exc}", "BAD_CONFIG") from None
        try:
            policy = self._build_policy(config)
        except UserError as exc:
            self.log.error("reconfig failed, keeping the running config: %s", exc)
            raise CommandError(f"{self.subsystem.lower()} kept its running config: {exc}", "BAD_CONFIG") from None
        pending = restart_knobs_changed(self.config, config)
        for knob in pending:
            self.log.warning("%s changed (%r -> %r): it needs a restart of the %s; pending until then",
                             knob, self.config.get(knob), config.get(knob), self.subsystem.lower())
        self.pending_restart = sorted(set(self.pending_restart) | set(pending))
        self.config = config
        self._reopen_logs()  # debug categories, sizes and names apply at once
        self._configure_stats()
        self._configure_limits()
        self._configure_security()
        self.authz = self._apply_policy(policy)
        self.log.info("reconfigured from %s", ", ".join(config.files) or "the embedded default")
        self._warn_unused_knobs()
        self.reconfigured()
        return {"daemon": self.subsystem, "pending_restart": self.pending_restart}

    @property
    def fast(self) -> bool:
        return self.fast_event.is_set()

    def request_stop(self, fast: bool = False, peaceful: bool = False) -> None:
        """First request: graceful (or peaceful).  A fast request, or any second one, cuts it short."""
        if peaceful and not self.stopping.is_set():
            self.peaceful = True
        if fast or self.stopping.is_set():
            self.fast_event.set()
        self.stopping.set()

    # -- the server loop -------------------------------------------------------------------
    def socket_path(self) -> str:
        """``DAEMON_SOCKET_DIR``; ``auto`` (HTCondor's default) means ``$(LOCK)/sock``."""
        sock_dir = self.config.get("DAEMON_SOCKET_DIR") or "auto"
        if sock_dir.lower() == "auto":
            sock_dir = os.path.join(self.config.get("LOCK") or self.config.get("LOG") or ".", "sock")
        os.makedirs(sock_dir, mode=0o755, exist_ok=True)
        path = os.path.join(sock_dir, f"{self.subsystem.lower()}.sock")
        if len(path.encode()) > 107:
            raise UserError(f"the socket path {path} is longer than the 107 bytes Unix sockets allow; "
                            "set DAEMON_SOCKET_DIR to a shorter directory")
        return path

    def tcp_bind(self) -> tuple[str | None, int]:
        """The address of this daemon's own TCP port (None: it has none)."""
        return locate.bind_host(self.config), 0

    def shared_port_id(self) -> str | None:
        """This daemon's id at the host's shared port when ``USE_SHARED_PORT`` is true (it then
        opens no TCP port of its own), else None: the subsystem, with the local name if any."""
        if not locate.uses_shared_port(self.config):
            return None
        name = self.subsystem.lower()
        return f"{name}_{self.config.local_name.lower()}" if self.config.local_name else name

    def address_file(self) -> str | None:
        return self.config.get(f"{self.subsystem}_ADDRESS_FILE")

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_stop_signal, sig)
        loop.add_signal_handler(signal.SIGQUIT, self._on_quit)
        loop.add_signal_handler(signal.SIGHUP, self._on_hup)
        self.stats.attach(loop)
        host, port = self.tcp_bind()
        endpoint = self.shared_port_id()
        await self.server.start(self.socket_path(), None if endpoint else host, port)
        if endpoint:
            sock_dir = locate.socket_dir(self.config)
            self.server.behind_shared_port(host or locate.bind_host(self.config), locate.shared_port_port(self.config),
                                           endpoint, handover_path(sock_dir, endpoint))
        if CCBTarget.wanted(self):  # behind a firewall: reached through the CCB server (its CCBID)
            self.ccb_target = CCBTarget(self)
            await self.ccb_target.start()
        self._write_address_file()
        self.log.info("******************************************************")
        self.log.info("** htcd %s %s (pid %d) listening at %s", self.subsystem, __version__, os.getpid(),
                      self.server.address)
        self.log.info("** config: %s", ", ".join(self.config.files) or "the embedded default")
        self.log.info("******************************************************")
        self._warn_unused_knobs()
        for name in sorted(self.server.handlers):
            dprintf(self.log, "D_DAEMONCORE", "Registered command handler %s", name)
        try:
            await self.startup()
            self.every(lambda: float(self.stats.quantum), self._self_monitor, "self monitor")
            self.every(self.update_interval, self.publish, "publish")
            keepalive.start(self)
            await self.stopping.wait()
            self.log.info("got shutdown request (%s)", "fast" if self.fast else "graceful")
            await self._shut_down()
        finally:
            await self._end_timers()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.invalidate(), 5.0)
            if self.ccb_target is not None:
                await self.ccb_target.stop()
            self._remove_address_file()
            await self.server.close()
            self.log.info("**** %s (pid %d) EXITING WITH STATUS 0", self.subsystem, os.getpid())

    async def _end_timers(self) -> None:
        """Cancel the timers until they have all ended: on Python 3.11 a ``wait_for`` whose
        operation completes just as the cancellation arrives swallows it, and a timer kept up
        during shutdown (the keepalive) would then sleep on for many minutes."""
        self._timers_ended = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10.0
        pending = [t for t in self._timers if not t.done()]
        while pending and loop.time() < deadline:
            for t in pending:
                t.cancel()
            await asyncio.wait(pending, timeout=0.5)
            pending = [t for t in pending if not t.done()]
        if pending:
            self.log.warning("timers still running at exit: %s", ", ".join(t.get_name() for t in pending))

    async def _shut_down(self) -> None:
        graceful = asyncio.create_task(self.shutdown(self.fast))
        cut = asyncio.create_task(self.fast_event.wait())
        await asyncio.wait({graceful, cut}, return_when=asyncio.FIRST_COMPLETED)
        cut.cancel()
        if not graceful.done():
            self.log.info("fast shutdown requested during graceful shutdown")
            graceful.cancel()
            await asyncio.gather(graceful, return_exceptions=True)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.shutdown(True), 5.0)
        elif graceful.exception():
            self.log.error("shutdown failed: %r", graceful.exception())

    async def _self_monitor(self) -> None:
        """HTCondor's self_monitor timer: sample this process and advance the recent window."""
        self.stats.tick()
        self.stats.sample_self()

    def _on_stop_signal(self, sig: int) -> None:
        self.stats.signal()
        self.log.info("caught signal %s", signal.Signals(sig).name)
        self.request_stop()

    def _on_quit(self) -> None:
        self.stats.signal()
        self.log.info("caught signal SIGQUIT")
        self.request_stop(True)

    def _on_hup(self) -> None:
        self.stats.signal()
        self.log.info("caught signal SIGHUP: reconfiguring")
        with contextlib.suppress(CommandError):
            self.reconfig()

    def _write_address_file(self) -> None:
        path = self.address_file()
        if not path:
            return
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = f"{path}.new"
        with open(tmp, "w") as f:
            f.write(f"{self.server.address}\n{VERSION_STRING}\n{PLATFORM_STRING}\n")
        os.replace(tmp, path)

    def _remove_address_file(self) -> None:
        path = self.address_file()
        if path:
            with contextlib.suppress(OSError):
                with open(path) as f:
                    mine = f.readline().strip() == str(self.server.address)
                if mine:
                    os.unlink(path)


def run_daemon(cls: type[Daemon], terminal: bool = False, local_name: str | None = None) -> int:
    """Load the config, build the daemon and run it until it is told to stop."""
    config = load_config(cls.subsystem, local_name)
    for knob in ("LOG", "SPOOL", "EXECUTE", "LOCK"):
        path = config.get(knob)
        if path:
            os.makedirs(path, exist_ok=True)
    daemon = cls(config, terminal=terminal)
    asyncio.run(daemon.serve())
    return 0
