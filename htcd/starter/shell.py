"""A shell or a command in a running job's sandbox (htcd ssh_to_job), relayed over the tool's connection.

HTCondor's condor_ssh_to_job has the starter start an sshd in the job's sandbox and the tool run
ssh through a proxy.  htcd needs no sshd: the startd spawns the process itself -- in the job's
working directory, with the job's environment, as the job's user, in a session of its own (with a
pseudo-terminal for an interactive shell) -- and relays its output as partial replies and the
tool's input frames, once told ``{started}`` (``{stdin: bytes}``, ``{eof: true}``, ``{winch: [rows, cols]}``) to it; the
exit code goes as ``{exit}`` and the tool answers ``{bye: true}`` before the final reply.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import struct
import termios
from collections.abc import Awaitable, Callable
from typing import Any

from htcd.wire.framing import read_frame

Send = Callable[[dict[str, Any]], Awaitable[None]]


def argv_for(environment: dict[str, str], command: str, tty: bool) -> list[str]:
    """The shell (the job's SHELL, else /bin/sh) running ``command`` as ssh would; without a
    command, interactive on a terminal, else reading its commands from the input."""
    shell = environment.get("SHELL") or "/bin/sh"
    if command:
        return [shell, "-c", command]
    return [shell, "-i"] if tty else [shell]


def _set_size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def _controlling_tty() -> None:  # runs in the child, after fork: the pty becomes its terminal
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Session:
    """One process in the job's sandbox and the relay of its I/O."""

    def __init__(self, argv: list[str], cwd: str, env: dict[str, str], uid: int | None, gid: int | None,
                 tty: tuple[int, int] | None) -> None:
        self.argv, self.cwd, self.env, self.uid, self.gid, self.tty = argv, cwd, env, uid, gid, tty
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

    async def relay(self, reader: asyncio.StreamReader, send: Send) -> int:
        """Relay until the process ends and its output is out; its exit code (-N: signal N),
        sent as ``{exit}``, after which the tool says ``{bye}``: nothing it sent is left unread."""
        proc = self.proc
        assert proc is not None
        inbound = asyncio.ensure_future(self._inbound(reader))
        try:
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
            inbound.cancel()
            self.stop()
            if self.master >= 0:
                os.close(self.master)
                self.master = -1

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
