"""Helpers of the docker-universe tests: the engine the tests talk to, and a container's state."""

from __future__ import annotations

from pathlib import Path

from htcd_plugins.docker.engine import Engine, EngineError

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "dockerd.sh"
IMAGE = "localhost/htcd-busybox:latest"


class DockerEngine:
    """The engine the tests use: its endpoint, a client, and the directory it lives in."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.endpoint = f"unix://{directory}/docker.sock"
        self.api = Engine(self.endpoint)

    def containers(self, **labels: str) -> list[dict]:
        return self.api.containers(labels)

    def knobs(self) -> dict[str, str]:
        return {"DOCKER_HOST": self.endpoint}


def container_state(engine: DockerEngine, cid: str) -> dict | None:
    try:
        return engine.api.json("GET", f"/containers/{cid}/json")
    except EngineError as exc:
        if exc.status == 404:
            return None
        raise
