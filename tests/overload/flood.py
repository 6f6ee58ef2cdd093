"""A load generator for the overload tests and ``bench/overload_bench.py``: one process that
sends a collector slot-ad updates as fast as it may, bounded in time and count.

    python tests/overload/flood.py ADDRESS udp|tcp FIRST COUNT SECONDS MAX_UPDATES [RATE]

``udp``: opens a session (``UPDATE_SESSION``) and sends signed datagrams round robin over ads
FIRST..FIRST+COUNT-1, each with the ad's next UpdateSequenceNumber (the first update of each ad
is sent over the connection first, so the collector knows every ad before the flood).  ``tcp``:
batches of 100 updates in one ``UPDATE_AD`` each, back to back, on one connection.  RATE (updates
per second, 0 = as fast as possible) paces the sender.  Prints one JSON line: ``{"sent": n,
"last": {index: last sequence number sent}}``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

START_TIME = 1_790_000_000  # the ads' DaemonStartTime
GROUP = 50  # ads per HostGroup value


def slot_ad(i: int, seq: int) -> dict[str, str]:
    """A slot ad of ~40 attributes, as a startd sends."""
    host = f"flood{i // 8:05d}.example.org"
    ad = {"MyType": '"Machine"', "Name": f'"slot{i % 8 + 1}@{host}"', "Machine": f'"{host}"',
          "HostGroup": str(i // GROUP), "State": '"Unclaimed"', "Activity": '"Idle"', "Cpus": "1",
          "Memory": str(2048 + i % 7), "Arch": '"X86_64"', "OpSys": '"LINUX"', "Requirements": "START",
          "START": "true", "StartdIpAddr": f'"<10.1.{i // 250 % 256}.{i % 250}:9618>"',
          "MyAddress": f'"<10.1.{i // 250 % 256}.{i % 250}:9618>"',
          "UpdateSequenceNumber": str(seq), "DaemonStartTime": str(START_TIME)}
    for k in range(40 - len(ad)):
        ad[f"Custom{k:02d}"] = str(k * i % 9973)
    return ad


def _pace(sent: int, rate: float, start: float) -> None:
    if rate > 0:
        ahead = sent / rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)


def flood(address: str, mode: str, first: int, count: int, seconds: float, most: int,
          rate: float = 0.0) -> dict[str, Any]:
    from htcd.wire import udp
    from htcd.wire.client import Connection

    seq = dict.fromkeys(range(first, first + count), 1)
    sent = 0
    with Connection(address, timeout=120) as conn:
        initial = [{"ad_type": "Machine", **udp.compact(slot_ad(i, 1))} for i in seq]
        for k in range(0, len(initial), 500):
            reply = conn.call("UPDATE_AD", updates=initial[k:k + 500])
            if reply["errors"]:
                raise SystemExit(f"the collector refused updates: {reply['errors'][:3]}")
        del initial
        if mode == "udp":  # everything ready before the go: the clock runs for sending only
            session = conn.call("UPDATE_SESSION")
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.connect(tuple(session["udp"]))
            sid, key = session["id"], session["key"]
            ads = {i: slot_ad(i, 0) for i in seq}
        print(json.dumps({"ready": True}), flush=True)
        sys.stdin.readline()  # go
        start = time.monotonic()
        if mode == "udp":
            while sent < most and time.monotonic() - start < seconds:
                for i, ad in ads.items():
                    seq[i] += 1
                    ad["UpdateSequenceNumber"] = str(seq[i])
                    sock.send(udp.encode(sid, key, {"cmd": "UPDATE_AD",
                                                    "args": {"ad_type": "Machine", **udp.compact(ad)}}))
                    sent += 1
                    if sent % 100 == 0:
                        _pace(sent, rate, start)
                        if sent >= most or time.monotonic() - start >= seconds:
                            break
            sock.close()
        else:
            order = list(seq)
            pos = 0
            while sent < most and time.monotonic() - start < seconds:
                batch = []
                for _ in range(100):
                    i = order[pos % len(order)]
                    pos += 1
                    seq[i] += 1
                    batch.append({"ad_type": "Machine", **udp.compact(slot_ad(i, seq[i]))})
                reply = conn.call("UPDATE_AD", updates=batch)
                if reply["errors"]:
                    raise SystemExit(f"the collector refused updates: {reply['errors'][:3]}")
                sent += len(batch)
                _pace(sent, rate, start)
    return {"sent": sent, "last": seq, "seconds": time.monotonic() - start}


class Flooders:
    """Generator processes of this file, each given (mode, first, count, seconds, most, rate);
    started together (``go``) once each has sent its ads' first update; ended by PID if still
    running at the end (``kill``)."""

    def __init__(self, env: dict[str, str], address: str,
                 specs: list[tuple[str, int, int, float, int, float]]) -> None:
        self.procs = [subprocess.Popen([sys.executable, str(Path(__file__)), address, mode, str(first), str(count),
                                        str(seconds), str(most), str(rate)],
                                       env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                      for mode, first, count, seconds, most, rate in specs]
        for p in self.procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            if not line or json.loads(line) != {"ready": True}:
                self.kill()
                raise RuntimeError(f"a load generator did not start: {line!r}")
        # read each one's result as it comes: a big one would fill the pipe and hold its writer
        self._out: list[list[str]] = [[] for _ in self.procs]
        self._readers = [threading.Thread(target=lambda p=p, out=out: out.append(p.stdout.read()), daemon=True)
                         for p, out in zip(self.procs, self._out, strict=True)]
        for t in self._readers:
            t.start()

    def go(self) -> None:
        for p in self.procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()

    def running(self) -> bool:
        return any(p.poll() is None for p in self.procs)

    def results(self, timeout: float = 120) -> list[dict[str, Any]]:
        out = []
        for p, reader, text in zip(self.procs, self._readers, self._out, strict=True):
            p.wait(timeout)
            reader.join(timeout)
            stdout = "".join(text)
            if p.returncode != 0:
                raise RuntimeError(f"a load generator failed ({p.returncode}): {stdout}")
            out.append(json.loads(stdout.strip().splitlines()[-1]))
        return out

    def kill(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            if p.stdin is not None:
                p.stdin.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    print(json.dumps(flood(a[0], a[1], int(a[2]), int(a[3]), float(a[4]), int(a[5]),
                           float(a[6]) if len(a) > 6 else 0.0)), flush=True)
