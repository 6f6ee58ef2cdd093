"""Fixtures of the starter's tests."""

from __future__ import annotations

from starter.starter_tools import account, execute_dir

__all__ = ["account", "execute_dir"]
