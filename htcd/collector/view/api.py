"""The pool view's JSON API, under ``/view/api/`` of the collector's HTTP endpoint:

- ``series?name=NAME&range=day|week|month|year`` (or ``&start=S&end=E``; ``&keys=K1,K2`` for only
  some keys): one series over time;
- ``series_list``: the series kept, their keys, the sampling interval, the time span held and
  what the last sample cost (``last_sample``);
- ``now``: the pool at a glance from the collector's live ads.

Errors are JSON: 400 ``{"error": ...}`` for a bad name or range, 404 for an unknown route.
"""

from __future__ import annotations

import json
import time
from typing import Any

from htcd.collector.view import sampler
from htcd.collector.view.history import PoolHistory
from htcd.collector.view.store import RANGES

JSON = "application/json"


def _answer(status: int, body: Any) -> tuple[int, str, bytes]:
    return status, JSON, json.dumps(body, separators=(",", ":")).encode()


def _error(status: int, text: str) -> tuple[int, str, bytes]:
    return _answer(status, {"error": text})


def _one(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[-1].strip() if values else None


def time_range(query: dict[str, list[str]], now: float) -> tuple[int, int]:
    """(start, end) from ``range`` or ``start``/``end``; ValueError says what is wrong."""
    start_text, end_text = _one(query, "start"), _one(query, "end")
    if start_text is not None or end_text is not None:
        try:
            end = int(float(end_text)) if end_text else int(now)
            start = int(float(start_text)) if start_text else end - RANGES["day"]
        except ValueError:
            raise ValueError(f"start and end must be Unix times in seconds, not {start_text!r} and "
                             f"{end_text!r}") from None
        if start >= end:
            raise ValueError(f"start ({start}) must be before end ({end})")
        return start, end
    name = _one(query, "range") or "day"
    span = RANGES.get(name)
    if span is None:
        raise ValueError(f"unknown range {name!r}; known: {', '.join(RANGES)} (or start=S&end=E)")
    return int(now) - span, int(now)


async def handle(history: PoolHistory, collector: Any, route: str,
                 query: dict[str, list[str]]) -> tuple[int, str, bytes]:
    """(status, content type, body) of ``/view/api/<route>``."""
    if route == "series":
        name = _one(query, "name")
        if not name:
            return _error(400, f"name is required; known series: {', '.join(sampler.SERIES)}")
        if name not in sampler.SERIES:
            return _error(400, f"unknown series {name!r}; known: {', '.join(sampler.SERIES)}")
        try:
            start, end = time_range(query, time.time())
        except ValueError as exc:
            return _error(400, str(exc))
        keys = None
        if "keys" in query:  # only these keys (comma-separated): a page showing one user of many
            keys = [k.strip() for text in query["keys"] for k in text.split(",") if k.strip()]
            known = set((await history.run(history.store.names)).get(name, []))
            unknown = [k for k in keys if k not in known]
            if unknown:
                return _error(400, f"series {name} has no key {', '.join(map(repr, unknown[:5]))}; see "
                                   "/view/api/series_list")
        body = await history.series_json(name, start, end, keys)
        if body is None:  # a known name not sampled yet: an empty series
            return _answer(200, {"name": name, "start": start, "end": end, "step": history.interval, "t": [],
                                 "columns": {}, "stats": {}})
        return 200, JSON, body
    if route == "series_list":
        names = await history.run(history.store.names)
        oldest, newest = await history.run(history.store.span)
        return _answer(200, {"series": {n: names.get(n, []) for n in sampler.SERIES}, "interval": history.interval,
                             "oldest": oldest, "newest": newest, "last_sample": history.last_sample()})
    if route == "now":
        glance = (await history.reduce(collector.store))[0].glance
        return _answer(200, glance.to_json())
    return _error(404, f"no such API {route!r}; try series, series_list or now")
