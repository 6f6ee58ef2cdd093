"""Fixtures of the containment tests."""

from __future__ import annotations

from starter.starter_tools import execute_dir

__all__ = ["execute_dir"]
