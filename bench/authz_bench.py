"""What authorization costs per command: ``Policy.check`` of htcd/wire/authz.py, which the server
calls for every command, under the shipped policy (`use SECURITY : Recommended`) plus DENY lists.

1. an FS identity on the Unix socket, allowed WRITE;
2. a TOKEN identity from a TCP peer, allowed WRITE after the DENY lists (host networks and user
   patterns) are checked;
3. a refusal (its one-line reason built and returned).

    python bench/authz_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from htcd.config import load
from htcd.wire import auth, authz

CONFIG = ("use SECURITY : Recommended\nDENY_WRITE = *@evil.org, */10.66.0.0/16, mallory@*\n"
          "ALLOW_ADMINISTRATOR = $(ALLOW_ADMINISTRATOR) ops@example.org/10.1.0.0/16\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        top = os.path.join(tmp, "htcd_config")
        with open(top, "w") as f:
            f.write(CONFIG)
        policy = authz.build(load("SCHEDD", env={"HTCD_CONFIG": top, "HOME": tmp}), "SCHEDD")
    cases = {
        "authz_check_fs_us": (auth.Identity("alice", "example.org", 1000, "FS"), auth.WRITE, True),
        "authz_check_token_tcp_us": (auth.Identity("bob", "example.org", None, "TOKEN", host="10.0.0.1"),
                                     auth.WRITE, True),
        "authz_refusal_us": (auth.Identity("bob", "example.org", None, "TOKEN", host="10.0.0.1"),
                             auth.ADMINISTRATOR, False),
    }
    n = 20_000 if args.quick else 200_000
    print(f"{'figure':<32}{'value':>10}{'anchor':>10}{'goal':>10}")
    figures = {}
    for name, (identity, level, allowed) in cases.items():
        assert (policy.check(identity, level) is None) == allowed, name
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            for _ in range(n):
                policy.check(identity, level)
            best = min(best, (time.perf_counter() - t) / n * 1e6)
        print(f"{name + ' (us)':<32}{best:>10.2f}{'n/a':>10}{50.0:>10.1f}")
        figures[name] = {"value": round(best, 2), "unit": "microseconds", "anchor": None,
                         "anchor_source": "none: HTCondor's IpVerify is C++ inside its daemons, not in any wheel",
                         "goal": 50.0, "better": "lower"}
    print(json.dumps({"bench": "authz_bench", "figures": figures}))


if __name__ == "__main__":
    main()
