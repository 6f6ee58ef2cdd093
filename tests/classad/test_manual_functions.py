"""Every function HTCondor's manual defines (tests/corpus/classad/functions.txt, harvested from
docs/classads/classad-builtin-functions.rst) exists in htcd and behaves as classad2's: each is
called with no argument, with one and two arguments drawn from a pool of every kind of value,
and with three from a smaller pool, all in one batch to the classad2 worker."""

from __future__ import annotations

import itertools
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
pytest.importorskip("classad2")

import classad_corpus as fixed
from oracle import Oracle, ask_all, canonical, oracle_value

from htcd.classad import ClassAdSyntaxError, parse_ad, parse_expr, unparse
from htcd.classad.registry import LAZY, STRICT, TREE

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "corpus", "classad", "functions.txt")) as _f:
    MANUAL = [line.strip() for line in _f if line.strip()]

# Results that depend on the clock, chance, the log, the machine's users or names defined elsewhere.
NOT_SWEPT = {"random", "time", "debug", "userHome", "unresolved"}
POOL = ["1", "-2", "2.5", '"a b"', '"1.5"', "true", "undefined", "error", '{1,"a"}', "[a=1]", "absTime(0)",
        "relTime(5)", '""', '"a,b"', "0"]
POOL3 = ['"a b"', '"a"', '"1"', "{1}"]

# Calls where htcd differs on purpose (docs/classad.md, "Deliberate deviations").
DOCUMENTED = {
    "absTime() and formatTime(): the time now, read twice": lambda t: t in ("absTime()", "formatTime()"),
    "absTime of a string computed at run time (classad2 returns the string)":
        lambda t: t.startswith('absTime("') and "," in t,
    "pow(int, int) is exact (classad2: pow(-2, 1) is -1)": lambda t: t == "pow(-2, 1)",
    "formatTime of an ad without Day: classad2 prints day 0 of the month": lambda t: t == "formatTime([a=1])",
}


def test_every_manual_function_exists() -> None:
    known = set(STRICT) | set(LAZY) | set(TREE)
    assert len(MANUAL) >= 70
    assert [f for f in MANUAL if f.lower() not in known] == []


def _calls() -> list[str]:
    out = []
    for f in MANUAL:
        if f in NOT_SWEPT:
            continue
        for n in range(3):
            out += [f"{f}({', '.join(args)})" for args in itertools.product(POOL, repeat=n)]
        out += [f"{f}({', '.join(args)})" for args in itertools.product(POOL3, repeat=3)]
    return out


def test_manual_functions_agree_with_classad2() -> None:
    calls = _calls()
    oracle = Oracle()
    try:
        answers = ask_all(oracle, [{"expr": t, "my": fixed.MY_AD, "target": fixed.TARGET_AD} for t in calls])
    finally:
        oracle.close()
    my, target = parse_ad(fixed.MY_AD), parse_ad(fixed.TARGET_AD)
    misses = []
    for text, theirs in zip(calls, answers, strict=True):
        if "crash" in theirs:
            misses.append(f"{text}: {theirs['crash']}")
            continue
        try:
            mine = canonical(unparse(parse_expr(text).eval(my, target)))
        except ClassAdSyntaxError:
            mine = None
        if mine is None or not theirs["accepts"]:
            if (mine is None) != (not theirs["accepts"]):
                misses.append(f"{text}: htcd accepts {mine is not None}, classad2 {theirs['accepts']}")
            continue
        expected = oracle_value(theirs)
        if expected is not None and mine != expected and not any(test(text) for test in DOCUMENTED.values()):
            misses.append(f"{text}: htcd {mine} classad2 {expected}")
    assert len(calls) > 10000
    assert misses == []
