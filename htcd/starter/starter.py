"""The starter: runs one job on a claimed slot, inside the startd's event loop.

A starter is a task, not a process: a Python process per job would cap an execute point near
30 job starts per second.  It makes the sandbox, hands the job to its universe plugin, waits,
collects the output, and then removes every process and file the job made ("renters clean
up").  A state file beside each sandbox lets a restarted startd find and clean up after a
crash.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pwd
import shutil
import signal
import time
from dataclasses import dataclass, field
from typing import Any

import psutil

from htcd.classad import ClassAd
from htcd.starter import jobenv
from htcd.transfer import TransferError, safe_name
from htcd.transfer.starter_side import collect_output, write_input
from htcd.universe import ExitStatus, JobContext, RunningJob, Universe, UniverseError

STDOUT = "_condor_stdout"
STDERR = "_condor_stderr"


class StarterError(Exception):
    """The job could not run; the message becomes its hold reason."""


@dataclass
class Starter:
    job_ad: ClassAd
    slot_name: str
    slot_id: int
    execute_dir: str
    universe: Universe
    log: logging.Logger
    files: dict[str, bytes] = field(default_factory=dict)
    running: RunningJob | None = None
    sandbox: str = ""
    killed: bool = False
    stopped: bool = False  # suspended (SIGSTOP) -- also when asked before the job's process existed

    def _user(self) -> tuple[int | None, int | None, str]:
        """Who the job runs as: its owner when we are root and the owner exists, else nobody;
        without root, the startd's own user."""
        if os.geteuid() != 0:
            return None, None, pwd.getpwuid(os.geteuid()).pw_name
        owner = str(self.job_ad.get_value("Owner", "") or "")
        for name in (owner, "nobody"):
            with contextlib.suppress(KeyError):
                pw = pwd.getpwnam(name)
                return pw.pw_uid, pw.pw_gid, name
        return 65534, 65534, "nobody"

    def _prepare(self) -> JobContext:
        ad = self.job_ad
        self.sandbox = os.path.join(self.execute_dir, f"dir_{os.getpid()}_{self.slot_id}_{time.monotonic_ns()}")
        os.makedirs(self.sandbox, mode=0o700)
        uid, gid, user = self._user()
        write_input(self.sandbox, self.files)
        cmd = str(ad.get_value("Cmd", "") or "")
        if not cmd:
            raise StarterError("the job has no Cmd")
        if ad.get_value("TransferExecutable", True) is not False:
            executable = os.path.join(self.sandbox, safe_name(cmd))
            if not os.path.exists(executable):
                raise StarterError(f"executable {cmd} was not transferred")
            os.chmod(executable, 0o755)
        else:
            executable = cmd
        stdin_name = str(ad.get_value("In", "/dev/null") or "/dev/null")
        stdin = "/dev/null" if stdin_name == "/dev/null" else os.path.join(self.sandbox, safe_name(stdin_name))
        env = jobenv.environment(ad.get_value("Environment"), ad.get_value("Env"))
        env.update({"_CONDOR_SCRATCH_DIR": self.sandbox, "_CONDOR_SLOT": self.slot_name.split("@")[0],
                    "TMPDIR": self.sandbox, "TMP": self.sandbox, "TEMP": self.sandbox})
        env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
        with open(os.path.join(self.sandbox, ".job.ad"), "w") as f:
            f.write(ad.to_old() + "\n")
        env["_CONDOR_JOB_AD"] = os.path.join(self.sandbox, ".job.ad")
        for p in (STDOUT, STDERR):
            open(os.path.join(self.sandbox, p), "wb").close()
        if uid is not None and gid is not None:
            for root, dirs, files in os.walk(self.sandbox):
                for n in [root, *(os.path.join(root, d) for d in dirs), *(os.path.join(root, f) for f in files)]:
                    os.chown(n, uid, gid)
        self._write_state(None)
        self.log.info("job %s.%s: sandbox %s, user %s", ad.get_value("ClusterId"), ad.get_value("ProcId"),
                      self.sandbox, user)
        return JobContext(job_ad=ad, sandbox=self.sandbox, executable=executable,
                          arguments=jobenv.arguments(ad.get_value("Arguments"), ad.get_value("Args")),
                          environment=env, stdin=stdin, stdout=os.path.join(self.sandbox, STDOUT),
                          stderr=os.path.join(self.sandbox, STDERR), uid=uid, gid=gid,
                          request_cpus=int(ad.get_value("RequestCpus", 1) or 1),
                          request_memory_mb=int(ad.get_value("RequestMemory", 0) or 0),
                          slot_name=self.slot_name, log=self.log)

    def _state_path(self) -> str:
        return self.sandbox + ".state"

    def _write_state(self, pgid: int | None) -> None:
        with open(self._state_path(), "w") as f:
            json.dump({"sandbox": self.sandbox, "pgid": pgid, "startd_pid": os.getpid()}, f)

    async def run(self) -> dict[str, Any]:
        """Run the job to its end; the reply the shadow gets."""
        start = time.time()
        before: set[str] = set()
        try:
            ctx = self._prepare()
            before = set(os.listdir(self.sandbox))
            self.running = await self.universe.start(ctx)
            if self.running.pgid:
                self._write_state(self.running.pgid)
            if self.killed:  # killed or vacated while the job was being started
                self.running.kill()
            elif self.stopped:
                self.running.signal(signal.SIGSTOP)
            self.log.info("started %s (pgid %s)", ctx.executable, self.running.pgid)
            status = await self.running.wait()
        except (StarterError, TransferError, UniverseError, OSError) as exc:
            self.log.error("job could not run: %s", exc)
            self.cleanup()
            return {"error": str(exc), "start_time": start, "end_time": time.time()}
        except BaseException:
            self.kill()
            self.cleanup()
            raise
        try:
            reply = self._result(status, before, start)
        finally:
            self.cleanup()
        return reply

    def _result(self, status: ExitStatus, before: set[str], start: float) -> dict[str, Any]:
        files, missing = collect_output(self.sandbox, self.job_ad, self.files, before, {STDOUT, STDERR, ".job.ad"})

        def read(name: str) -> bytes:
            with open(os.path.join(self.sandbox, name), "rb") as f:
                return f.read()

        self.log.info("job exited: %s", f"signal {status.signal}" if status.by_signal else f"status {status.exit_code}")
        return {
            "exit_code": status.exit_code, "signal": status.signal, "killed": self.killed,
            "user_cpu": status.user_cpu, "sys_cpu": status.sys_cpu, "max_rss_kb": status.max_rss_kb,
            "hold_reason": status.hold_reason, "stdout": read(STDOUT), "stderr": read(STDERR),
            "files": files, "missing": missing, "start_time": start, "end_time": time.time(),
        }

    def kill(self) -> None:
        self.killed = True
        if self.running is not None:
            self.running.kill()

    def signal(self, signum: int) -> None:
        if self.running is not None:
            self.running.signal(signum)

    def suspend(self) -> None:
        """SIGSTOP to the job's process group (Claimed/Suspended)."""
        self.stopped = True
        self.signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.stopped = False
        self.signal(signal.SIGCONT)

    def vacate(self) -> None:
        """The soft kill: the job's KillSig (SIGTERM unless it asks otherwise), after a SIGCONT so
        that a suspended job can act on it.  A job not started yet has nothing to save: killed."""
        if self.running is None:
            self.kill()
            return
        self.resume()
        self.signal(kill_signal(self.job_ad.get_value("KillSig")))

    def usage(self) -> dict[str, Any]:
        """The job's usage so far, as the job ad spells it (sizes in KiB, CPU in seconds): what
        the shadow puts into the job ad with each periodic update."""
        procs: list[psutil.Process] = []
        pid = self.pid
        if pid:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(pid)
                procs = [root, *root.children(recursive=True)]
        rss = vms = 0
        user = sys_ = 0.0
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                mem, cpu = proc.memory_info(), proc.cpu_times()
                rss, vms = rss + mem.rss, vms + mem.vms
                user, sys_ = user + cpu.user + cpu.children_user, sys_ + cpu.system + cpu.children_system
        disk = 0
        for root_dir, _dirs, names in os.walk(self.sandbox) if self.sandbox else ():
            for n in names:
                with contextlib.suppress(OSError):
                    disk += os.lstat(os.path.join(root_dir, n)).st_blocks * 512
        return {"ImageSize": vms // 1024, "ResidentSetSize": rss // 1024, "RemoteUserCpu": round(user, 2),
                "RemoteSysCpu": round(sys_, 2), "DiskUsage": (disk + 1023) // 1024}

    @property
    def pid(self) -> int | None:
        """The leader of the job's process tree (its process group), if it runs as one."""
        return self.running.pgid if self.running is not None else None

    def cleanup(self) -> None:
        """Kill whatever the job left running and remove its sandbox."""
        if self.running is not None and self.running.pgid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.running.pgid, signal.SIGKILL)
        if self.sandbox:
            shutil.rmtree(self.sandbox, ignore_errors=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._state_path())


