"""The submit language: submit-file text -> job ClassAds (as expression text).

A pure library: it reads the submit file, the files and command output it ``include``s,
files named by ``queue ... from`` and ``matching``, and the environment, and never talks to
a daemon.
"""

from htcd.submit.description import SubmitDescription, parse_submit
from htcd.submit.errors import SubmitError

__all__ = ["SubmitDescription", "SubmitError", "parse_submit"]
