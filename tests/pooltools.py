"""Real personal pools in temp dirs for tests: start, drive with the real CLI, stop by PID.

What tests poll (slots in the collector, job ids and attributes) is asked in this process with the
project's wire client, as the CLI would ask it: a poll every 50 ms must not start an interpreter."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.metadata
import os
import pkgutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from htcd.testing import DEFAULT_KNOBS, wait_for  # the pool harness plugin authors use too

if TYPE_CHECKING:
    from htcd.config import Config

def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("_CONDOR_", "_HTCD_")) and k not in ("HTCD_CONFIG", "CONDOR_CONFIG")}
    env.update(extra or {})
    return env


class Pool:
    def __init__(self, root: Path, knobs: dict[str, str] | None = None, config_text: str = "") -> None:
        self.dir = root
        self.dir.mkdir(parents=True, exist_ok=True)
        knobs = {**DEFAULT_KNOBS, **(knobs or {})}
        self.config_file = self.dir / "htcd_config"
        lines = ["use ROLE : Personal", "CONDOR_HOST = 127.0.0.1", "COLLECTOR_HOST = $(CONDOR_HOST):0",
                 f"LOCAL_DIR = {self.dir / 'local'}", *(f"{k} = {v}" for k, v in knobs.items()), config_text]
        self.config_file.write_text("\n".join(lines) + "\n")
        self.env = clean_env({"HTCD_CONFIG": str(self.config_file)})
        self.master: subprocess.Popen[bytes] | None = None
        self.jobs_dir = self.dir / "jobs"
        self.jobs_dir.mkdir(exist_ok=True)

    @property
    def local(self) -> Path:
        return self.dir / "local"

    def log(self, name: str) -> str:
        path = self.local / "log" / name
        return path.read_text() if path.exists() else ""

    def htcd(self, *args: str, check: bool = True, cwd: Path | None = None,
             input: str | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "htcd", *args], env=self.env, cwd=cwd or self.jobs_dir,
                              capture_output=True, text=True, timeout=120, input=input)
        if check and proc.returncode != 0:
            raise AssertionError(f"htcd {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def start(self, slots: int | None = None) -> Pool:
        self.master = subprocess.Popen([sys.executable, "-m", "htcd", "master", "-f"], env=self.env,
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE)
        want = slots if slots is not None else int(DEFAULT_KNOBS["NUM_CPUS"])
        if want:
            wait_for(lambda: len(self.slot_names()) >= want, 60, f"{want} slots in the collector\n"
                     f"{self.log('MasterLog')}")
        wait_for(lambda: (self.local / "spool" / ".schedd_address").exists() or self._schedd_answers(),
                 60, "the schedd")
        return self

    def tool_config(self) -> Config:
        """The config a tool run with this pool's environment reads (read afresh: tests reconfigure)."""
        from htcd.config import load

        return load("TOOL", env=self.env)

    def collector_ads(self, ad_type: str, projection: list[str] | None = None,
                      constraint: str | None = None) -> list[dict[str, str]] | None:
        """The collector's ads (wire form), from the first collector that answers, as `htcd status`
        asks; None while none does (not started yet, or restarting)."""
        from htcd.client import collector
        from htcd.errors import UserError
        from htcd.wire.authn import ClientSecurity

        cfg = self.tool_config()
        try:
            return collector.query_wire(cfg, ad_type, constraint, projection,
                                        security=ClientSecurity.from_config(cfg, "CLIENT"))
        except UserError:
            return None

    def slot_names(self) -> list[str]:
        """Slot names in `htcd status` order; [] while the collector does not answer."""
        from htcd.classad import ClassAd
        from htcd.cli.status import sort_ads

        wire = self.collector_ads("Machine", ["Name", "Machine"])
        if not wire:
            return []
        return [str(ad.get_value("Name")) for ad in sort_ads([ClassAd.from_wire(w) for w in wire])]

    def schedd_jobs(self, constraint: str | None, projection: list[str]) -> list[dict[str, str]]:
        """Job ads (wire form) from this pool's schedd, in the order `htcd q` prints them; fails as
        `htcd q` would exit non-zero when the schedd cannot be reached."""
        from htcd.client.schedd import ScheddClient
        from htcd.errors import UserError
        from htcd.wire import locate
        from htcd.wire.authn import ClientSecurity

        cfg = self.tool_config()
        address = locate.local_daemon(cfg, "SCHEDD")
        if address is None:
            raise AssertionError(f"no schedd address file {cfg.get('SCHEDD_ADDRESS_FILE')}")
        try:
            with ScheddClient(address, timeout=30, security=ClientSecurity.from_config(cfg, "CLIENT")) as schedd:
                return [ad for chunk in schedd.query(constraint, projection) for ad in chunk]
        except UserError as exc:
            raise AssertionError(str(exc)) from None

    def _schedd_answers(self) -> bool:
        try:
            self.schedd_jobs("false", ["ClusterId"])
        except AssertionError:
            return False
        return True

    def daemon_pids(self) -> dict[str, int]:
        """Children of the master, by daemon name."""
        import psutil

        assert self.master is not None
        out = {}
        for child in psutil.Process(self.master.pid).children():
            try:
                cmd = child.cmdline()
            except psutil.Error:  # a daemon just killed and not yet reaped by the master
                continue
            if len(cmd) >= 4 and cmd[1:3] == ["-m", "htcd"]:
                out[cmd[3].upper()] = child.pid
        return out

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM the master and wait for it; kill (by PID) anything it left and fail then."""
        if self.master is None:
            return 0
        import psutil

        try:
            family = [psutil.Process(self.master.pid), *psutil.Process(self.master.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            family = []
        self.master.send_signal(signal.SIGTERM)
        try:
            code = self.master.wait(timeout)
        finally:
            if self.master.stderr:
                self.master.stderr.close()
        left = [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        for p in left:
            p.kill()
        self.master = None
        assert not left, f"the master left processes behind: {[p.pid for p in left]}"
        return code

    def submit(self, text: str, name: str = "job.sub") -> int:
        sub = self.jobs_dir / name
        sub.write_text(text)
        out = self.htcd("submit", "-terse", name).stdout.strip()
        return int(out.split(".")[0])

    def job_ids(self) -> list[str]:
        """What `htcd q -af ClusterId ProcId` lists, as "cluster.proc"."""
        ads = self.schedd_jobs(None, ["ClusterId", "ProcId"])
        return [f"{_af_text(ad, 'ClusterId')}.{_af_text(ad, 'ProcId')}" for ad in ads]

    def job_attr(self, job: str, attr: str) -> str:
        """What `htcd q JOB -af ATTR` prints (a cluster: one line per job), stripped."""
        cluster, _, proc = job.partition(".")
        constraint = f"(ClusterId == {cluster} && ProcId == {proc})" if proc else f"ClusterId == {cluster}"
        ads = self.schedd_jobs(f"({constraint})", [attr])
        return "\n".join(_af_text(ad, attr) for ad in ads).strip()


def _af_text(wire: dict[str, str], attr: str) -> str:
    """An attribute of a job ad (wire form) as ``-af`` prints it: strings bare, else ClassAd text."""
    from htcd.classad import ClassAd, unparse

    value = ClassAd.from_wire(wire).eval_expr(attr)
    return value if isinstance(value, str) else unparse(value)


def run_as(uid: int, argv: list[str], env: dict[str, str], cwd: str | None = None) -> tuple[int, str, str]:
    """Run ``htcd ARGV`` as ``uid`` in a forked child: the same code, but the daemons see another
    user on their socket (forked, not exec'd: the other user may not be able to read this
    interpreter, nor the checkout, so the child imports nothing of its own, see
    ``_load_everything``); (exit code, stdout, stderr).  Needs root."""
    from htcd.cli import main as cli

    _load_everything()
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            os.close(r_out)
            os.close(r_err)
            if cwd:
                os.chdir(cwd)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.dup2(w_out, 1)
            os.dup2(w_err, 2)
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the child exits below
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
            os.environ.clear()
            os.environ.update(env)
            code = cli.main(list(argv))
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(w_out)
    os.close(w_err)
    with open(r_out) as out, open(r_err) as err:
        stdout, stderr = out.read(), err.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), stdout, stderr


_LOADED = False
# Standard modules imported on first use (argparse: shutil for the width, getaddrinfo: idna); the
# interpreter's own library may be out of the other user's reach too (a Python under /root).
LAZY_STDLIB = ("shutil", "traceback", "encodings.idna", "getpass", "pwd", "grp", "json", "uuid", "secrets", "hmac",
               "tempfile")


def _load_everything() -> None:
    """Load, while this process can read them, every htcd module, the plugins (the process's
    plugin manager) and the shipped config templates: a child that has become another user may
    not be able to read the checkout, the virtualenv or the interpreter's library (a checkout
    under a 0700 home), so whatever the CLI would read there lazily must already be in memory."""
    global _LOADED
    if _LOADED:
        return
    import htcd
    from htcd.config import preload_templates, table
    from htcd.plugins import get_plugin_manager

    for info in pkgutil.walk_packages(htcd.__path__, "htcd.", onerror=lambda name: None):
        if not info.name.endswith("__main__"):
            with contextlib.suppress(Exception):  # an optional dependency missing: not needed here
                importlib.import_module(info.name)
    for name in LAZY_STDLIB:
        importlib.import_module(name)
    table()  # the param table is read once per process
    preload_templates()
    get_plugin_manager()  # entry points read and plugins imported once per process
    _LOADED = True


class LoopThread:
    """An asyncio loop in its own thread, so blocking clients in a test can talk to the server
    (``self.server``, set by the subclass) that runs on it."""

    server: Any

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def close(self) -> None:
        self.run(self.server.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def gone(pid: int) -> bool:
    """The process has exited (a zombie not yet reaped counts as gone)."""
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def peak_rss_mb(pid: int) -> float:
    """A live process's peak resident set size so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for {pid}")
