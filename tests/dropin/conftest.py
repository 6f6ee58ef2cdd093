"""A real personal pool whose condor_* names (installed into a temp prefix) come first on PATH."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from pooltools import Pool

from htcd.cli import install_condor_names


class CondorPool:
    """A pool and the environment in which ``condor_q`` & co. are htcd's."""

    def __init__(self, pool: Pool, prefix: Path) -> None:
        self.pool = pool
        self.bindir = prefix / "bin"
        self.env = dict(pool.env, PATH=f"{self.bindir}{os.pathsep}{pool.env.get('PATH', '')}")

    def run(self, *argv: str, input: str | None = None, cwd: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), env=self.env, cwd=cwd or self.pool.jobs_dir, capture_output=True,
                              text=True, input=input, timeout=timeout)


@pytest.fixture(scope="module")
def condor_pool(module_pool: Callable[..., Pool], tmp_path_factory: pytest.TempPathFactory) -> CondorPool:
    pool = module_pool()
    prefix = tmp_path_factory.mktemp("condor-names")
    install_condor_names.install(prefix, force=True)
    return CondorPool(pool, prefix)
