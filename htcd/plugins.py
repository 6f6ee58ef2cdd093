"""The plugin manager: loads plugins of the ``htcd`` entry-point group, disabling broken ones."""

from __future__ import annotations

import importlib.metadata
import logging
import re
from typing import Any

import pluggy

from htcd import hookspecs
from htcd.universe import Universe, UniverseRegistry

_log = logging.getLogger("htcd.plugins")
_ATTR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class PluginManager:
    def __init__(self, log: logging.Logger | None = None, blocked: set[str] | None = None) -> None:
        self.log = log or _log
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.disabled: dict[str, str] = {}
        self.blocked = {b.lower() for b in (blocked or set())}

    def load_entry_points(self) -> PluginManager:
        for ep in importlib.metadata.entry_points(group=hookspecs.PROJECT):
            if ep.name.lower() in self.blocked:
                self.log.info("plugin %s is blocked by config", ep.name)
                continue
            try:
                self.register(ep.load(), ep.name)
            except Exception as exc:  # a broken plugin must not take the daemon down
                self._disable(ep.name, f"cannot load {ep.value}: {exc!r}")
        return self

    def register(self, plugin: Any, name: str) -> None:
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:
            self._disable(name, f"cannot register: {exc!r}")

    def _disable(self, name: str, why: str) -> None:
        self.disabled[name] = why
        self.log.error("plugin %s disabled: %s", name, why)
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin)

    def _call_each(self, hook: str, undo: Any = None, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call ``hook`` plugin by plugin, so that one that raises is disabled (and its partial
        effect undone by ``undo``, a context returning a restore function) and the others run."""
        results = []
        for impl in list(getattr(self.pm.hook, hook).get_hookimpls()):
            restore = undo() if undo else None
            try:
                results.append((impl.plugin_name, impl.function(**kwargs)))
            except Exception as exc:
                if restore:
                    restore()
                self._disable(impl.plugin_name, f"{hook} raised {exc!r}")
        return results

    def universes(self) -> dict[str, Universe]:
        """One instance of every registered universe that starts."""
        registry = UniverseRegistry()

        def snapshot() -> Any:
            before = dict(registry.factories)
            return lambda: setattr(registry, "factories", before)

        self._call_each("htcd_register_universes", undo=snapshot, registry=registry)
        found: dict[str, Universe] = {}
        for uname, factory in registry.factories.items():
            try:
                found[uname] = factory()
            except Exception as exc:
                self.log.error("universe %s failed to start and is not offered: %r", uname, exc)
        return found

    def register_config_templates(self) -> int:
        """Give every plugin's metaknob templates to the config language."""
        from htcd.config import register_templates

        count = 0
        for name, result in self._call_each("htcd_config_templates"):
            try:
                for category, template, text in result or []:
                    register_templates(category, template, text)
                    count += 1
            except (ValueError, TypeError) as exc:
                self._disable(name, f"bad config template: {exc}")
        return count

    def machine_attributes(self, config: object) -> dict[str, object]:
        """Every provider's attributes (name -> value); a provider that raises or returns
        something that is not a mapping of names to ClassAd values is disabled."""
        from htcd.classad.expr import literal

        attrs: dict[str, object] = {}
        for name, result in self._call_each("htcd_machine_attributes", config=config):
            if result is None:
                continue
            if not isinstance(result, dict):
                self._disable(name, f"htcd_machine_attributes returned a {type(result).__name__}, not a mapping")
                continue
            try:
                checked = {}
                for key, value in result.items():
                    if not isinstance(key, str) or not _ATTR_NAME.fullmatch(key):
                        raise ValueError(f"{key!r} is not a ClassAd attribute name")
                    literal(value)  # raises if it is no ClassAd value
                    checked[key] = value
            except Exception as exc:
                self._disable(name, f"htcd_machine_attributes returned a bad attribute: {exc}")
                continue
            attrs.update(checked)
        return attrs

    def transfer_plugins(self) -> dict[str, Any]:
        """Every plugin's URL schemes: {scheme: fetch callable}; the first registration of a
        scheme wins, and a plugin whose answer is not a mapping of schemes to callables is
        disabled."""
        found: dict[str, Any] = {}
        for name, result in self._call_each("htcd_transfer_plugins"):
            if result is None:
                continue
            try:
                if not isinstance(result, dict):
                    raise TypeError(f"returned a {type(result).__name__}, not a mapping")
                mine = {}
                for scheme, fetch in result.items():
                    if not isinstance(scheme, str) or not re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme.lower()):
                        raise ValueError(f"{scheme!r} is not a URL scheme")
                    if isinstance(fetch, type):
                        fetch = fetch()
                    if not callable(fetch):
                        raise TypeError(f"the plugin for {scheme} is not callable")
                    mine[scheme.lower()] = fetch
            except Exception as exc:
                self._disable(name, f"htcd_transfer_plugins: {exc}")
                continue
            for scheme, fetch in mine.items():
                found.setdefault(scheme, fetch)
        return found
