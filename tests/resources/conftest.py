"""Fixtures of the custom resource tests: the root ``make_pool``, with every waiting job let go
at the end (a test that failed half-way must not hold up the pool's shutdown)."""

from __future__ import annotations

import pytest


@pytest.fixture
def make_pool(make_pool):  # the root fixture, wrapped
    pools = []

    def factory(*args, **kwargs):
        pool = make_pool(*args, **kwargs)
        pools.append(pool)
        return pool

    yield factory
    for pool in pools:
        (pool.jobs_dir / "go").touch()
