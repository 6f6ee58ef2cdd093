"""``htcd master|collector|negotiator|schedd|startd|defrag|shared_port``: run a daemon.

With ``-f`` the daemon stays in the foreground; without it, it detaches (as HTCondor's do).
Under a master, a daemon asks the kernel to stop it if the master dies (no orphans).
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from htcd.config import Config

CLASSES = {
    "master": "htcd.master.daemon:Master", "collector": "htcd.collector.daemon:Collector",
    "negotiator": "htcd.negotiator.daemon:Negotiator", "schedd": "htcd.schedd.daemon:Schedd",
    "startd": "htcd.startd.daemon:Startd", "defrag": "htcd.defrag.daemon:Defrag",
    "shared_port": "htcd.sharedport.daemon:SharedPort",
}
PR_SET_PDEATHSIG = 1


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("-f", "-foreground", dest="foreground", action="store_true", help="stay in the foreground")
    p.add_argument("-t", dest="terminal", action="store_true", help="also log to the terminal (stderr)")
    p.add_argument("-local-name", dest="local_name", help="the local name (config prefix) of this daemon")

    def run(args: argparse.Namespace) -> int:
        module, _, cls_name = CLASSES[name].partition(":")
        cls = getattr(importlib.import_module(module), cls_name)
        from htcd.config import load as load_config
        from htcd.daemon import run_daemon

        if name == "master":
            _refuse_second_master(load_config("MASTER", args.local_name))
        if not args.foreground:
            _detach()
        _die_with_master()
        from htcd.daemon import keepalive

        # 99 (DAEMON_NO_RESTART) after DAEMON_SHUTDOWN or a full disk: the master leaves it off
        return run_daemon(cls, terminal=args.terminal, local_name=args.local_name) or keepalive.exit_status()

    return run


def _refuse_second_master(cfg: Config) -> None:
    from htcd.client import daemoncore
    from htcd.errors import UserError
    from htcd.wire import locate

    addr = locate.local_daemon(cfg, "MASTER")
    if addr is None or not daemoncore.answers(addr, timeout=5):
        return  # none, or a stale address file from a master that died
    raise UserError(f"a master is already running at {addr} (LOCAL_DIR {cfg.get('LOCAL_DIR')}); "
                    "stop it with 'htcd off' first")


def _detach() -> None:
    """Classic double fork: the daemon is re-parented to init and has no terminal."""
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


def _die_with_master() -> None:
    master = os.environ.get("HTCD_MASTER_PID")
    if not master or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != int(master):  # the master died before prctl took effect
        raise SystemExit(0)
