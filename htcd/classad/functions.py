"""Built-in ClassAd functions: the names the rest of htcd uses, gathered from their families.

Each built-in is either strict (gets evaluated argument values), lazy (gets the argument
closures, for ifThenElse-style short circuit) or compiled from its argument trees.  The
functions live in ``htcd.classad.builtins`` and register into ``htcd.classad.registry``;
importing this module makes sure all of them are registered."""

from __future__ import annotations

from . import builtins as _builtins  # noqa: F401  (registers every family)
from .builtins.convert import real_to_int, strtod, to_string
from .builtins.environ import split_v2_words
from .builtins.regex import (
    REGEX_MAX_INPUT,
    REGEX_MAX_PATTERN,
    REGEX_STEP_BUDGET,
    RegexRefused,
    compile_regex,
    subject_ok,
)
from .builtins.stringlists import split_list, split_tokens
from .builtins.versions import versioncmp
from .registry import Strict, compile_call
from .timetext import parse_abstime, parse_reltime

__all__ = [
    "REGEX_MAX_INPUT", "REGEX_MAX_PATTERN", "REGEX_STEP_BUDGET", "RegexRefused", "Strict", "compile_call",
    "compile_regex", "parse_abstime", "parse_reltime", "real_to_int",
    "split_list", "split_tokens", "split_v2_words", "strtod", "subject_ok", "to_string", "versioncmp",
]
