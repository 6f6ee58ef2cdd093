"""The exceptions of :mod:`htcd.api`, shaped like ``htcondor2.HTCondorException`` and
``classad2.ClassAdException``, so a script's ``except`` clauses port unchanged.

Every failure htcd reports to a person (:class:`htcd.errors.UserError`: a refused request, a
schedd that cannot be reached, a submit file with a mistake) reaches a script as one of these,
with the same message the command line would print."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from htcd.errors import UserError


class HTCondorException(Exception):
    """A request htcd could not carry out (htcondor2's ``HTCondorException``)."""


class ClassAdException(Exception):
    """Text that is not a valid ClassAd or ClassAd expression (classad2's ``ClassAdException``)."""


@contextmanager
def reported() -> Iterator[None]:
    """Turn htcd's user-facing errors into :class:`HTCondorException` with the same message."""
    try:
        yield
    except UserError as exc:
        raise HTCondorException(str(exc)) from None
