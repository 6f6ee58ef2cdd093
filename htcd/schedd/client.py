"""The client side of the schedd's submit and query protocol (what ``htcd submit``, ``htcd q``,
``htcd rm`` and the benchmarks call).  Blocking: tools start fast and talk to one schedd."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from htcd.errors import UserError
from htcd.wire.address import Address
from htcd.wire.client import Connection
from htcd.wire.errors import WireError

Ads = tuple[dict[str, str], list[dict[str, str]]]
SUBMIT_TIMEOUT = 600.0  # a 100,000-proc cluster is committed (fsync'd) before the answer


@dataclass
class Submitted:
    cluster_id: int
    procs: int
    warnings: list[str] = field(default_factory=list)


class ScheddClient:
    """One connection to a schedd; use as a context manager."""

    def __init__(self, address: Address | str, timeout: float = SUBMIT_TIMEOUT) -> None:
        try:
            self.conn = Connection(address, timeout=timeout)
        except WireError as exc:
            raise UserError(f"cannot reach the schedd: {exc}") from None

    def __enter__(self) -> ScheddClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    def _call(self, what: str, command: str, **args: Any) -> Any:
        try:
            return self.conn.call(command, **args)
        except WireError as exc:
            raise UserError(f"{what}: {exc}") from None

    def submit(self, build: Callable[[int], Ads]) -> Submitted:
        """Reserve a cluster id, build the ads for it (``build(cluster_id)``) and commit them whole."""
        cid = int(self._call("cannot submit to the schedd", "RESERVE_CLUSTER")["cluster_id"])
        cluster_ad, procs = build(cid)
        reply = self._call("cannot submit to the schedd", "SUBMIT", cluster_id=cid, cluster_ad=cluster_ad,
                           proc_ads=procs)
        return Submitted(cid, int(reply["procs"]), list(reply.get("warnings") or []))

    def query(self, constraint: str | None = None, projection: list[str] | None = None,
              limit: int = 0) -> Iterator[list[dict[str, str]]]:
        """Job ads (wire form) in chunks, as the schedd streams them, in (cluster, proc) order."""
        try:
            yield from self.conn.stream("QUERY_JOBS", constraint=constraint, projection=projection,
                                        limit=limit)
        except WireError as exc:
            raise UserError(f"cannot query the schedd: {exc}") from None

    def totals(self, constraint: str | None = None, owner: str | None = None) -> dict[str, dict[int, int]]:
        """Counts by JobStatus: ``query`` (these jobs) and ``all``, from the schedd's counters."""
        reply = self._call("cannot query the schedd", "QUERY_JOBS", totals=True, constraint=constraint,
                           owner=owner)
        return {k: {int(s): n for s, n in v.items()} for k, v in reply.items()}

    def autoclusters(self, constraint: str | None = None) -> list[dict[str, Any]]:
        return list(self._call("cannot query the schedd", "QUERY_JOBS", autoclusters=True,
                               constraint=constraint))

    def act(self, action: str, ids: list[str], constraint: str | None, reason: str | None) -> dict[str, str]:
        reply = self._call("cannot reach the schedd", "ACT_ON_JOBS", action=action, ids=ids,
                           constraint=constraint, reason=reason)
        return dict(reply["results"])

    def set_attributes(self, ids: list[str], constraint: str | None, attrs: dict[str, str]) -> int:
        reply = self._call("cannot edit jobs", "SET_ATTRIBUTES", ids=ids, constraint=constraint, attrs=attrs)
        return int(reply["jobs"])
