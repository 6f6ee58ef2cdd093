"""Session-wide guarantees: every test's pool lives under one temp root, and the run fails if
any process, listening port or file is left behind.  Tests are marked by what they need (see
``pytest_collection_modifyitems``) and hypothesis runs under the profile HYPOTHESIS_PROFILE names."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import hypothesis_profiles
import psutil
import pytest
from pooltools import Pool

hypothesis_profiles.load()

# Fixtures that start daemons: a test using one (directly or through another fixture) is `pool`.
POOL_FIXTURES = frozenset({"pool", "make_pool", "module_pool", "toyd", "own_startd"})
DOCKER_FIXTURES = frozenset({"docker_engine", "own_engine", "podman_engine"})
# Directories whose every test needs one thing, whatever fixtures it uses.
DIRECTORY_MARKS = {"ansible": "ansible", "docker": "docker", "fuzz": "fuzz"}
# Directories `make test` runs in its second lane, after molecule (scripts/test_lanes.sh): the first
# lane is the longer one, and these move ~17 % of its time (measured per directory from a JUnit
# report) so the two end together.
LANE2_DIRECTORIES = frozenset({"security", "transfer", "master"})
TESTS = Path(__file__).parent


def _marks_for(item: pytest.Item) -> set[str]:
    """The marks a test needs, from where it lives, the fixtures it uses and how it is skipped."""
    marks = set()
    names = set(getattr(item, "fixturenames", ()))
    if names & POOL_FIXTURES:
        marks.add("pool")
    if names & DOCKER_FIXTURES:
        marks.add("docker")
    try:
        top = item.path.relative_to(TESTS).parts[0]
    except ValueError:
        top = ""
    if top in DIRECTORY_MARKS:
        marks.add(DIRECTORY_MARKS[top])
    if top in LANE2_DIRECTORIES:
        marks.add("lane2")
    if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        marks.add("fuzz")
    if any("root" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif")):
        marks.add("root")
    return marks


# With xdist (--dist loadgroup), a module's tests run on one worker, and tests sharing something of
# the host run one after another on one worker: the test hosts' network namespaces (molecule's, and
# the ``netns`` tests' own), docker engines on the host's bridge, and what root changes (users'
# files, cgroups).
XDIST_GROUPS = {"ansible": "testhosts", "docker": "docker", "netns": "netns", "root": "host"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test by what it needs, so ``-m "not pool"`` and friends select without anyone
    remembering to mark a new test (a module may add marks of its own with ``pytestmark``)."""
    xdist = config.pluginmanager.hasplugin("xdist")
    for item in items:
        have = {m.name for m in item.iter_markers()}
        for name in sorted(_marks_for(item) - have):
            item.add_marker(name)
        if xdist and not item.get_closest_marker("xdist_group"):
            group = next((g for mark, g in XDIST_GROUPS.items() if item.get_closest_marker(mark)), None)
            # else the module's own group: its module-scoped fixtures (pools, oracles) run once
            item.add_marker(pytest.mark.xdist_group(group or item.nodeid.split("::", 1)[0]))


def _listening(pids: set[int]) -> set[tuple[str, int]]:
    """Listening TCP ports held by ``pids`` (other runs on the machine are not our business)."""
    return {(c.laddr.ip, c.laddr.port) for c in psutil.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN and c.pid in pids}


def _ours(root: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "cwd"]):
        try:
            if proc.pid == os.getpid():
                continue
            cwd = proc.info.get("cwd") or ""
            env = proc.environ()
            if cwd.startswith(root) or any(env.get(k, "").startswith(root) for k in ("HTCD_CONFIG", "HOME")):
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


@pytest.fixture(scope="session", autouse=True)
def leak_check() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="htcd-tests-", dir="/tmp"))
    ports_before = _listening({os.getpid()})
    yield root
    leaked = _ours(str(root))
    ports_after = _listening({os.getpid(), *(p.pid for p in leaked)}) - ports_before
    for p in leaked:
        p.kill()
    leftovers = list(root.iterdir())
    shutil.rmtree(root, ignore_errors=True)
    problems = []
    if leaked:
        problems.append(f"processes left running: {[(p.pid, p.info.get('cmdline')) for p in leaked]}")
    if ports_after:
        problems.append(f"ports left listening: {sorted(ports_after)}")
    if leftovers:
        problems.append(f"files left in the test root: {[str(x) for x in leftovers]}")
    assert not problems, "; ".join(problems)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator:
    """Remember each phase's report on the item, so fixtures can tell that their test failed."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def _log_tails(path: Path, lines: int = 60) -> str:
    """The last lines of every daemon log under ``path``: what a failed pool test needs to be
    understood after its directory is gone."""
    parts = []
    for log in sorted(path.rglob("*Log")):
        if log.is_file():
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"==== {log.relative_to(path)} (last {len(tail)} lines)\n" + "\n".join(tail))
    return "\n".join(parts)


@pytest.fixture
def pool_dir(leak_check: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A fresh directory under the session root, removed afterwards (the tails of its daemon logs
    are added to the report of a test that failed)."""
    path = Path(tempfile.mkdtemp(prefix=request.node.name[:20] + "-", dir=leak_check))
    yield path
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        tails = _log_tails(path)
        if tails:
            report.sections.append(("daemon logs", tails))
        keep = os.environ.get("HTCD_KEEP_FAILED")  # a directory: failed tests' pool dirs are copied there
        if keep:
            shutil.copytree(path, Path(keep) / path.name, symlinks=True, dirs_exist_ok=True)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def make_pool(pool_dir: Path) -> Iterator:
    pools: list[Pool] = []

    def factory(knobs: dict[str, str] | None = None, config_text: str = "", start: bool = True,
                slots: int | None = None) -> Pool:
        pool = Pool(pool_dir / f"pool{len(pools)}", knobs, config_text)
        pools.append(pool)
        return pool.start(slots) if start else pool

    yield factory
    for pool in pools:
        pool.stop()


@pytest.fixture
def pool(make_pool) -> Pool:
    return make_pool()


@pytest.fixture(scope="module")
def module_pool(leak_check: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., Pool]]:
    """``make_pool`` for a whole module: pools started once and shared by its tests, for tests that
    only read from them (a test that changes the pool gets its own, from ``make_pool``)."""
    path = Path(tempfile.mkdtemp(prefix=request.module.__name__.rsplit(".", 1)[-1][:20] + "-", dir=leak_check))
    pools: list[Pool] = []

    def factory(knobs: dict[str, str] | None = None, config_text: str = "", slots: int | None = None) -> Pool:
        pool = Pool(path / f"pool{len(pools)}", knobs, config_text)
        pools.append(pool)
        return pool.start(slots)

    try:
        yield factory
    finally:
        try:
            for pool in pools:
                pool.stop()
        finally:
            shutil.rmtree(path, ignore_errors=True)
