"""ClassAd throughput: htcd.classad beside HTCondor's C++ library (classad2) in the same run.

Prints evals/s, parses/s and symmetric matches/s for both, then one JSON line.  ``parses`` repeats
four texts (as daemons see the same Requirements again and again, so htcd's parse cache answers);
``parses_distinct`` parses a new text every time.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import time

from htcd.classad import parse_ad, parse_expr, symmetric_match

EXPRS = [
    "TARGET.Memory >= 1024 && Cpus > 0",
    'Arch == "X86_64" && OpSys == "LINUX"',
    "(TARGET.RequestMemory <= Memory) && (TARGET.RequestCpus <= Cpus)",
    "ifThenElse(isUndefined(LoadAvg), 0, LoadAvg * 100)",
]
MACHINE = '[ Memory = 2048; Cpus = 4; Arch = "X86_64"; OpSys = "LINUX"; LoadAvg = 0.5; ' \
          'Requirements = TARGET.RequestMemory <= Memory && TARGET.RequestCpus <= Cpus ]'
JOB = '[ RequestMemory = 1024; RequestCpus = 1; Memory = 512; Owner = "alice"; ' \
      'Requirements = TARGET.Memory >= RequestMemory && TARGET.Arch == "X86_64" && TARGET.OpSys == "LINUX" ]'


def _distinct(n: int) -> list[str]:
    return [f"({EXPRS[i & 3]}) || Slot == {i}" for i in range(n)]


def rate(fn, n: int) -> float:
    t = time.perf_counter()
    fn(n)
    return n / (time.perf_counter() - t)


def bench_htcd(n: int) -> dict[str, float]:
    m, j = parse_ad(MACHINE), parse_ad(JOB)
    distinct = _distinct(n // 8)
    trees = [parse_expr(e) for e in EXPRS]
    simple = trees[0]
    assert simple.eval(j, m) is True  # both sides of && run

    def ev_simple(k: int) -> None:
        for _ in range(k):
            simple.eval(j, m)

    def ev_mixed(k: int) -> None:
        for i in range(k):
            trees[i & 3].eval(j, m)

    def parse(k: int) -> None:
        for i in range(k):
            parse_expr(EXPRS[i & 3])

    def parse_distinct(k: int) -> None:  # every text new: no parse cache hits
        for t in distinct[:k]:
            parse_expr(t)

    machines = [parse_ad(MACHINE.replace("2048", str(2000 + i))) for i in range(100)]

    def match(k: int) -> None:
        for i in range(k):
            symmetric_match(j, machines[i % 100])

    return {"evals_simple": rate(ev_simple, n), "evals_mixed": rate(ev_mixed, n),
            "parses": rate(parse, n // 4), "parses_distinct": rate(parse_distinct, n // 8),
            "matches": rate(match, n // 4)}


def bench_classad2(n: int) -> dict[str, float] | None:
    os.environ.setdefault("CONDOR_CONFIG", "/dev/null")
    os.environ.setdefault("TZ", "UTC")
    try:
        importlib.import_module("htcondor2")  # daemon semantics; must precede classad2
        classad2 = importlib.import_module("classad2")
    except ImportError:
        return None
    m, j = classad2.ClassAd(MACHINE), classad2.ClassAd(JOB)
    distinct = _distinct(n // 8)
    trees = [classad2.ExprTree(e) for e in EXPRS]
    simple = trees[0]

    def ev_simple(k: int) -> None:
        for _ in range(k):
            simple.eval(j, m)

    def ev_mixed(k: int) -> None:
        for i in range(k):
            trees[i & 3].eval(j, m)

    def parse(k: int) -> None:
        for i in range(k):
            classad2.ExprTree(EXPRS[i & 3])

    def parse_distinct(k: int) -> None:
        for t in distinct[:k]:
            classad2.ExprTree(t)

    machines = [classad2.ClassAd(MACHINE.replace("2048", str(2000 + i))) for i in range(100)]

    def match(k: int) -> None:
        for i in range(k):
            j.symmetricMatch(machines[i % 100])

    return {"evals_simple": rate(ev_simple, n), "evals_mixed": rate(ev_mixed, n),
            "parses": rate(parse, n // 4), "parses_distinct": rate(parse_distinct, n // 8),
            "matches": rate(match, n // 4)}


GOALS = {"evals_simple": 600_000, "evals_mixed": 300_000, "parses": 20_000, "parses_distinct": 20_000,
         "matches": 100_000}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer iterations")
    args = ap.parse_args()
    n = 40_000 if args.quick else 400_000
    mine = bench_htcd(n)
    theirs = bench_classad2(n)
    figures = {}
    print(f"{'figure':<14}{'htcd /s':>14}{'classad2 /s':>14}")
    for k, v in mine.items():
        a = theirs[k] if theirs else None
        print(f"{k:<14}{v:>14,.0f}{(f'{a:,.0f}' if a else 'n/a'):>14}")
        figures[k] = {"value": round(v), "unit": "per_second", "anchor": round(a) if a else None,
                      "anchor_source": "classad2 25.14.1 (HTCondor C++ via Python bindings), same run",
                      "goal": GOALS[k], "better": "higher"}
    print(json.dumps({"bench": "classad_bench", "figures": figures}))


if __name__ == "__main__":
    main()
