"""What the master tests share: the master's own ad (asked of the master, not the collector,
which may be down), its log, and its children's PIDs."""

from __future__ import annotations

import re
from typing import Any

from pooltools import Pool, wait_for

from htcd.classad import ClassAd
from htcd.wire.client import Connection
from htcd.wire.errors import WireError
from htcd.wire.locate import read_address_file

MINIMAL = {"DAEMON_LIST": "MASTER, COLLECTOR, SCHEDD"}  # no startd: quicker, when jobs are not needed


def master_ad(pool: Pool) -> ClassAd | None:
    """The master's ad straight from the master (DC_QUERY_SELF), or None while it does not answer."""
    addr = read_address_file(str(pool.local / "log" / ".master_address"))
    if addr is None:
        return None
    try:
        with Connection(addr, timeout=10) as conn:
            ads = conn.call("DC_QUERY_SELF")
    except WireError:
        return None
    return ClassAd.from_wire(ads[0]) if ads else None


def ad_value(pool: Pool, attr: str) -> Any:
    ad = master_ad(pool)
    return None if ad is None else ad.get_value(attr)


def wait_state(pool: Pool, daemon: str, state: str, timeout: float = 60) -> None:
    wait_for(lambda: ad_value(pool, f"{daemon}_State") == state, timeout,
             f"{daemon}_State == {state!r} (now {ad_value(pool, f'{daemon}_State')!r})\n{pool.log('MasterLog')}")


def new_pid(pool: Pool, daemon: str, old: int, timeout: float = 60) -> int:
    """Wait until the master runs ``daemon`` under a PID other than ``old``."""
    return wait_for(lambda: (lambda p: p if p not in (None, old) else None)(pool.daemon_pids().get(daemon)),
                    timeout, f"a new {daemon} (old pid {old})\n{pool.log('MasterLog')}")


def serving(pool: Pool) -> None:
    """Wait until the schedd answers (a restarted one first has to listen)."""
    wait_for(lambda: pool.htcd("q", check=False).returncode == 0, 60, f"the schedd to answer\n{pool.log('MasterLog')}")


def after(text: str, marker: str) -> str:
    """The part of a log after the last line containing ``marker``."""
    at = text.rfind(marker)
    assert at >= 0, f"{marker!r} is not in the log:\n{text}"
    return text[at:]


def restart_delays(log: str, daemon: str) -> list[str]:
    """The delays of ``restarting htcd <daemon> in N seconds`` lines, in order."""
    return re.findall(rf"restarting htcd {daemon.lower()} in ([0-9.]+) seconds", log)
