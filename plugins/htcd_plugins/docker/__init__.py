"""The docker universe plugin (``universe = docker``): see universe.py; engine.py is its client
of the Docker Engine API."""

from __future__ import annotations

from htcd.hookspecs import hookimpl

from .universe import DockerUniverse


@hookimpl
def htcd_register_universes(registry) -> None:  # noqa: ANN001 - UniverseRegistry
    registry.add("docker", DockerUniverse)
