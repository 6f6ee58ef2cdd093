"""A personal pool shared by a module's DAG tests, and running ``htcd dagman`` against it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pooltools import Pool

# quick matches: DAG tests wait on job after job
DAG_POOL_KNOBS = {"NUM_CPUS": "4", "NEGOTIATOR_INTERVAL": "1", "UPDATE_INTERVAL": "2"}


@pytest.fixture(scope="module")
def dag_pool(module_pool: Callable[..., Pool]) -> Pool:
    return module_pool(DAG_POOL_KNOBS)
