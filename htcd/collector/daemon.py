"""The collector daemon: stores updates, answers queries, expires stale ads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from htcd.classad import ClassAd, parse_expr
from htcd.collector.store import AdStore, project
from htcd.daemon import Daemon, locate
from htcd.errors import UserError
from htcd.wire.errors import CommandError
from htcd.wire.server import Handler, Request

CHUNK = 1000


class Collector(Daemon):
    subsystem = "COLLECTOR"
    ad_type = "Collector"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.store = AdStore()
        self.updates = 0

    def command_handlers(self) -> dict[str, Handler]:
        return {"UPDATE_AD": self.cmd_update, "INVALIDATE_AD": self.cmd_invalidate,
                "QUERY_ADS": self.cmd_query, "QUERY_PRIVATE_ADS": self.cmd_query_private}

    def default_name(self) -> str:
        return self.config.get("COLLECTOR_NAME") or self.hostname

    def tcp_bind(self) -> tuple[str, int]:
        return locate.bind_host(self.config), locate.collector_port(self.config)

    async def startup(self) -> None:
        self.every(lambda: 60.0, self._expire, "expire ads", first=60.0)

    async def _expire(self) -> None:
        n = self.store.expire()
        if n:
            self.log.info("expired %d ads", n)

    async def publish(self) -> None:
        ad = self.make_ad()
        self.store.update(self.ad_type, ad.to_wire(), None)

    async def invalidate(self) -> None:
        """Nothing to tell: the collector's own ads go with it."""

    def make_ad(self) -> ClassAd:
        ad = self.base_ad("Collector")
        ad["CollectorIpAddr"] = str(self.server.address)
        ad["UpdatesTotal"] = self.updates
        ad["HostsTotal"] = len(self.store.ads.get("machine", {}))
        return ad

    def ads(self, ad_type: str, constraint: str | None = None) -> Iterator[ClassAd]:
        """The stored ads of one type ("Any": every type) matching ``constraint``: the in-process
        read API (the metrics endpoint uses it), independent of how the store keeps ads."""
        expr = parse_expr(constraint) if constraint else None
        for entry in self.store.query(ad_type, expr):
            yield entry.ad

    async def cmd_update(self, req: Request) -> str:
        ad_type = str(req.require("ad_type"))
        wire = req.require("ad")
        private = req.arg("private")
        if not isinstance(wire, dict):
            raise CommandError("UPDATE_AD: the ad must be a map of attribute to expression", "BAD_REQUEST")
        try:
            self.store.update(ad_type, wire, private)
        except UserError as exc:
            raise CommandError(f"UPDATE_AD: bad ad from {req.identity}: {exc}", "BAD_AD") from None
        self.updates += 1
        return "ok"

    async def cmd_invalidate(self, req: Request) -> int:
        return self.store.invalidate(str(req.require("ad_type")), str(req.require("name")))

    def _constraint(self, req: Request):  # noqa: ANN202 - Expr | None
        text = req.arg("constraint")
        if not text:
            return None
        try:
            return parse_expr(str(text))
        except UserError as exc:
            raise CommandError(f"bad constraint: {exc}", "BAD_CONSTRAINT") from None

    async def cmd_query(self, req: Request) -> list[dict[str, str]]:
        constraint = self._constraint(req)
        projection = req.arg("projection")
        limit = int(req.arg("limit") or 0)
        batch: list[dict[str, str]] = []
        sent = 0
        for entry in self.store.query(str(req.require("ad_type")), constraint):
            batch.append(project(entry.wire, projection))
            sent += 1
            if limit and sent >= limit:
                break
            if len(batch) >= CHUNK:
                await req.send_partial(batch)
                batch = []
        return batch

    async def cmd_query_private(self, req: Request) -> list[dict[str, Any]]:
        constraint = self._constraint(req)
        return [{"name": e.ad.get_value("Name"), "private": e.private}
                for e in self.store.query(str(req.require("ad_type")), constraint) if e.private]
