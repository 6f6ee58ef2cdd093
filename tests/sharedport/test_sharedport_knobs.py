"""The shared port's knobs as htcd reads them: defaults (htcd's USE_SHARED_PORT false, the port
from COLLECTOR_PORT, 9618), the collector's own switch, and the default id."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcd.config import Config, load
from htcd.sharedport.daemon import default_id
from htcd.wire import locate


def config(tmp_path: Path, text: str, subsystem: str = "TOOL") -> Config:
    path = tmp_path / "htcd_config"
    path.write_text(text)
    return load(subsystem, env={"HTCD_CONFIG": str(path), "HOME": str(tmp_path)})


def test_defaults(tmp_path: Path) -> None:
    cfg = config(tmp_path, "")
    assert not locate.uses_shared_port(cfg)  # htcd's documented deviation: HTCondor's is true
    assert not locate.collector_uses_shared_port(cfg)
    assert locate.shared_port_port(cfg) == 9618
    assert default_id(cfg) == "collector"


@pytest.mark.parametrize(("text", "port", "collector", "default"), [
    ("USE_SHARED_PORT = true\n", 9618, True, "collector"),
    ("USE_SHARED_PORT = true\nCOLLECTOR_PORT = 9700\n", 9700, True, "collector"),
    ("USE_SHARED_PORT = true\nSHARED_PORT_PORT = 11000\n", 11000, True, "collector"),
    ("USE_SHARED_PORT = true\nCOLLECTOR_USES_SHARED_PORT = false\n", 9618, False, None),
    ("USE_SHARED_PORT = true\nSHARED_PORT_DEFAULT_ID = schedd\n", 9618, True, "schedd"),
])
def test_explicit(tmp_path: Path, text: str, port: int, collector: bool, default: str | None) -> None:
    cfg = config(tmp_path, text)
    assert locate.uses_shared_port(cfg)
    assert locate.shared_port_port(cfg) == port
    assert locate.collector_uses_shared_port(cfg) is collector
    assert default_id(cfg) == default


def test_a_collector_host_with_sock_keeps_it(tmp_path: Path) -> None:
    cfg = config(tmp_path, "COLLECTOR_HOST = cm.example.org:11000?sock=collector\n")
    (addr,) = locate.collector_entries(cfg)
    assert (addr.host, addr.port, addr.sock) == ("cm.example.org", 11000, "collector")
