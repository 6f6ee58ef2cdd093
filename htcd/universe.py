"""Public types of the universe interface (what ``htcd_register_universes`` plugins implement).

The starter gives a universe a :class:`JobContext` (the sandbox is made and filled, stdin,
stdout and stderr are paths inside it) and gets a :class:`RunningJob` back, which it monitors,
signals and finally awaits for an :class:`ExitStatus`.  The starter, not the universe, removes
the sandbox and reaps any process the job leaves behind.
"""

from __future__ import annotations

import abc
import contextlib
import logging
import os
import resource
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from htcd.classad import ClassAd


@dataclass
class JobContext:
    job_ad: ClassAd
    sandbox: str
    executable: str
    arguments: list[str]
    environment: dict[str, str]
    stdin: str
    stdout: str
    stderr: str
    uid: int | None = None
    gid: int | None = None
    request_cpus: int = 1
    request_memory_mb: int = 0
    slot_name: str = ""
    job_id: str = ""  # "cluster.proc"
    memory_limit_mb: int = 0  # the slot's Memory (else RequestMemory): the job's hard limit; 0 none
    job_env: frozenset[str] = frozenset()  # names the job's own Environment sets (the rest the starter adds)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("htcd.starter"))
    # Open ``cgroup.procs`` files of the job's cgroup: a universe that starts the job as a local
    # process has that process write ``0`` to each before it executes the job (see
    # :func:`join_cgroup`), so that all it spawns is in the group.  Empty: no cgroup.
    join_fds: tuple[int, ...] = ()
    # The job's core file limit in bytes (its CoreSize; 0 none, RLIM_INFINITY unlimited): a
    # local process gets it as its soft RLIMIT_CORE before it executes the job (see child_setup).
    core_size: int = 0


def join_cgroup(fds: tuple[int, ...]) -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen` that moves the new process into the job's
    cgroup (the files were opened by the starter, whose rights the kernel checks), or None."""
    if not fds:
        return None

    def join() -> None:
        for fd in fds:
            os.write(fd, b"0")

    return join


def child_setup(ctx: JobContext) -> Callable[[], None]:
    """A ``preexec_fn`` for the job's first process: its core file limit (the soft RLIMIT_CORE,
    at most the hard one), then joining its cgroup (:func:`join_cgroup`)."""
    join = join_cgroup(ctx.join_fds)
    core = ctx.core_size

    def setup() -> None:
        _soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (core_soft_limit(core, hard), hard))
        if join is not None:
            join()

    return setup


def core_soft_limit(core: int, hard: int) -> int:
    """The soft RLIMIT_CORE for a job's CoreSize ``core``: at most the hard limit."""
    if hard != resource.RLIM_INFINITY and (core == resource.RLIM_INFINITY or core > hard):
        return hard
    return core


_CORE_LIMIT = threading.Lock()


@contextlib.contextmanager
def spawning(ctx: JobContext) -> Iterator[Callable[[], None] | None]:
    """The ``preexec_fn`` for the job's first process, and the moment to start it in.  With no
    cgroup to join there is none: :class:`subprocess.Popen` may then use vfork (no copy of the
    daemon's memory map, no Python in the child; a job of another account still forks), and the
    child inherits the job's core limit, set on this process for the moment of the spawn (spawns
    in several threads take turns).  With a cgroup: :func:`child_setup`."""
    if ctx.join_fds:
        yield child_setup(ctx)
        return
    with _CORE_LIMIT:
        soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
        wanted = core_soft_limit(ctx.core_size, hard)
        if wanted != soft:
            resource.setrlimit(resource.RLIMIT_CORE, (wanted, hard))
        try:
            yield None
        finally:
            if wanted != soft:
                resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


@dataclass
class ExitStatus:
    exit_code: int | None = None  # set when the job exited by itself
    signal: int | None = None  # set when a signal ended it
    user_cpu: float = 0.0
    sys_cpu: float = 0.0
    max_rss_kb: int = 0
    hold_reason: str | None = None  # the universe asks for the job to be held (e.g. OOM)
    hold_code: int = 0  # its HoldReasonCode (e.g. 34, JobOutOfResources), 0: the starter's default

    @property
    def by_signal(self) -> bool:
        return self.signal is not None


class RunningJob(abc.ABC):
    """A job a universe has started."""

    pgid: int | None = None  # process group the starter reaps after exit, if any

    @abc.abstractmethod
    async def wait(self) -> ExitStatus:
        """Wait until the job has ended."""

    @abc.abstractmethod
    def kill(self) -> None:
        """Kill the job now (SIGKILL or the universe's equivalent)."""

    @abc.abstractmethod
    def signal(self, signum: int) -> None:
        """Send a signal (vacate, suspend with SIGSTOP, continue with SIGCONT)."""

    def usage(self) -> dict[str, int | float] | None:
        """The job's usage as the universe measures it, for a job outside the starter's process
        tree (``Universe.local_processes`` False): any of RemoteUserCpu, RemoteSysCpu (seconds),
        ResidentSetSize, ImageSize (KiB) and MemoryUsage (MB), the latest sample; None when the
        universe has none (the starter then measures the job's processes itself).  Called from
        the starter's event loop: it must return at once (sample in a thread, return the last)."""
        return None


class Universe(abc.ABC):
    name: str = ""
    # False: the job runs outside the starter's process tree (in a container engine), so the
    # starter makes no cgroup for it and does not follow its processes.
    local_processes: bool = True
    # False: a job may name no executable (Cmd = ""): the universe runs its default (an image's
    # entrypoint); ``JobContext.executable`` is then "".
    needs_executable: bool = True

    def configure(self, config: object) -> None:
        """Read the knobs (``config`` is the startd's :class:`htcd.config.Config`); called once the
        startd has made the universe and again after each reconfig."""
        return None

    def clean_orphans(self) -> int:
        """Remove what jobs of an earlier run of this startd left outside their sandboxes (such
        as containers) after a crash; the number removed.  Called once at start-up, in a thread,
        after :meth:`configure`."""
        return 0

    def available(self) -> bool:
        """Whether this execute point can run the universe's jobs now (e.g. its container engine
        answers).  One that cannot is left out of ``StarterAbilityList`` and its ``Has<Universe>``
        attribute (``HasDocker``) is not advertised, as an HTCondor startd without a working
        docker does not offer the docker universe, so its jobs do not match here.  Called from
        the startd's event loop at every ad update, after :meth:`machine_attributes`: it must
        not block."""
        return True

    def machine_attributes(self) -> dict[str, object]:
        """Attributes this universe adds to slot ads (HasDocker, ...)."""
        return {}

    @abc.abstractmethod
    async def start(self, ctx: JobContext) -> RunningJob:
        """Start the job described by ``ctx``; raise UniverseError if it cannot start."""


class UniverseError(Exception):
    """The job could not be started; the message becomes the job's hold reason, ``code`` its
    HoldReasonCode (0: FailedToCreateProcess, 6) and ``subcode`` its HoldReasonSubCode."""

    def __init__(self, message: str, code: int = 0, subcode: int = 0) -> None:
        super().__init__(message)
        self.code, self.subcode = code, subcode


class UniverseRegistry:
    """Where plugins register universes, by name (case-insensitive)."""

    def __init__(self) -> None:
        self.factories: dict[str, Callable[[], Universe]] = {}

    def add(self, name: str, factory: Callable[[], Universe]) -> None:
        key = name.lower()
        if key in self.factories:
            raise ValueError(f"universe {name!r} is registered twice")
        self.factories[key] = factory

    def names(self) -> list[str]:
        return sorted(self.factories)
