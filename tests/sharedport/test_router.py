"""The shared port's router in-process: a request that arrives in pieces, one that names no
daemon (default id, first frame left unread), a client that closes early, and the hand-over
itself (the daemon's side reads what the client sent after the request, byte for byte)."""

from __future__ import annotations

import asyncio
import logging
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

from htcd.sharedport.router import Router
from htcd.wire.framing import HEADER, decode_body, encode
from htcd.wire.sharedport import HandoverListener, request


async def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    loop = asyncio.get_running_loop()
    data = b""
    while len(data) < n:
        chunk = await asyncio.wait_for(loop.sock_recv(sock, n - len(data)), 10)
        if not chunk:
            break
        data += chunk
    return data


async def _until(cond: Callable[[], bool], what: str) -> None:
    """Wait, with a deadline, for the router to reach a state."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while not cond():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


async def _scenario(sock_dir: str) -> None:
    loop = asyncio.get_running_loop()
    got: asyncio.Queue[socket.socket] = asyncio.Queue()
    listeners = []
    for name in ("schedd", "collector"):
        listener = HandoverListener(str(Path(sock_dir) / name), got.put_nowait, logging.getLogger("t").warning)
        loop.add_reader(listener.sock.fileno(), listener.readable)
        listeners.append(listener)
    router = Router(sock_dir, "collector", logging.getLogger("t"))
    host, port = router.start("127.0.0.1", 0)
    try:
        # 1. the request in three pieces, the hello behind it
        client = socket.create_connection((host, port))
        req, hello = request("schedd"), encode({"hello": "htcd"})
        client.sendall(req[:2])
        await _until(lambda: [p.lowat for p in router._pending.values()] == [HEADER.size], "a wait for the header")
        client.sendall(req[2:7])
        await _until(lambda: [p.lowat for p in router._pending.values()] == [len(req)], "a wait for the request")
        client.sendall(req[7:] + hello)
        handed = await asyncio.wait_for(got.get(), 10)
        assert handed.getpeername() == client.getsockname()  # the client's own address
        first = await _recv_exactly(handed, len(hello))
        assert first == hello  # the request was consumed, nothing else
        handed.sendall(b"reply")
        assert client.recv(5) == b"reply"  # no relay: the daemon's socket is the client's connection
        handed.close()
        client.close()
        assert router.stats.handed == 1

        # 2. no request: the first frame (a hello) is left for the default daemon
        client = socket.create_connection((host, port))
        client.sendall(hello)
        handed = await asyncio.wait_for(got.get(), 10)
        assert await _recv_exactly(handed, len(hello)) == hello
        handed.close()
        client.close()

        # 3. a client that closes inside its request is dropped, the router goes on
        client = socket.create_connection((host, port))
        client.sendall(req[:3])
        client.close()
        client = socket.create_connection((host, port))
        client.sendall(request("nosuch"))
        reply = await loop.run_in_executor(None, client.recv, 65536)
        (length,) = HEADER.unpack_from(reply)
        refusal = decode_body(reply[HEADER.size:HEADER.size + length])
        assert refusal["code"] == "UNKNOWN_ENDPOINT" and "'nosuch'" in refusal["error"]
        client.close()
        assert router.stats.unknown == 1 and got.empty()
    finally:
        router.close()
        for listener in listeners:
            loop.remove_reader(listener.sock.fileno())
            listener.close()


def test_router_hands_over_whole_connections() -> None:
    with tempfile.TemporaryDirectory(prefix="htcd-sp-") as sock_dir:
        asyncio.run(_scenario(sock_dir))
        assert not list(Path(sock_dir).iterdir())
