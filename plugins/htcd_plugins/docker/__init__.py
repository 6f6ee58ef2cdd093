"""The docker universe plugin (``universe = docker``): see universe.py; engine.py is its client
of the Docker Engine API."""

from __future__ import annotations

from htcd.hookspecs import hookimpl
from htcd.universe import UniverseRegistry

from .universe import DockerUniverse


@hookimpl
def htcd_register_universes(registry: UniverseRegistry) -> None:
    registry.add("docker", DockerUniverse)
