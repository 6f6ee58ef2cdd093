"""The command line itself: usage errors, help, exit codes, no tracebacks."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pooltools import clean_env

DAEMONS = ["master", "collector", "negotiator", "schedd", "startd"]


def htcd(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "htcd", *args], capture_output=True, text=True, timeout=60,
                          env=env or clean_env())


def test_unknown_subcommand_is_a_usage_error() -> None:
    proc = htcd("frobnicate")
    assert proc.returncode == 2
    assert "usage:" in proc.stderr and "invalid choice" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("cmd", ["q", "status", "submit", "rm", *DAEMONS])
def test_bad_flag_is_a_usage_error(cmd: str) -> None:
    proc = htcd(cmd, "-no-such-flag")
    assert proc.returncode == 2
    assert "usage:" in proc.stderr and "Traceback" not in proc.stderr


def test_no_subcommand() -> None:
    proc = htcd()
    assert proc.returncode == 2 and "subcommand" in proc.stderr


@pytest.mark.parametrize("cmd", DAEMONS)
def test_daemons_accept_foreground_flag(cmd: str) -> None:
    proc = htcd(cmd, "-h")
    assert proc.returncode == 0 and "-f" in proc.stdout


def test_version() -> None:
    proc = htcd("version")
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0].startswith("$CondorVersion: 0.")
