"""A small client of the Docker Engine API: plain HTTP/1.1 on the engine's socket (stdlib only).

Dockerd and Podman's compatible service (``podman system service``) speak the same API; paths
are unversioned so that each engine answers in its own default version.  Every call opens its
own connection, so calls may come from any thread; none is made from the startd's event loop
except through a worker thread.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import struct
import urllib.parse
from collections.abc import Iterator
from typing import Any

DEFAULT_ENDPOINT = "unix:///var/run/docker.sock"


class EngineError(Exception):
    """The engine refused a call (``status`` is its HTTP status) or could not be reached (0)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float | None) -> None:
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.unix_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class Engine:
    """The engine at ``endpoint``: ``unix:///path/docker.sock``, a bare socket path, or
    ``tcp://host:port`` (plain HTTP, for an engine on a trusted loopback only)."""

    def __init__(self, endpoint: str = DEFAULT_ENDPOINT, timeout: float = 30.0) -> None:
        self.endpoint = endpoint.strip() or DEFAULT_ENDPOINT
        self.timeout = timeout

    def _connection(self, timeout: float | None) -> http.client.HTTPConnection:
        ep = self.endpoint
        if ep.startswith("unix://"):
            return _UnixConnection(ep[len("unix://"):], timeout)
        if ep.startswith("/"):
            return _UnixConnection(ep, timeout)
        if ep.startswith(("tcp://", "http://")):
            hostport = ep.split("://", 1)[1].rstrip("/")
            return http.client.HTTPConnection(hostport, timeout=timeout)
        raise EngineError(0, f"the Docker endpoint {ep!r} is neither unix:///path nor tcp://host:port")

    def call(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None,
             timeout: float | None = -1.0, raw: bytes | None = None) -> bytes:
        """One API call; the response body.  ``timeout`` None waits for ever (container wait)."""
        if query:
            path += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
        headers = {"Host": "docker"}
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn = self._connection(self.timeout if timeout == -1.0 else timeout)
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            payload = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            raise EngineError(0, f"cannot reach the Docker engine at {self.endpoint}: "
                                 f"{getattr(exc, 'strerror', None) or exc}") from None
        finally:
            conn.close()
        if resp.status >= 400:
            raise EngineError(resp.status, _message(payload) or f"HTTP {resp.status} {resp.reason}")
        return payload

    def json(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None,
             timeout: float | None = -1.0) -> Any:
        payload = self.call(method, path, body, query, timeout)
        return json.loads(payload) if payload.strip() else None

    # -- what the universe uses ------------------------------------------------------------
    def version(self) -> dict[str, Any]:
        return self.json("GET", "/version", timeout=min(self.timeout, 5.0))

    def images(self) -> list[dict[str, Any]]:
        return self.json("GET", "/images/json") or []

    def has_image(self, image: str) -> bool:
        try:
            self.call("GET", f"/images/{urllib.parse.quote(image, safe='/:@')}/json")
        except EngineError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def pull(self, image: str) -> None:
        """Pull ``image``; the engine reports a failed pull inside a 200 response's JSON stream."""
        name, tag = split_image(image)
        payload = self.call("POST", "/images/create", query={"fromImage": name, "tag": tag}, timeout=None)
        for line in payload.splitlines():
            with contextlib.suppress(ValueError):
                msg = json.loads(line)
                if isinstance(msg, dict) and msg.get("error"):
                    raise EngineError(500, str(msg["error"]).strip())

    def containers(self, labels: dict[str, str]) -> list[dict[str, Any]]:
        filters = json.dumps({"label": [f"{k}={v}" for k, v in labels.items()]})
        return self.json("GET", "/containers/json", query={"all": 1, "filters": filters}) or []

    def logs(self, cid: str) -> Iterator[tuple[int, bytes]]:
        """(stream, bytes) frames of a stopped container's output: 1 stdout, 2 stderr."""
        payload = self.call("GET", f"/containers/{cid}/logs", query={"stdout": 1, "stderr": 1}, timeout=None)
        yield from demux(payload)


def demux(payload: bytes) -> Iterator[tuple[int, bytes]]:
    """The engine's multiplexed log format: 8-byte headers (stream, 0, 0, 0, big-endian size)."""
    i = 0
    while i + 8 <= len(payload):
        stream, size = payload[i], struct.unpack(">I", payload[i + 4:i + 8])[0]
        yield stream, payload[i + 8:i + 8 + size]
        i += 8 + size


def split_image(image: str) -> tuple[str, str | None]:
    """``repo[:tag][@digest]`` -> (repo, tag or digest or "latest"); a registry's port is not a tag."""
    if "@" in image:
        name, digest = image.split("@", 1)
        return name, digest
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        return image[:colon], image[colon + 1:]
    return image, "latest"


def _message(payload: bytes) -> str:
    try:
        doc = json.loads(payload)
    except ValueError:
        return payload.decode(errors="replace").strip()
    return str(doc.get("message", "")).strip() if isinstance(doc, dict) else str(doc)

