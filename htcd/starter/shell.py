"""A shell or a command in a running job's sandbox (htcd ssh_to_job), relayed over the tool's connection.

HTCondor's condor_ssh_to_job has the starter start an sshd in the job's sandbox and the tool run
ssh through a proxy.  htcd needs no sshd: the startd spawns the process itself -- in the job's
working directory, with the job's environment, as the job's user, in a session of its own (with a
pseudo-terminal for an interactive shell) -- and relays its output as partial replies and the
tool's input frames, once told ``{started}`` (``{stdin: bytes}``, ``{eof: true}``, ``{winch: [rows, cols]}``) to it; the
exit code goes as ``{exit}`` and the tool answers ``{bye: true}`` before the final reply.

An interactive job (``InteractiveJob``, htcd submit -interactive) is a placeholder that keeps the
slot for its shells.  While a session into it is open its sandbox holds a directory
``.condor_ssh_to_job_N`` (HTCondor's name for a session's directory, which HTCondor's placeholder
waits on), and when the last session ends the job gets SIGTERM and so ends, as HTCondor's starter
ends the placeholder of an interactive job (it does so when a session starts, and keeps the job
until its sshd exits).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import glob
import os
import signal
import struct
import termios
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from htcd.wire.framing import read_frame

if TYPE_CHECKING:
    from htcd.starter.starter import Starter

Send = Callable[[dict[str, Any]], Awaitable[None]]
SESSION_DIR = ".condor_ssh_to_job_"  # + N: an open session of an interactive job (HTCondor's name)


def argv_for(environment: dict[str, str], command: str, tty: bool) -> list[str]:
    """The shell (the job's SHELL, else /bin/sh) running ``command`` as ssh would; without a
    command, interactive on a terminal, else reading its commands from the input."""
    shell = environment.get("SHELL") or "/bin/sh"
    if command:
        return [shell, "-c", command]
    return [shell, "-i"] if tty else [shell]


def for_job(starter: Starter) -> dict[str, Any]:
    """The Session arguments of a job's sessions: for an interactive job, the sandbox to mark
    them in and how the job ends after the last (SIGTERM, as HTCondor's session set-up sends)."""
    if starter.job_ad.get_value("InteractiveJob") is not True or not starter.sandbox:
        return {}
    return {"marker_home": starter.sandbox, "after_last": lambda: starter.signal(signal.SIGTERM)}


def _set_size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def _controlling_tty() -> None:  # runs in the child, after fork: the pty becomes its terminal
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Session:
    """One process in the job's sandbox and the relay of its I/O."""

    def __init__(self, argv: list[str], cwd: str, env: dict[str, str], uid: int | None, gid: int | None,
                 tty: tuple[int, int] | None, marker_home: str | None = None,
                 after_last: Callable[[], None] | None = None) -> None:
        self.argv, self.cwd, self.env, self.uid, self.gid, self.tty = argv, cwd, env, uid, gid, tty
        self.marker_home, self.after_last = marker_home, after_last  # an interactive job's (for_job())
        self.marker = ""  # this session's .condor_ssh_to_job_N while it is open
        self.proc: asyncio.subprocess.Process | None = None
        self.master = -1
        self.bye = asyncio.Event()  # the tool has read the exit code: no more frames of its will come

    async def start(self) -> None:
        who: dict[str, Any] = {}
        if self.uid is not None and self.uid != os.geteuid():
            who = {"user": self.uid, "group": self.gid, "extra_groups": []}
        env = {**self.env, "TERM": self.env.get("TERM", "xterm")} if self.tty else self.env
        if self.tty is None:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv, cwd=self.cwd, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True, **who)
            self._mark()
            return
        import pty

        self.master, slave = pty.openpty()
        try:
            _set_size(slave, *self.tty)
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv, cwd=self.cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
                preexec_fn=_controlling_tty, **who)
        finally:
            os.close(slave)
        os.set_blocking(self.master, False)
        self._mark()

    def _mark(self) -> None:
        """The session's directory (the first free ``.condor_ssh_to_job_N``), the job's user's.
        Without it (the sandbox is going) the session still runs; the job then ends on its own."""
        if self.marker_home is None:
            return
        for n in range(1, 10000):
            path = os.path.join(self.marker_home, f"{SESSION_DIR}{n}")
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            except OSError:
                return
            self.marker = path
            if self.uid is not None and self.uid != os.geteuid():
                with contextlib.suppress(OSError):
                    os.chown(path, self.uid, self.gid if self.gid is not None else -1)
            return

    def _closed(self) -> None:
        """The session is over: its directory goes, and after the last one an interactive job ends."""
        if not self.marker:
            return
        with contextlib.suppress(OSError):
            os.rmdir(self.marker)
        self.marker = ""
        assert self.marker_home is not None
        if self.after_last is not None and not glob.glob(os.path.join(glob.escape(self.marker_home),
                                                                      SESSION_DIR + "*")):
            self.after_last()

    async def relay(self, reader: asyncio.StreamReader, send: Send) -> int:
        """Tell the tool ``{started}`` (its input may come), then relay until the process ends
        and its output is out; its exit code (-N: signal N), sent as ``{exit}``, after which the
        tool says ``{bye}``: nothing it sent is left unread."""
        proc = self.proc
        assert proc is not None
        inbound: asyncio.Future[None] | None = None
        try:
            await send({"started": True})
            inbound = asyncio.ensure_future(self._inbound(reader))
            if self.tty is None:
                assert proc.stdout is not None and proc.stderr is not None
                await asyncio.gather(self._pipe(proc.stdout, "out", send), self._pipe(proc.stderr, "err", send))
            else:
                await self._pty_out(send)
            code = await proc.wait()
            await send({"exit": code})
            try:  # its input frames sent meanwhile are read (and dropped) up to its goodbye
                async with asyncio.timeout(30):
                    await self.bye.wait()
            except TimeoutError:
                pass
            return code
        finally:
            if inbound is not None:
                inbound.cancel()
            self.stop()
            if self.master >= 0:
                os.close(self.master)
                self.master = -1
            self._closed()

    async def _pipe(self, stream: asyncio.StreamReader, key: str, send: Send) -> None:
        while data := await stream.read(65536):
            await send({key: data})

    async def _pty_out(self, send: Send) -> None:
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()
        loop.add_reader(self.master, ready.set)
        try:
            while True:
                await ready.wait()
                ready.clear()
                try:
                    data = os.read(self.master, 65536)
                except BlockingIOError:
                    continue
                except OSError:  # EIO: every holder of the terminal is gone
                    return
                if not data:
                    return
                await send({"out": data})
        finally:
            loop.remove_reader(self.master)

    async def _inbound(self, reader: asyncio.StreamReader) -> None:
        """The tool's frames: input, end of input, window size.  The tool gone: the process is stopped."""
        proc = self.proc
        assert proc is not None
        while True:
            frame = await read_frame(reader)
            if frame is None:
                self.stop()
                return
            if frame.get("bye"):
                self.bye.set()
                return
            data = frame.get("stdin")
            if isinstance(data, bytes) and data:
                if self.tty is not None:
                    os.write(self.master, data)
                elif proc.stdin is not None:
                    proc.stdin.write(data)
                    await proc.stdin.drain()
            if frame.get("eof") and proc.stdin is not None:
                proc.stdin.close()
            size = frame.get("winch")
            if self.tty is not None and isinstance(size, list) and len(size) == 2:
                _set_size(self.master, int(size[0]), int(size[1]))

    def stop(self) -> None:
        """Hang up on the process's session: SIGHUP, then SIGKILL."""
        proc = self.proc
        if proc is not None and proc.returncode is None:
            for sig in (signal.SIGHUP, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                except (ProcessLookupError, PermissionError):
                    break
