"""The ClassAd language: parse, evaluate, print and match ads, with HTCondor's semantics.

Pure Python, strings in and out.  See docs/classad.md for what is implemented and where the
behaviour deliberately differs from HTCondor's C++ library.
"""

from __future__ import annotations

from . import functions as _functions  # noqa: F401  (registers the built-in functions)
from .ad import ClassAd, matches, parse_ad, parse_json_ad, parse_old_ad, parse_old_ads, rank, symmetric_match
from .analyze import Analysis, analyze
from .expr import ClassAdSyntaxError, Expr, parse_expr, unparse
from .values import ERROR, UNDEFINED, AbsTime, ErrorType, RelTime, UndefinedType, is_true

__all__ = [
    "ERROR",
    "UNDEFINED",
    "AbsTime",
    "Analysis",
    "ClassAd",
    "ClassAdSyntaxError",
    "ErrorType",
    "Expr",
    "RelTime",
    "UndefinedType",
    "analyze",
    "is_true",
    "matches",
    "parse_ad",
    "parse_expr",
    "parse_json_ad",
    "parse_old_ad",
    "parse_old_ads",
    "rank",
    "symmetric_match",
    "unparse",
]
