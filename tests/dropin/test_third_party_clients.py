"""Real third-party clients, unchanged, on an htcd pool through the condor_* names first on PATH:
dask-jobqueue's HTCondorCluster (condor_submit, condor_rm) and Parsl's CondorProvider
(condor_submit, condor_q, condor_rm).  What each needed from htcd is in docs/dropin.md."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pooltools import Pool

from htcd.cli import install_condor_names

pytestmark = pytest.mark.slow


@pytest.fixture
def names_on_path(make_pool: Callable[..., Pool], tmp_path: Path,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[Pool]:
    """A pool of 2 slots whose config and condor_* names this process (and so the client's
    subprocesses) uses."""
    pool = make_pool(knobs={"NUM_CPUS": "2", "MEMORY": "2048"})
    install_condor_names.install(tmp_path / "prefix", force=True)
    # the names first; then this interpreter's bin (the clients' own commands: interchange.py, ...)
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path / "prefix" / "bin"), str(Path(sys.executable).parent),
                                                os.environ["PATH"]]))
    for k, v in pool.env.items():
        if k in ("HTCD_CONFIG",):
            monkeypatch.setenv(k, v)
    monkeypatch.chdir(pool.jobs_dir)
    yield pool
    assert pool.job_ids() == [], "the client left jobs in the queue"


def test_dask_jobqueue_htcondor_cluster(names_on_path: Pool, tmp_path: Path) -> None:
    dask_jobqueue = pytest.importorskip("dask_jobqueue")
    distributed = pytest.importorskip("distributed")
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    cluster: Any = dask_jobqueue.HTCondorCluster(
        cores=1, memory="256MB", disk="64MB", processes=1, log_directory=str(logs),
        scheduler_options={"host": "127.0.0.1", "dashboard_address": None},
        worker_extra_args=["--host", "127.0.0.1", "--no-dashboard"],
        python=sys.executable)
    try:
        cluster.scale(jobs=2)
        with distributed.Client(cluster) as client:
            client.wait_for_workers(2, timeout=60)
            total = client.submit(sum, client.map(lambda x: x * x, range(10))).result(timeout=60)
            assert total == 285
            assert len(client.scheduler_info()["workers"]) == 2
    finally:
        cluster.close()
    pool = names_on_path
    from htcd.testing import wait_for
    wait_for(lambda: pool.job_ids() == [], 30, "the workers' jobs to leave the queue")


def test_parsl_condor_provider(names_on_path: Pool, tmp_path: Path) -> None:
    parsl = pytest.importorskip("parsl")
    from parsl.config import Config
    from parsl.executors import HighThroughputExecutor
    from parsl.providers import CondorProvider

    venv_bin = str(Path(sys.executable).parent)
    provider = CondorProvider(init_blocks=1, min_blocks=1, max_blocks=1, cores_per_slot=1,
                                # TMPDIR: the job's scratch dir (as in HTCondor), under the test's deep temp dir,
                                # is too long for the worker's AF_UNIX socket (108 bytes)
                                worker_init=f"export PATH={venv_bin}:$PATH; export TMPDIR=/tmp", cmd_timeout=60)
    config = Config(executors=[HighThroughputExecutor(label="htcd", address="127.0.0.1", provider=provider,
                                                      max_workers_per_node=1)],
                    run_dir=str(tmp_path / "runinfo"), strategy="none")

    import operator
    mul = parsl.python_app(operator.mul)  # a function the worker imports (not this test module)

    dfk = parsl.load(config)
    try:
        assert sum(f.result(timeout=90) for f in [mul(i, i) for i in range(5)]) == 30
        jobs = provider.resources
        assert len(jobs) == 1 and next(iter(jobs)).endswith(".0")
        assert [s.state.name for s in provider.status(list(jobs))] == ["RUNNING"]
    finally:
        dfk.cleanup()
        parsl.clear()
    pool = names_on_path
    from htcd.testing import wait_for
    wait_for(lambda: pool.job_ids() == [], 30, "the block's job to leave the queue")
