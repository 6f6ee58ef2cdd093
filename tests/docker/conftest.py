"""A private Docker engine for the docker-universe tests: scripts/dockerd.sh installs it when it
is missing (root and apt-get, as in CI), starts it on a socket in its own temp dir with the tiny
busybox image, and stops it by its PID at the end of the session.  Where no engine can start, the
tests skip with the reason."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from dockertools import SCRIPT, DockerEngine


def _start(directory: Path) -> DockerEngine:
    install = subprocess.run(["bash", str(SCRIPT), "install"], capture_output=True, text=True, timeout=600)
    if install.returncode != 0:
        pytest.skip(f"no Docker engine: {install.stderr.strip() or 'dockerd.sh install failed'}")
    start = subprocess.run(["bash", str(SCRIPT), "start", str(directory)], capture_output=True, text=True,
                           timeout=180)
    if start.returncode != 0:
        subprocess.run(["bash", str(SCRIPT), "stop", str(directory)], timeout=60)
        pytest.skip(f"dockerd cannot start here: {start.stderr.strip()[-500:]}")
    return DockerEngine(directory)


def _stop(directory: Path) -> None:
    subprocess.run(["bash", str(SCRIPT), "stop", str(directory)], timeout=60, check=False)
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[DockerEngine]:
    directory = Path(tempfile.mkdtemp(prefix="htcd-dockerd-", dir="/tmp"))
    try:
        yield _start(directory)
    finally:
        _stop(directory)


@pytest.fixture
def own_engine() -> Iterator[tuple[DockerEngine, Callable[[], object]]]:
    """An engine of the test's own, and a function that stops it (the test's engine going away)."""
    directory = Path(tempfile.mkdtemp(prefix="htcd-dockerd-", dir="/tmp"))
    try:
        yield _start(directory), lambda: subprocess.run(["bash", str(SCRIPT), "stop", str(directory)],
                                                        timeout=60, check=True)
    finally:
        _stop(directory)


@pytest.fixture(scope="module")
def podman_engine() -> Iterator[DockerEngine]:
    """Podman's Docker-compatible service (``dockerd.sh podman-start``) on a socket in its own temp
    dir, with the tiny busybox image; the tests skip with the reason where podman cannot run."""
    directory = Path(tempfile.mkdtemp(prefix="htcd-podman-", dir="/tmp"))
    try:
        install = subprocess.run(["bash", str(SCRIPT), "podman-install"], capture_output=True, text=True,
                                 timeout=600)
        if install.returncode != 0:
            pytest.skip(f"no podman: {install.stderr.strip() or 'dockerd.sh podman-install failed'}")
        start = subprocess.run(["bash", str(SCRIPT), "podman-start", str(directory)], capture_output=True,
                               text=True, timeout=180)
        if start.returncode != 0:
            pytest.skip(f"podman's service cannot start here: {start.stderr.strip()[-500:]}")
        yield DockerEngine(directory)
    finally:
        subprocess.run(["bash", str(SCRIPT), "podman-stop", str(directory)], timeout=60, check=False)
        shutil.rmtree(directory, ignore_errors=True)
