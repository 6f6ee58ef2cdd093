"""Helpers for the starter's tests: configs from text, a starter run on real processes."""

from __future__ import annotations

import asyncio
import logging
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from htcd.classad import ClassAd
from htcd.config import load

LOG = logging.getLogger("test-starter")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: switching users and chowning sandboxes")


def make_config(tmp: Path, text: str = ""):
    top = tmp / "cfg"
    top.write_text(text)
    return load("STARTD", env={"HTCD_CONFIG": str(top)})


def job_ad(**attrs: object) -> ClassAd:
    ad = ClassAd()
    base = {"ClusterId": 1, "ProcId": 0, "Owner": "root", "User": "root@example.org", "JobUniverse": 5,
            "RequestCpus": 1, "RequestMemory": 128, "TransferExecutable": False}
    for k, v in {**base, **attrs}.items():
        ad[k] = v
    return ad


@pytest.fixture
def account() -> Iterator[str]:
    """A real account made for the test (useradd) and removed after it."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create an account")
    name = f"htcdt{os.getpid() % 100000}"
    subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], check=True, capture_output=True)
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], capture_output=True)
        assert name not in {p.pw_name for p in pwd.getpwall()}


@pytest.fixture
def execute_dir() -> Iterator[Path]:
    """An EXECUTE every account can reach (the test root is private to root): removed after."""
    path = Path(tempfile.mkdtemp(prefix="htcd-execute-", dir="/tmp"))
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def until(cond, timeout: float, what: str):
    """Poll ``cond`` in the event loop until it is truthy; fail with ``what`` at the deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = cond()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.05)


def vanilla():
    from htcd_plugins.vanilla import VanillaUniverse

    return VanillaUniverse()


def shell_job(script: str, **attrs: object) -> ClassAd:
    """A job running ``/bin/sh -c script`` (new-syntax arguments: single quotes group)."""
    return job_ad(Cmd="/bin/sh", Arguments="-c '" + script.replace("'", "''") + "'", **attrs)
