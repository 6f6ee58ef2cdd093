"""The job's cgroup as the starter sets it up: CPU weight from the slot's Cpus, the memory limits
of each CGROUP_MEMORY_LIMIT_POLICY, and nothing left of the group (or of groups a dead startd
left) once the job is cleaned up."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
from pathlib import Path

import pytest
from containment.cgroup_tools import LAYOUT, UNLIMITED, read_value
from starter.starter_tools import LOG, make_config, shell_job, until, vanilla

from htcd.classad import ClassAd
from htcd.starter.starter import Starter

pytestmark = pytest.mark.skipif(LAYOUT is None, reason="needs root and a usable cgroup hierarchy")
MB = 1024 * 1024


def slot_ad(cpus: int, memory: int, total: int = 4096) -> ClassAd:
    ad = ClassAd()
    ad["Cpus"], ad["Memory"], ad["TotalMemory"] = cpus, memory, total
    return ad


def limits_while_running(tmp: Path, execute: Path, cfg: str, cpus: int = 3, memory: int = 256) -> dict[str, int | None]:
    """Run a job on a slot of ``cpus`` and ``memory`` MB; its group's files while it runs.  The
    group is gone once the run is over."""
    s = Starter(shell_job("touch ready; exec sleep 300", RequestCpus=1), "slot1_1@test", 1001, str(execute), vanilla(),
                LOG, config=make_config(tmp, cfg), memory_mb=memory, machine_ad=slot_ad(cpus, memory))

    paths: list[str] = []

    async def scenario() -> dict[str, int | None]:
        task = asyncio.ensure_future(s.run())
        await until(lambda: s.sandbox and os.path.exists(os.path.join(s.sandbox, "ready")), 30, "the job")
        assert s.cgroup is not None
        v2 = s.cgroup.layout.version == 2
        mem = s.cgroup.paths["" if v2 else "memory"]
        files = {"hard": "memory.max" if v2 else "memory.limit_in_bytes",
                 "soft": "memory.high" if v2 else "memory.soft_limit_in_bytes", "low": "memory.low"}
        seen = {k: read_value(os.path.join(mem, f)) for k, f in files.items()}
        seen["weight"] = s.cgroup.cpu_weight() if s.cgroup.has_cpu() else None
        paths.extend(s.cgroup.paths.values())
        s.kill()
        await asyncio.wait_for(task, 30)
        return seen

    seen = asyncio.run(scenario())
    assert paths and not [p for p in paths if os.path.exists(p)], "the job's cgroup is left after its end"
    return seen


def test_hard_policy_limits_at_the_slot_and_weights_by_cpus(pool_dir: Path, execute_dir: Path) -> None:
    seen = limits_while_running(pool_dir, execute_dir, "CGROUP_MEMORY_LIMIT_POLICY = hard\n", cpus=3)
    assert seen["hard"] == 256 * MB
    if LAYOUT.version == 1:  # HTCondor: the soft limit at 90% of the hard one
        assert seen["soft"] == 256 * 9 // 10 * MB
        assert seen["weight"] == 300  # cpu.shares: Cpus * 100
    elif seen["weight"] is not None:
        assert seen["weight"] == 300  # cpu.weight


def test_soft_policy_limits_at_the_machine(pool_dir: Path, execute_dir: Path) -> None:
    seen = limits_while_running(pool_dir, execute_dir, "CGROUP_MEMORY_LIMIT_POLICY = soft\n", cpus=1)
    assert seen["soft"] == 256 * MB and seen["hard"] == 4096 * MB
    assert seen["weight"] in (None, 100) and (LAYOUT.version == 2 or seen["weight"] == 100)


def test_none_policy_sets_no_limit(pool_dir: Path, execute_dir: Path) -> None:
    seen = limits_while_running(pool_dir, execute_dir, "CGROUP_MEMORY_LIMIT_POLICY = none\n")
    assert seen["hard"] is None or seen["hard"] > UNLIMITED


def test_custom_policy_evaluates_its_expression(pool_dir: Path, execute_dir: Path) -> None:
    seen = limits_while_running(pool_dir, execute_dir, "CGROUP_MEMORY_LIMIT_POLICY = custom\n"
                                "CGROUP_HARD_MEMORY_LIMIT_EXPR = MY.Memory * 2 + TARGET.RequestCpus\n")
    assert seen["hard"] == 513 * MB


def test_custom_policy_without_expression_is_reported(pool_dir: Path, execute_dir: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=LOG.name):
        seen = limits_while_running(pool_dir, execute_dir, "CGROUP_MEMORY_LIMIT_POLICY = custom\n"
                                    "CGROUP_LOW_MEMORY_LIMIT = Memory *\n")
    assert seen["hard"] is None or seen["hard"] > UNLIMITED
    text = caplog.text
    assert "custom without a usable CGROUP_HARD_MEMORY_LIMIT_EXPR" in text
    assert "CGROUP_LOW_MEMORY_LIMIT = Memory * cannot be parsed" in text


def test_unknown_policy_is_reported_and_hard_applies(pool_dir: Path, execute_dir: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=LOG.name):
        seen = limits_while_running(pool_dir, execute_dir, "CGROUP_MEMORY_LIMIT_POLICY = strict\n")
    assert seen["hard"] == 256 * MB
    assert "CGROUP_MEMORY_LIMIT_POLICY = strict is not hard, soft, custom or none: using hard" in caplog.text


def test_groups_a_dead_startd_left_are_removed(pool_dir: Path, execute_dir: Path) -> None:
    """Empty job groups named for a startd that no longer runs go when a job's group is cleaned
    up; those of a running startd (here pid 1's name) and groups with processes stay."""
    assert LAYOUT is not None
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid is free now: the startd of these groups is gone
    mounts = set(LAYOUT.mounts.values())
    stale = [os.path.join(m, "htcd", f"dir_{dead.pid}_7_1") for m in mounts]
    alive = [os.path.join(m, "htcd", "dir_1_7_1") for m in mounts]
    for path in stale + alive:
        os.makedirs(path, exist_ok=True)
    try:
        limits_while_running(pool_dir, execute_dir, "")
        assert not [p for p in stale if os.path.exists(p)]
        assert all(os.path.exists(p) for p in alive)
    finally:
        for path in stale + alive:
            if os.path.exists(path):
                os.rmdir(path)
