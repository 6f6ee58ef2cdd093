"""One daemon of DAEMON_LIST as the master sees it: its process and its restart bookkeeping."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

KNOWN = ("SHARED_PORT", "COLLECTOR", "NEGOTIATOR", "SCHEDD", "STARTD", "DEFRAG")
# The shared port first (every other daemon is reached through it), then the collector, so that
# the others find it; shut down the other way round.
START_ORDER = {"SHARED_PORT": -1, "COLLECTOR": 0, "NEGOTIATOR": 1, "STARTD": 2, "SCHEDD": 3, "DEFRAG": 4}

# Stop modes, mildest first (HTCondor's StopStateT): peaceful waits for jobs however long they
# take, graceful gives up after SHUTDOWN_GRACEFUL_TIMEOUT, fast after SHUTDOWN_FAST_TIMEOUT, then
# the daemon is killed.
PEACEFUL, GRACEFUL, FAST, KILL = "PEACEFUL", "GRACEFUL", "FAST", "KILL"
RANK = {PEACEFUL: 0, GRACEFUL: 1, FAST: 2, KILL: 3}
_STOPPING = {PEACEFUL: "Shutdown,Peaceful", GRACEFUL: "Shutdown,Graceful", FAST: "Shutdown,Fast",
             KILL: "Shutdown,Hard"}


def mode_of(fast: bool, peaceful: bool) -> str:
    return FAST if fast else PEACEFUL if peaceful else GRACEFUL


@dataclass(eq=False)
class Child:
    name: str
    on_hold: bool = False  # off until "htcd on" (off -daemon, DAEMONS_OFF, exit status 99)
    proc: asyncio.subprocess.Process | None = None
    start_time: int = 0  # wall clock; 0 while down (the ad's <NAME>_StartTime)
    started: float = 0.0  # monotonic
    restarts: int = 0  # restarts since the daemon last recovered: the backoff exponent
    stop_state: str | None = None
    not_responding: bool = False
    hung_deadline: float | None = None  # monotonic; set by each DC_CHILDALIVE
    alive_messages: int = 0
    next_start: float = 0.0  # wall clock of a pending restart
    last_exit: str = ""
    exited: asyncio.Event = field(default_factory=asyncio.Event)
    restart_task: asyncio.Task[None] | None = None
    recover_task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """Started and not yet reaped by the master."""
        return self.proc is not None

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc is not None else 0

    @property
    def process_name(self) -> str:
        return f"htcd {self.name.lower()}"

    @property
    def restart_pending(self) -> bool:
        return self.restart_task is not None and not self.restart_task.done()

    def state(self) -> str:
        """The daemon's state as HTCondor's master reports it (``<NAME>_State``)."""
        if self.running:
            if self.stop_state:
                return _STOPPING[self.stop_state]
            if self.not_responding:
                return "Hung"
            return "Alive" if self.alive_messages else "Startup"
        if self.on_hold:
            return "Hold"
        return "Dead" if self.last_exit else "Startup"
