"""Fixtures of the runtime tests: ``toyd`` starts the toy daemon (tests/daemon/toyd.py) as a real
process in a temp dir, stopped (by PID) at the end of the test."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pooltools import clean_env, wait_for

from htcd.wire.client import Connection

TOYD = Path(__file__).parent / "toyd.py"


class Toy:
    """One toy daemon process and its files."""

    def __init__(self, root: Path, knobs: dict[str, str]) -> None:
        self.dir = root
        root.mkdir(parents=True, exist_ok=True)
        self.local = Path(knobs.get("LOCAL_DIR", root / "local"))
        self.config = root / "htcd_config"
        self.knobs = {"LOCAL_DIR": str(self.local), "LOG": "$(LOCAL_DIR)/log", "LOCK": "$(LOCAL_DIR)/lock",
                      "SPOOL": "$(LOCAL_DIR)/spool", "EXECUTE": "$(LOCAL_DIR)/execute",
                      "CONDOR_HOST": "127.0.0.1", "COLLECTOR_HOST": "127.0.0.1:0",
                      "TOYD_ADDRESS_FILE": "$(LOG)/.toyd_address", **knobs}
        self.write_config()
        self.env = clean_env({"HTCD_CONFIG": str(self.config)})
        self.proc = subprocess.Popen([sys.executable, str(TOYD)], env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for(lambda: self.address_file.exists() or self.proc.poll() is not None, 60, "the toy daemon's address")
        assert self.proc.poll() is None, f"the toy daemon died: {self.stderr()}"
        self.address = self.address_file.read_text().splitlines()[0]

    @property
    def address_file(self) -> Path:
        return self.local / "log" / ".toyd_address"

    @property
    def log_path(self) -> Path:
        return self.local / "log" / "ToydLog"

    def write_config(self) -> None:
        self.config.write_text("".join(f"{k} = {v}\n" for k, v in self.knobs.items()))

    def reconfig(self, **knobs: str) -> dict[str, Any]:
        """Change knobs in the config file and send DC_RECONFIG."""
        self.knobs.update(knobs)
        self.write_config()
        return self.call("DC_RECONFIG")

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def call(self, command: str, **args: Any) -> Any:
        with Connection(self.address, timeout=60) as conn:
            return conn.call(command, **args)

    def ad(self, statistics: str | None = None) -> dict[str, str]:
        args = {"statistics": statistics} if statistics else {}
        return self.call("DC_QUERY_SELF", **args)[0]

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is not None and self.proc.stderr:
                self.proc.stderr.close()

    def stderr(self) -> str:
        if self.proc.poll() is None or not self.proc.stderr or self.proc.stderr.closed:
            return ""
        return self.proc.stderr.read().decode(errors="replace")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL by PID if it does not go within 60 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc.stderr and not self.proc.stderr.closed:
            self.proc.stderr.close()


@pytest.fixture
def toyd(pool_dir: Path) -> Iterator:
    started: list[Toy] = []

    def factory(**knobs: str) -> Toy:
        toy = Toy(pool_dir / f"toy{len(started)}", knobs)
        started.append(toy)
        return toy

    yield factory
    for toy in started:
        toy.stop()
