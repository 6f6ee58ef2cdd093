"""The built-in ClassAd functions, one module per family; importing this package registers
them all in ``htcd.classad.registry``."""

from __future__ import annotations

from . import arith, convert, environ, lists, meta, regex, stringlists, strings, times, versions

__all__ = ["arith", "convert", "environ", "lists", "meta", "regex", "stringlists", "strings", "times", "versions"]
