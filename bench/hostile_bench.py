"""Whether a daemon keeps serving under hostile input: the latency of a fresh client's command
(connect on the Unix socket, authenticate, PING, close) with nobody else around, and while an
attacker holds 200 idle half-open TCP connections, trickles 50 frames a byte at a time
(slowloris) and floods the daemon with garbage frames on new connections.

Runs a real collector (master + collector) in a temp dir; the attack runs in another process.

    python bench/hostile_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import socket
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import _pool

from htcd.wire.framing import encode, recv_frame

HELLO = encode({"hello": "htcd", "version": 1, "methods": ["FS"]})


def ping_ms(unix: str) -> float:
    started = time.perf_counter()
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(unix)
        s.sendall(HELLO)
        assert recv_frame(s)["ok"]
        s.sendall(encode({"cmd": "PING", "args": {}}))
        assert recv_frame(s)["ok"]
    return (time.perf_counter() - started) * 1000


def attack(unix: str, tcp: tuple[str, int], stop: Any, counts: Any) -> None:
    """Idle half-open TCP connections, slowloris frames, and a flood of garbage frames."""
    idle = []
    for _ in range(200):
        try:
            idle.append(socket.create_connection(tcp, timeout=5))
        except OSError:
            break
    slow = []
    for _ in range(50):
        s = socket.socket(socket.AF_UNIX)
        s.connect(unix)
        s.sendall(HELLO)
        recv_frame(s)
        s.sendall(struct.pack(">I", 1000))
        slow.append(s)
    counts["idle"], counts["slow"] = len(idle), len(slow)
    garbage = [b"\xff" * 64, struct.pack(">I", 2 ** 31) + b"x", HELLO[:-2] + b"\xc1\xc1", b"GET / HTTP/1.0\r\n\r\n"]
    n = 0
    last_trickle = time.monotonic()
    while not stop.is_set():
        try:
            with socket.socket(socket.AF_UNIX) as g:
                g.connect(unix)
                g.sendall(garbage[n % len(garbage)])
                g.settimeout(5)
                g.recv(4096)
            n += 1
        except OSError:
            pass
        if time.monotonic() - last_trickle > 0.5:
            for s in slow:
                with contextlib.suppress(OSError):
                    s.send(b"\x00")
            last_trickle = time.monotonic()
    counts["garbage"] = n
    for s in idle + slow:
        s.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = p.parse_args()
    rounds = 50 if args.quick else 300
    root = Path(tempfile.mkdtemp(prefix="htcd-hostile-bench-"))
    master, _env = _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR"],
                                   ["status", "-collector", "-af", "Name"], "collector")
    try:
        from htcd.wire.address import Address

        addr = Address.parse((root / "local" / "log" / ".collector_address").read_text().splitlines()[0])
        unix, tcp = str(addr.unix), (addr.host, addr.port)
        quiet = [ping_ms(unix) for _ in range(rounds)]
        ctx = multiprocessing.get_context("fork")
        stop, counts = ctx.Event(), ctx.Manager().dict()
        attacker = ctx.Process(target=attack, args=(unix, tcp, stop, counts))
        attacker.start()
        deadline = time.monotonic() + 60
        while "slow" not in counts and time.monotonic() < deadline:
            time.sleep(0.1)
        loud = [ping_ms(unix) for _ in range(rounds)]
        stop.set()
        attacker.join(60)
        counts = dict(counts)
    finally:
        _pool.stop_pool(master, root)

    def p(values: list[float], q: float) -> float:
        return statistics.quantiles(values, n=100)[int(q) - 1]

    print("a fresh client's PING (connect, FS, PING, close) on a real collector; 2-core shared machine")
    print(f"  quiet:        p50 {p(quiet, 50):6.2f} ms   p99 {p(quiet, 99):6.2f} ms   ({rounds} rounds)")
    print(f"  under attack: p50 {p(loud, 50):6.2f} ms   p99 {p(loud, 99):6.2f} ms   "
          f"({counts.get('idle')} idle TCP, {counts.get('slow')} slowloris, {counts.get('garbage')} garbage "
          "connections meanwhile)")

    def fig(v: float, goal: float | None) -> dict[str, Any]:
        return {"value": round(v, 3), "unit": "ms", "anchor": None, "anchor_source": "", "goal": goal,
                "better": "lower"}

    print(json.dumps({"bench": "hostile", "figures": {
        "ping_p50_quiet_ms": fig(p(quiet, 50), None), "ping_p99_quiet_ms": fig(p(quiet, 99), None),
        "ping_p50_under_attack_ms": fig(p(loud, 50), 50.0), "ping_p99_under_attack_ms": fig(p(loud, 99), 500.0)}}))


if __name__ == "__main__":
    main()
