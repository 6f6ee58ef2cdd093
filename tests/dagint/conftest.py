"""A personal pool shared by a module's end-to-end DAG tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pooltools import Pool

from tests.dagrun.conftest import DAG_POOL_KNOBS


@pytest.fixture(scope="module")
def dag_pool(module_pool: Callable[..., Pool]) -> Pool:
    return module_pool(DAG_POOL_KNOBS)
