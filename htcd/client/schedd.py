"""Talking to a schedd: finding it, submitting, querying and acting on jobs (what ``htcd submit``,
``htcd q``, ``htcd rm``... and the benchmarks call).  Blocking: tools start fast and talk to one
schedd."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from htcd.client import collector
from htcd.config import Config
from htcd.errors import UserError
from htcd.wire import locate
from htcd.wire.address import Address
from htcd.wire.authn import ClientSecurity
from htcd.wire.client import Connection
from htcd.wire.errors import RemoteError, WireError

if TYPE_CHECKING:
    from htcd.submit.digest import Factory

Ads = tuple[dict[str, str], list[dict[str, str]]]
SUBMIT_TIMEOUT = 600.0  # a 100,000-proc cluster is committed (fsync'd) before the answer


def address(cfg: Config, name: str | None = None) -> tuple[Address, str]:
    """(address, name) of the named schedd, or of this host's schedd."""
    if name is None:
        local = locate.local_daemon(cfg, "SCHEDD")
        if local is not None:
            return local, cfg.get("SCHEDD_NAME") or cfg.get("FULL_HOSTNAME") or ""
    ads = collector.query(cfg, "Scheduler", f'Name == "{name}"' if name else None, ["Name", "MyAddress"])
    if not ads:
        raise UserError(f"no schedd {'named ' + repr(name) + ' ' if name else ''}is known to the collector; "
                        "is the pool running?")
    return Address.parse(str(ads[0].get_value("MyAddress"))), str(ads[0].get_value("Name"))


@dataclass
class Submitted:
    cluster_id: int
    procs: int
    warnings: list[str] = field(default_factory=list)


class ScheddClient:
    """One connection to a schedd; use as a context manager."""

    def __init__(self, address: Address | str, timeout: float = SUBMIT_TIMEOUT,
                 security: ClientSecurity | None = None) -> None:
        try:
            self.conn = Connection(address, timeout=timeout, security=security)
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

    def submit(self, build: Callable[[int], Ads], factory: Callable[[int], Factory | None] | None = None) -> Submitted:
        """Reserve a cluster id, build the ads for it (``build(cluster_id)``) and commit them whole;
        or, when ``factory(cluster_id)`` makes one (late materialization), send only the cluster ad,
        the submit digest and the item data: the schedd builds the procs.  A schedd that does not
        take factories (SCHEDD_ALLOW_LATE_MATERIALIZE = false) gets every proc, as condor_submit does."""
        cid = int(self._call("cannot submit to the schedd", "RESERVE_CLUSTER")["cluster_id"])
        made = factory(cid) if factory is not None else None
        if made is not None:
            try:
                reply = self.conn.call("SUBMIT", cluster_id=cid, cluster_ad=made.cluster_ad, digest=made.digest,
                                       items=made.items, total=made.total)
                return Submitted(cid, int(reply["procs"]), list(reply.get("warnings") or []))
            except RemoteError as exc:
                if exc.code != "NO_FACTORY":
                    raise UserError(f"cannot submit to the schedd: {exc}") from None
            except WireError as exc:
                raise UserError(f"cannot submit to the schedd: {exc}") from None
        cluster_ad, procs = build(cid)
        reply = self._call("cannot submit to the schedd", "SUBMIT", cluster_id=cid, cluster_ad=cluster_ad,
                           proc_ads=procs)
        return Submitted(cid, int(reply["procs"]), list(reply.get("warnings") or []))

    def submit_clusters(self, builds: list[Callable[[int], Ads]]) -> list[Submitted | Exception]:
        """Several clusters in one transaction (``SUBMIT_CLUSTERS``): ids reserved in one call,
        each built, all committed together.  For each, in order, what it became, or the build's
        exception, or the schedd's refusal as a UserError (the others are not affected)."""
        ids = list(self._call("cannot submit to the schedd", "RESERVE_CLUSTERS", count=len(builds))["cluster_ids"])
        out: list[Submitted | Exception | None] = []
        clusters = []
        for cid, build in zip(ids, builds, strict=True):
            try:
                cluster_ad, procs = build(cid)
            except Exception as exc:  # this cluster's description: the others go on
                out.append(exc)
                continue
            out.append(None)
            clusters.append({"cluster_id": cid, "cluster_ad": cluster_ad, "proc_ads": procs})
        answers = iter(self._call("cannot submit to the schedd", "SUBMIT_CLUSTERS", clusters=clusters)["results"]
                       if clusters else [])
        done: list[Submitted | Exception] = []
        for item in out:
            if item is not None:
                done.append(item)
                continue
            answer = next(answers)
            if "error" in answer:
                done.append(UserError(f"cannot submit to the schedd: {answer['error']}"))
            else:
                done.append(Submitted(int(answer["cluster_id"]), int(answer["procs"]),
                                      list(answer.get("warnings") or [])))
        return done

    def query(self, constraint: str | None = None, projection: list[str] | None = None,
              limit: int = 0) -> Iterator[list[dict[str, str]]]:
        """Job ads (wire form) in chunks, as the schedd streams them, in (cluster, proc) order."""
        try:
            yield from self.conn.stream("QUERY_JOBS", constraint=constraint, projection=projection,
                                        limit=limit)
        except WireError as exc:
            raise UserError(f"cannot query the schedd: {exc}") from None

    def history(self, constraint: str | None = None, projection: list[str] | None = None, match: int = 0,
                since: str | None = None, forwards: bool = False,
                scanlimit: int = 0) -> Iterator[list[dict[str, str]]]:
        """The schedd's history (wire form) in chunks as it streams them, newest first (or
        ``forwards``), at most ``match`` ads (0: all), stopping before the ad ``since`` (an
        expression) is true of or after ``scanlimit`` ads read."""
        try:
            yield from self.conn.stream("QUERY_SCHEDD_HISTORY", constraint=constraint, projection=projection,
                                        match=match, since=since, forwards=forwards, scanlimit=scanlimit)
        except WireError as exc:
            raise UserError(f"cannot read the schedd's history: {exc}") from None

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


def vacate_jobs(address: Address, ids: list[str], constraint: str | None, fast: bool,
                targets: str) -> dict[str, str]:
    """``VACATE_JOBS``: the running jobs go back to idle and their claims are released; the
    outcome per job id.  ``targets`` names the jobs in the message when none matched."""
    try:
        with Connection(address) as conn:
            reply = conn.call("VACATE_JOBS", ids=ids, constraint=constraint, fast=fast)
    except RemoteError as exc:
        if exc.code == "NO_MATCH":
            raise UserError(f"Couldn't find/vacate any jobs matching {targets}") from None
        raise UserError(f"Can't vacate jobs: {exc}") from None
    except WireError as exc:
        raise UserError(f"Can't reach the schedd at {address}: {exc}") from None
    return dict(reply.get("results") or {})
