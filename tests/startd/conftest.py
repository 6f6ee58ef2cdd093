"""Fixtures of the startd tests: a pool whose startd the test runs itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from startd.startd_tools import OwnStartd

NO_STARTD = {"DAEMON_LIST": "MASTER COLLECTOR NEGOTIATOR SCHEDD"}


@pytest.fixture
def make_pool(make_pool):  # the root fixture, wrapped
    """The root ``make_pool``; afterwards every job waiting for its "go" file is let go, so that
    no retiring job holds up the pool's graceful shutdown (a test that failed half-way)."""
    pools = []

    def factory(*args, **kwargs):
        pool = make_pool(*args, **kwargs)
        pools.append(pool)
        return pool

    yield factory
    for pool in pools:
        (pool.jobs_dir / "go").touch()


@pytest.fixture
def own_startd(make_pool) -> Iterator[Callable[..., OwnStartd]]:
    """``own_startd(knobs, config_text, slots)``: a pool without a startd under its master, and a
    startd started by the test (stopped by PID afterwards, before the pool)."""
    started: list[OwnStartd] = []

    def factory(knobs: dict[str, str] | None = None, config_text: str = "", slots: int = 1) -> OwnStartd:
        pool = make_pool({**NO_STARTD, **(knobs or {})}, config_text, slots=0)
        startd = OwnStartd(pool)
        started.append(startd)
        return startd.start(slots)

    yield factory
    for startd in started:
        startd.stop()
