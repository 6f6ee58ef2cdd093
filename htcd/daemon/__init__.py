"""What every daemon shares (HTCondor's DaemonCore): server, timers, logs, ads, shutdown."""

from htcd.daemon.core import Daemon, run_daemon

__all__ = ["Daemon", "run_daemon"]
