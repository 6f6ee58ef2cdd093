"""What authentication costs: connections per second with TOKEN inside TLS (TCP) beside FS (Unix
socket), the latency of a command on each kind of connection, and the collector's update ingest
over TLS beside the Unix socket.

Runs a real collector (master + collector only) in a temp dir; its master creates the pool's
keys, CA and host certificate at start, and the daemons' token the bench presents.

1. connections/s: open, authenticate, PING, close -- FS on the Unix socket; TOKEN in TLS on TCP;
2. command latency: PING round trips on one open connection of each kind (the extra latency of an
   authenticated, encrypted command is the difference);
3. update ingest: UPDATE_AD round trips (compact slot ads of ~100 attributes) on one connection,
   over TLS, over plain TCP (CLAIMTOBE, no encryption: the same socket path without TLS) and over
   the Unix socket.

The pool runs the shipped Recommended policy, except that encryption is OPTIONAL and CLAIMTOBE is
accepted, so that the plain-TCP baseline can be measured on the same collector; the TOKEN client
still requires TLS (a token never travels unencrypted on TCP).

    python bench/security_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import _pool
from collector_bench import slot_ad


def rate(n: int, fn: Any) -> float:
    started = time.perf_counter()
    for i in range(n):
        fn(i)
    return n / (time.perf_counter() - started)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = p.parse_args()
    n_conn, n_cmd, n_upd = (100, 300, 300) if args.quick else (500, 3000, 3000)
    root = Path(tempfile.mkdtemp(prefix="htcd-security-bench-"))
    # the shipped policy (config.d/00-htcd-default-security.conf): daemons as condor@*, TLS required
    master, env = _pool.start_pool(root, ["DAEMON_LIST = MASTER COLLECTOR", "use SECURITY : Recommended",
                                          "SEC_DEFAULT_ENCRYPTION = OPTIONAL", "SEC_DEFAULT_INTEGRITY = OPTIONAL",
                                          "SEC_DEFAULT_AUTHENTICATION_METHODS = FS, TOKEN, CLAIMTOBE"],
                                   ["status", "-collector", "-af", "Name"], "collector")
    try:
        os.environ["HTCD_CONFIG"] = env["HTCD_CONFIG"]
        from htcd.config import load
        from htcd.wire import locate, tokens
        from htcd.wire.address import Address
        from htcd.wire.authn import ClientSecurity
        from htcd.wire.client import Connection
        from htcd.wire.udp import compact

        cfg = load("TOOL")
        addr = locate.collector(cfg)
        unix = Address(unix=addr.unix)
        tcp = Address(host=addr.host, port=addr.port)
        # an execute point's token: the collector checks ADVERTISE_STARTD for the slot ads sent below
        token = tokens.create(tokens.load_private_key(cfg.get("SEC_TOKEN_POOL_SIGNING_KEY_FILE")),
                              cfg.get("TRUST_DOMAIN"), f"condor@{cfg.get('TRUST_DOMAIN')}",
                              ["READ", "ADVERTISE_STARTD"])
        fs = ClientSecurity(methods=["FS"])
        tls = ClientSecurity.from_config(cfg, "CLIENT")
        tls.methods, tls.tokens, tls.token_dirs, tls.prefer_unix = ["TOKEN"], [token], [], False
        tls.encryption = "REQUIRED"
        plain = ClientSecurity(methods=["CLAIMTOBE"], claimtobe="condor", prefer_unix=False)

        def connect(address: Address, sec: ClientSecurity) -> None:
            with Connection(address, security=sec) as conn:
                conn.call("PING")

        with Connection(tcp, security=tls) as conn:
            assert conn.hello["method"] == "TOKEN" and conn.hello["encrypted"], conn.hello
        with Connection(tcp, security=plain) as conn:
            assert conn.hello["method"] == "CLAIMTOBE" and not conn.hello["encrypted"], conn.hello
        fs_conn = rate(n_conn, lambda i: connect(unix, fs))
        tls_conn = rate(n_conn, lambda i: connect(tcp, tls))
        lat = {}
        ingest = {}
        ads = [compact(slot_ad(i)) for i in range(200)]
        for name, address, sec in (("fs", unix, fs), ("tls", tcp, tls), ("plain", tcp, plain)):
            with Connection(address, security=sec) as conn:
                lat[name] = 1e6 / rate(n_cmd, lambda i, c=conn: c.call("PING"))
                ingest[name] = rate(n_upd, lambda i, c=conn: c.call("UPDATE_AD", ad_type="Machine", **ads[i % 200]))
    finally:
        _pool.stop_pool(master, root)

    print("authentication costs, real collector on loopback; 2-core shared machine, figures are noisy")
    print(f"  connections/s, FS on the Unix socket   {fs_conn:8.0f}   (connect, authenticate, PING, close)")
    print(f"  connections/s, TOKEN in TLS on TCP     {tls_conn:8.0f}")
    print(f"  PING latency on an open connection: FS {lat['fs']:7.0f} us, TOKEN+TLS {lat['tls']:7.0f} us "
          f"(extra {lat['tls'] - lat['fs']:.0f} us)")
    print(f"  UPDATE_AD ingest, one connection: Unix {ingest['fs']:7.0f}/s, plain TCP {ingest['plain']:7.0f}/s, "
          f"TLS {ingest['tls']:7.0f}/s (TLS {100 * (1 - ingest['tls'] / ingest['plain']):.0f}% slower than plain TCP)")

    def fig(v: float, unit: str, goal: float | None, better: str, src: str = "") -> dict[str, Any]:
        return {"value": round(v, 3), "unit": unit, "anchor": None, "anchor_source": src, "goal": goal,
                "better": better}

    print(json.dumps({"bench": "security_bench", "figures": {
        "connections_per_s_fs_unix": fig(fs_conn, "connections/s", None, "higher"),
        "connections_per_s_token_tls": fig(tls_conn, "connections/s", None, "higher"),
        "command_latency_us_fs_unix": fig(lat["fs"], "us", None, "lower"),
        "command_latency_us_token_tls": fig(lat["tls"], "us", None, "lower"),
        "command_extra_latency_us_tls": fig(lat["tls"] - lat["fs"], "us", None, "lower"),
        "update_ingest_per_s_unix": fig(ingest["fs"], "updates/s", None, "higher"),
        "update_ingest_per_s_tls": fig(ingest["tls"], "updates/s", None, "higher"),
        "update_ingest_per_s_plain_tcp": fig(ingest["plain"], "updates/s", None, "higher"),
    }}))


if __name__ == "__main__":
    main()
