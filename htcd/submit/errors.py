"""The submit language's one error type."""

from __future__ import annotations

from htcd.errors import UserError


class SubmitError(UserError):
    """A mistake in a submit description; carries the file name and line when known."""