def kill_signal(value: object) -> int:
    """A job's KillSig (``SIGTERM``, ``TERM`` or a number) as a signal number; SIGTERM if unknown."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < signal.NSIG:
        return value
    if isinstance(value, str):
        name = value.strip().upper()
        if name.isdigit():
            return kill_signal(int(name))
        with contextlib.suppress(KeyError):
            return int(signal.Signals[name if name.startswith("SIG") else f"SIG{name}"])
    return int(signal.SIGTERM)


def clean_orphans(execute_dir: str, log: logging.Logger) -> int:
    """After a crash: kill the process groups of sandboxes left behind and remove them."""
    cleaned = 0
    try:
        names = os.listdir(execute_dir)
    except FileNotFoundError:
        return 0
    for name in names:
        path = os.path.join(execute_dir, name)
        if name.endswith(".state"):
            with contextlib.suppress(OSError, ValueError):
                with open(path) as f:
                    state = json.load(f)
                _kill_group(state.get("pgid"), state.get("sandbox", ""), log)
            with contextlib.suppress(OSError):
                os.unlink(path)
        elif name.startswith("dir_") and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
            log.info("removed orphaned sandbox %s", path)
            cleaned += 1
    return cleaned


def _kill_group(pgid: int | None, sandbox: str, log: logging.Logger) -> None:
    """Kill the processes of ``pgid`` that really belong to ``sandbox`` (pids get reused)."""
    if not pgid:
        return
    for proc in psutil.process_iter(["pid"]):
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(proc.pid) != pgid:
                continue
            if proc.environ().get("_CONDOR_SCRATCH_DIR") == sandbox:
                proc.kill()
                log.info("killed orphaned job process %d from %s", proc.pid, sandbox)
