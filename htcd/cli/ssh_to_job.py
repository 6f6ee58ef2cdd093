"""``htcd ssh_to_job``: a shell, or a command, in a running job's sandbox (condor_ssh_to_job).

``htcd ssh_to_job [-name SCHEDD] [-auto-retry] JOBID [COMMAND ...]``.  The job's startd (from the
schedd's ad) starts the shell or command in the job's working directory with the job's
environment, as the job's user, and relays its input and output over this tool's authenticated
connection -- no sshd, no ssh keys (docs/inside.md).  Without a command and with a terminal, the
shell runs on a pseudo-terminal and this terminal is put in raw mode until it exits.  Only the
job's owner or a queue superuser may, and only where ENABLE_SSH_TO_JOB is true.  The exit status
is the command's (128 + N for a signal N).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from htcd.errors import UserError

POLL = 2.0


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("job", metavar="JOBID", help="cluster.proc, or cluster for its first job")
    p.add_argument("remote_command", metavar="COMMAND", nargs=argparse.REMAINDER,
                   help="run this (by the job's shell) instead of an interactive shell")
    p.add_argument("-name", help="the schedd (default: this host's)")
    p.add_argument("-auto-retry", dest="auto_retry", action="store_true",
                   help="wait (polling every 2 s) for the job to start running")
    for flag in ("-ssh", "-keygen-options", "-shells", "-remove-job-on-failure", "-X", "-x"):
        p.add_argument(flag, dest="unsupported_" + flag.strip("-").replace("-", "_"), nargs="?", const=True,
                       help=argparse.SUPPRESS)
    return _run


def _window() -> tuple[int, int] | None:
    try:
        size = os.get_terminal_size(0)
    except OSError:
        return None
    return size.lines, size.columns


def _run(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.client import inside, schedd

    for key, value in vars(args).items():
        if key.startswith("unsupported_") and value is not None:
            raise UserError(f"-{key.removeprefix('unsupported_').replace('_', '-')}: htcd's ssh_to_job uses no "
                            "ssh client or sshd (the startd relays the shell), so this option has no meaning")
    cfg = common.config()
    address = schedd.address(cfg, args.name)[0]
    where = inside.locate_running(address, args.job, args.auto_retry, POLL)
    return attach(where, " ".join(args.remote_command))


def attach(where: Any, command: str) -> int:
    """Run ``command`` (or, without one, a shell: interactive on this terminal, with it in raw
    mode meanwhile) where the job runs, relaying this process's stdin and output; its exit status."""
    from htcd.client import inside

    stdin = 0  # the descriptor itself: sys.stdin may be replaced by a wrapper without one
    interactive = not command and os.isatty(stdin)
    out, err = sys.stdout.buffer, sys.stderr.buffer

    def write(stream: str, data: bytes) -> None:
        sink = out if stream == "out" else err
        sink.write(data)
        sink.flush()

    if not interactive:
        code = inside.ssh(where, command, None, stdin, write)
    else:
        import termios
        import tty

        saved = termios.tcgetattr(stdin)
        try:
            tty.setraw(stdin)
            code = inside.ssh(where, "", _window() or (24, 80), stdin, write, _window)
        finally:
            termios.tcsetattr(stdin, termios.TCSADRAIN, saved)
    return 128 - code if code < 0 else code
