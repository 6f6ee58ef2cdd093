"""Regular expressions from ads must not hang a daemon: unsafe patterns and oversized subjects
give ERROR quickly (docs/classad.md, Regular expressions)."""

from __future__ import annotations

import time

import pytest

from htcd.classad import ERROR, parse_ad, parse_expr


@pytest.mark.parametrize("pattern", ["(a+)+$", "(a*)*b", "(\\\\w+\\\\s?)*$", "(.*a){20}x", "((ab)*)+c"])
def test_nested_repeats_refused(pattern: str) -> None:
    ad = parse_ad('[ s = "' + "a" * 40 + '!" ]')
    t = time.perf_counter()
    for fn in ("regexp(P, s)", 'regexps(P, s, "x")', 'replaceall(P, s, "x")', "stringList_regexpMember(P, s)"):
        assert parse_expr(fn.replace("P", '"' + pattern + '"')).eval(ad) is ERROR
    assert time.perf_counter() - t < 1.0


def test_many_repeats_bound_the_subject() -> None:
    ad = parse_ad('[ s = "' + "x" * 5000 + '" ]')
    t = time.perf_counter()
    assert parse_expr('regexp(".*.*.*=.*", s)').eval(ad) is ERROR
    assert parse_expr('regexp(".*=", s)').eval(ad) is False  # one repeat: long subjects are fine
    assert parse_expr('regexp(".*x.*", s)').eval(ad) is True
    assert time.perf_counter() - t < 1.0


def test_long_pattern_refused() -> None:
    assert parse_expr('regexp("' + "a" * 5000 + '", "a")').eval() is ERROR
