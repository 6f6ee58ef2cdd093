"""The docker universe: the job runs in a container of the Docker engine (or Podman's service).

The sandbox is bind-mounted at its own path as the container's working directory, so the paths
the starter puts in the environment (``_CONDOR_SCRATCH_DIR``, ``_CONDOR_JOB_AD``) hold inside.
The job runs as the slot's user (``User = uid:gid``), under tini (``Init``) so that the kill
signal of a vacate reaches it, with the slot's memory as a hard limit (no swap), CPU shares and
a CPU quota from its request, and labels that name the execute point and the job, by which a
restarted startd finds and removes the containers of an earlier one.

Engine calls block, so they run in threads: one waiter thread per job (the engine's ``wait`` is
a long poll) and a one-thread queue per job for signals, so that pause, kill and unpause keep
their order.  The startd's event loop never waits on the engine.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import pwd
import signal
import threading
import time
from typing import Any, BinaryIO

from htcd.universe import ExitStatus, JobContext, RunningJob, Universe, UniverseError

from .engine import DEFAULT_ENDPOINT, Engine, EngineError

HOLD_FAILED_TO_CREATE_PROCESS = 6  # an engine error starting the container
HOLD_OUT_OF_RESOURCES = 34  # JobOutOfResources: over the memory limit
HOLD_INVALID_DOCKER_IMAGE = 35  # InvalidDockerImage: missing image, failed pull
LABEL_EXECUTE = "htcd.execute"  # the execute directory: one startd per directory, so it names the startd
LABEL_STARTD = "htcd.startd"
LABEL_JOB = "htcd.job"
PULL_POLICIES = ("always", "missing", "never")
_STARTER_PATH = "/usr/local/bin:/usr/bin:/bin"


def endpoint(config: Any) -> str:
    """DOCKER_HOST (knob, then environment), else a DOCKER knob that names a socket, else the
    engine's usual socket.  (HTCondor's DOCKER names the docker CLI, which htcd does not use.)"""
    value = (config.get("DOCKER_HOST") or "") if config is not None else ""
    if not value:
        docker = (config.get("DOCKER") or "") if config is not None else ""
        if docker.startswith(("unix://", "tcp://")) or docker.endswith(".sock"):
            value = docker
    return value or os.environ.get("DOCKER_HOST", "") or DEFAULT_ENDPOINT


STATS_FIRST = 1.0  # seconds from the start to the first usage sample
STATS_INTERVAL = 5.0  # seconds between two usage samples


def usage_of(stats: dict[str, Any]) -> dict[str, int | float]:
    """Job-ad usage from one engine ``stats`` reply: CPU seconds (user, system) and memory in use
    less the inactive page cache (as ``docker stats`` counts it); {} for a container that ended."""
    cpu = (stats.get("cpu_stats") or {}).get("cpu_usage") or {}
    mem = stats.get("memory_stats") or {}
    used = int(mem.get("usage") or 0)
    if not used and not cpu.get("total_usage"):
        return {}
    detail = mem.get("stats") or {}
    cache = int(detail.get("inactive_file", detail.get("total_inactive_file", 0)) or 0)
    rss_kib = max(0, used - cache) // 1024
    return {"RemoteUserCpu": int(cpu.get("usage_in_usermode") or 0) / 1e9,
            "RemoteSysCpu": int(cpu.get("usage_in_kernelmode") or 0) / 1e9,
            "ResidentSetSize": rss_kib, "ImageSize": rss_kib, "MemoryUsage": -(-rss_kib // 1024)}


class DockerJob(RunningJob):
    def __init__(self, engine: Engine, cid: str, ctx: JobContext, limit_mb: int, out: BinaryIO, err: BinaryIO) -> None:
        self.engine, self.cid, self.ctx, self.limit_mb = engine, cid, ctx, limit_mb
        self.out, self.err = out, err  # opened at start: the starter's stdio paths may be its own fds
        self.pgid = None  # nothing in the starter's process tree: the engine owns the processes
        self.sent: int | None = None  # the last signal htcd sent (kill, vacate)
        self.paused = False
        self._control = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"docker-{cid[:12]}")
        loop = asyncio.get_running_loop()
        self._done: asyncio.Future[ExitStatus] = loop.create_future()
        self._last: dict[str, int | float] | None = None  # the latest usage sample from the engine
        self._ended = threading.Event()
        threading.Thread(target=self._wait, args=(loop,), name=f"docker-wait-{cid[:12]}", daemon=True).start()
        threading.Thread(target=self._sample, name=f"docker-stats-{cid[:12]}", daemon=True).start()

    def usage(self) -> dict[str, int | float] | None:
        return self._last

    def _sample(self) -> None:
        """The engine's figures for the container (``stats``, one sample per call), every
        STATS_INTERVAL seconds until it ends; CPU time is kept, memory is the peak so far."""
        wait = STATS_FIRST
        while not self._ended.wait(wait):
            wait = STATS_INTERVAL
            try:
                stats = self.engine.json("GET", f"/containers/{self.cid}/stats",
                                         query={"stream": "false", "one-shot": "true"}, timeout=10.0) or {}
            except EngineError:
                continue  # the container is ending (or the engine is busy): the last sample stays
            sample = usage_of(stats)
            if sample:
                last = self._last or {}
                self._last = {k: max(v, last.get(k, 0)) for k, v in sample.items()}

    def _wait(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            result = self._finish()
        except Exception as exc:  # whatever happens, the starter hears of the end
            result = ExitStatus(exit_code=None, signal=int(signal.SIGKILL),
                                hold_reason=f"the Docker engine lost container {self.cid[:12]}: {exc}",
                                hold_code=HOLD_FAILED_TO_CREATE_PROCESS)
        finally:
            self._ended.set()
            self._control.shutdown(wait=False)
            self.out.close()
            self.err.close()

        def settle() -> None:
            if not self._done.done():
                self._done.set_result(result)

        loop.call_soon_threadsafe(settle)

    def _finish(self) -> ExitStatus:
        """Wait for the container's end, copy its output into the job's stdout/stderr, read its
        state (exit code, OOMKilled), and remove it."""
        try:
            while True:
                try:
                    self.engine.json("POST", f"/containers/{self.cid}/wait", timeout=None)
                    break
                except EngineError as exc:
                    if exc.status != 0:
                        raise
                    time.sleep(1.0)  # the engine restarts or is busy: ask again
                    self.engine.json("GET", f"/containers/{self.cid}/json")  # gone for good: raises
            state = (self.engine.json("GET", f"/containers/{self.cid}/json") or {}).get("State", {})
            for stream, data in self.engine.logs(self.cid):
                (self.err if stream == 2 else self.out).write(data)
            self.out.flush()
            self.err.flush()
        finally:
            with contextlib.suppress(EngineError):
                self.engine.call("DELETE", f"/containers/{self.cid}", query={"force": 1, "v": 1})
        return self._status(state)

    def _status(self, state: dict[str, Any]) -> ExitStatus:
        code = int(state.get("ExitCode", 0) or 0)
        status = ExitStatus()
        oom = state.get("OOMKilled") is True
        # Podman never reports OOMKilled: a SIGKILL htcd did not send, under a memory limit, is the sign.
        if not oom and code == 128 + signal.SIGKILL and self.limit_mb > 0 and self.sent is None:
            oom = True
        if oom:
            status.signal = int(signal.SIGKILL)
            status.hold_reason = (f"Docker job has gone over memory limit of {self.limit_mb} megabytes "
                                  "(the engine's OOM killer ended it).  "
                                  "Consider resubmitting with a higher request_memory.")
            status.hold_code = HOLD_OUT_OF_RESOURCES
        elif self.sent is not None and code == 128 + self.sent:
            status.signal = self.sent
        elif state.get("Error"):
            status.hold_reason = f"Docker engine error: {state['Error']}"
            status.hold_code = HOLD_FAILED_TO_CREATE_PROCESS
            status.exit_code = code
        else:
            status.exit_code = code
        return status

    async def wait(self) -> ExitStatus:
        return await asyncio.shield(self._done)

    def _do(self, method: str, path: str, **query: Any) -> None:
        def call() -> None:
            try:
                self.engine.call(method, path, query=query or None, timeout=10.0)
            except EngineError as exc:  # e.g. the container has ended meanwhile
                self.ctx.log.info("docker %s %s: %s", method, path.rsplit("/", 1)[-1], exc)

        with contextlib.suppress(RuntimeError):  # the job has ended: nothing to signal
            self._control.submit(call)

    def signal(self, signum: int) -> None:
        if self._done.done():
            return
        if signum == signal.SIGSTOP:
            self.paused = True
            self._do("POST", f"/containers/{self.cid}/pause")
        elif signum == signal.SIGCONT:
            if self.paused:
                self.paused = False
                self._do("POST", f"/containers/{self.cid}/unpause")
        else:
            self.sent = signum
            self._do("POST", f"/containers/{self.cid}/kill", signal=str(signum))
            if self.paused and signum == signal.SIGKILL:  # a paused container dies once thawed
                self.paused = False
                self._do("POST", f"/containers/{self.cid}/unpause")

    def kill(self) -> None:
        self.signal(signal.SIGKILL)


class DockerUniverse(Universe):
    name = "docker"
    local_processes = False
    needs_executable = False

    def __init__(self) -> None:
        self.config: Any = None
        self.engine = Engine(endpoint(None))
        self.execute = os.path.abspath(".")
        self.probe_interval = 300.0
        self.attrs: dict[str, object] = {}  # empty: no engine answered (HasDocker left out)
        self._seen = False  # an engine has answered since the startd started
        self._probed = 0.0
        self._probing = False
        self._lock = threading.Lock()

    # -- configuration and the slot attributes -----------------------------------------------
    def configure(self, config: Any) -> None:
        self.config = config
        self.engine = Engine(endpoint(config), timeout=float(max(1, config.get_int("DOCKER_API_TIMEOUT", 30))))
        self.execute = os.path.abspath(config.get("EXECUTE") or ".")
        self.probe_interval = float(max(1, config.get_int("DOCKER_PROBE_INTERVAL", 300)))
        self.probe()

    def probe(self) -> dict[str, object]:
        """Ask the engine what it is: HasDocker, DockerVersion (HTCondor's spelling), the
        networks jobs may name, and the images it holds; nothing when no engine answers (as
        HTCondor, which advertises HasDocker only for a machine that can run docker jobs)."""
        attrs: dict[str, object]
        try:
            version = self.engine.version()
            images = sorted({tag for img in self.engine.images() for tag in (img.get("RepoTags") or [])
                             if tag and tag != "<none>:<none>"})
            name = "Podman Engine" if "podman" in str(version.get("Components", "")).lower() else "Docker"
            attrs = {"HasDocker": True,
                     "DockerVersion": f"{name} version {version.get('Version', '?')}, "
                                      f"build {str(version.get('GitCommit', '?'))[:7]}",
                     "DockerImages": images[:100]}
            networks = (self.config.get("DOCKER_NETWORKS") or "") if self.config is not None else ""
            attrs["DockerNetworks"] = ",".join(n for n in networks.replace(",", " ").split())
            self._seen = True
        except (EngineError, ValueError, AttributeError) as exc:
            # an engine that answered before and is gone now: HasDocker = false says so (docker
            # jobs' TARGET.HasDocker fails either way); one never seen is not advertised at all
            attrs = {"HasDocker": False} if self._seen else {}
            if self.attrs.get("HasDocker") or not self._probed:
                self._log().warning("docker universe off (not offered): %s", exc)
        with self._lock:
            if attrs.get("HasDocker") and not self.attrs.get("HasDocker") and self._probed:
                self._log().info("docker universe on: %s", attrs["DockerVersion"])
            self.attrs, self._probed, self._probing = attrs, time.monotonic(), False
        return attrs

    def machine_attributes(self) -> dict[str, object]:
        """The last probe's answer; a stale one starts a new probe in a thread (the startd calls
        this from its event loop at every ad update, and sees the answer at the next one)."""
        with self._lock:
            stale = time.monotonic() - self._probed >= self.probe_interval and not self._probing
            if stale:
                self._probing = True
            attrs = dict(self.attrs)
        if stale:
            threading.Thread(target=self.probe, name="docker-probe", daemon=True).start()
        return attrs

    def available(self) -> bool:
        """The last probe found an engine: only then does the startd offer the universe."""
        with self._lock:
            return self.attrs.get("HasDocker") is True

    @staticmethod
    def _log() -> Any:
        import logging

        return logging.getLogger("htcd.startd")

    # -- orphans ---------------------------------------------------------------------------
    def clean_orphans(self) -> int:
        """Remove the containers an earlier startd of this execute directory left (crash)."""
        try:
            left = self.engine.containers({LABEL_EXECUTE: self.execute})
        except EngineError:
            return 0
        removed = 0
        for c in left:
            with contextlib.suppress(EngineError):
                self.engine.call("DELETE", f"/containers/{c['Id']}", query={"force": 1, "v": 1})
                removed += 1
        return removed

    # -- starting a job ----------------------------------------------------------------------
    async def start(self, ctx: JobContext) -> RunningJob:
        image = str(ctx.job_ad.get_value("DockerImage") or "").strip()
        if not image:
            raise UniverseError("the job has no DockerImage", HOLD_INVALID_DOCKER_IMAGE)
        policy = str(ctx.job_ad.get_value("DockerPullPolicy") or "missing").lower()
        if policy not in PULL_POLICIES:
            raise UniverseError(f"DockerPullPolicy {policy!r} is not one of {', '.join(PULL_POLICIES)}",
                                HOLD_INVALID_DOCKER_IMAGE)
        body = self._create_body(ctx, image)
        limit = body["HostConfig"].get("Memory", 0) >> 20
        try:
            # the job closes them; opening two local files may block the loop briefly
            out, err = open(ctx.stdout, "ab"), open(ctx.stderr, "ab")  # noqa: SIM115, ASYNC230
        except OSError as exc:
            raise UniverseError(f"cannot open the job's output: {exc.strerror or exc}") from None
        try:
            cid = await asyncio.to_thread(self._create, ctx, image, policy, body)
        except BaseException:
            out.close()
            err.close()
            raise
        return DockerJob(self.engine, cid, ctx, limit, out, err)

    def _create_body(self, ctx: JobContext, image: str) -> dict[str, Any]:
        env = dict(ctx.environment)
        if env.get("PATH") == _STARTER_PATH and "PATH" not in ctx.job_env:
            del env["PATH"]  # the image's own PATH, unless the job set one
        uid, gid = self._user(ctx, env)
        cpus = max(1, ctx.request_cpus)
        host: dict[str, Any] = {
            "Binds": [f"{d}:{d}" for d in dict.fromkeys((ctx.sandbox, env.get("_CONDOR_SCRATCH_DIR") or ctx.sandbox))],
            "Init": True,
            "CpuShares": 100 * cpus,
            "NanoCpus": cpus * 1_000_000_000,
        }
        if ctx.memory_limit_mb > 0:
            host["Memory"] = host["MemorySwap"] = ctx.memory_limit_mb << 20
        network = str(ctx.job_ad.get_value("DockerNetworkType") or "").strip()
        if network and network.lower() != "default":
            host["NetworkMode"] = network.lower() if network.lower() in ("none", "host") else network
        if self.config is None or self.config.get_bool("DOCKER_DROP_ALL_CAPABILITIES", True):
            host["CapDrop"] = ["ALL"]
        body: dict[str, Any] = {
            "Image": image,
            "Env": [f"{k}={v}" for k, v in env.items()],
            "WorkingDir": ctx.sandbox,
            "User": f"{uid}:{gid}",
            "Labels": {LABEL_EXECUTE: self.execute, LABEL_STARTD: ctx.slot_name.rpartition("@")[2],
                       LABEL_JOB: ctx.job_id},
            "HostConfig": host,
            "AttachStdin": False, "AttachStdout": False, "AttachStderr": False, "Tty": False,
        }
        if ctx.executable:
            body["Cmd"] = [ctx.executable, *ctx.arguments]
        elif ctx.arguments:
            body["Cmd"] = list(ctx.arguments)  # the image's entrypoint with the job's arguments
        return body

    @staticmethod
    def _user(ctx: JobContext, env: dict[str, str]) -> tuple[int, int]:
        """The slot's user; a job the starter would run as root (a personal pool run by root)
        runs as nobody instead, with its scratch directory given to nobody: containers never run
        jobs as root."""
        uid = ctx.uid if ctx.uid is not None else os.getuid()
        gid = ctx.gid if ctx.gid is not None else os.getgid()
        if uid != 0:
            return uid, gid
        try:
            pw = pwd.getpwnam("nobody")
            uid, gid = pw.pw_uid, pw.pw_gid
        except KeyError:
            uid = gid = 65534
        scratch = env.get("_CONDOR_SCRATCH_DIR") or ctx.sandbox
        for root, dirs, files in os.walk(scratch):
            for name in (root, *(os.path.join(root, n) for n in dirs + files)):
                with contextlib.suppress(OSError):
                    os.lchown(name, uid, gid)
        ctx.log.info("the job would run as root: it runs as nobody (%d:%d) in its container", uid, gid)
        return uid, gid

    def _create(self, ctx: JobContext, image: str, policy: str, body: dict[str, Any]) -> str:
        """Pull as the policy says, create and start the container; its id."""
        try:
            present = self.engine.has_image(image)
            if policy == "never" and not present:
                raise UniverseError(f"Docker image {image} is not on this execute point and the job's "
                                    "docker_pull_policy is never", HOLD_INVALID_DOCKER_IMAGE)
            if policy == "always" or not present:
                try:
                    self.engine.pull(image)
                except EngineError as exc:
                    if exc.status == 0:
                        raise
                    raise UniverseError(f"Cannot pull Docker image {image}: {exc}", HOLD_INVALID_DOCKER_IMAGE) from None
            created = self.engine.json("POST", "/containers/create", body,
                                       query={"name": f"htcd_{ctx.job_id.replace('.', '_')}_{os.urandom(4).hex()}"})
        except EngineError as exc:
            code = HOLD_INVALID_DOCKER_IMAGE if exc.status == 404 else HOLD_FAILED_TO_CREATE_PROCESS
            raise UniverseError(f"Cannot create Docker container from {image}: {exc}", code) from None
        cid = str(created["Id"])
        try:
            self.engine.call("POST", f"/containers/{cid}/start")
        except EngineError as exc:  # a container whose start failed stays "created": remove it
            with contextlib.suppress(EngineError):
                self.engine.call("DELETE", f"/containers/{cid}", query={"force": 1, "v": 1})
            raise UniverseError(f"Cannot start Docker container from {image}: {exc}",
                                HOLD_FAILED_TO_CREATE_PROCESS) from None
        ctx.log.info("docker container %s (%s) started for job %s", cid[:12], image, ctx.job_id)
        return cid
