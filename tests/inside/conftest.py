"""Fixtures of the tests of looking inside running jobs."""

from __future__ import annotations

from starter.starter_tools import execute_dir

__all__ = ["execute_dir"]
