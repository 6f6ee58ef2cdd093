"""The plugin manager: loads plugins of the ``htcd`` entry-point group, disabling broken ones.

One manager per process (:func:`get_plugin_manager`), so the startd, its starters' file
transfers, the schedd's local universe and the tools load each plugin once.  Plugins follow
pluggy's contract: an implementation may declare fewer arguments than its hookspec (so a hook
can gain arguments without breaking existing plugins), and a misspelled hook name is an error.
What htcd adds is that a broken plugin -- one that fails to load, names an unknown hook, wraps
a hook, or raises -- is disabled with its reason, and the others go on.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
from dataclasses import dataclass, field
from typing import Any

import pluggy

from htcd import hookspecs
from htcd.universe import Universe, UniverseRegistry

_log = logging.getLogger("htcd.plugins")
_ATTR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
BLOCKED_KNOB = "PLUGINS_BLOCKED"


def blocked_names(text: str | None) -> set[str]:
    """The plugin names of a ``PLUGINS_BLOCKED`` value (comma and/or space separated), lower case."""
    return {word.lower() for word in re.split(r"[\s,]+", text or "") if word}


@dataclass
class PluginInfo:
    """What ``htcd plugins`` shows of one plugin: where it comes from and whether it runs."""

    name: str
    value: str = ""  # the entry point's target, "module" or "module:attr"
    dist: str = ""  # the distribution (package) that declares it
    version: str = ""
    hooks: list[str] = field(default_factory=list)
    blocked: bool = False
    disabled: str | None = None  # why it was disabled, None while it runs

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "entry_point": self.value, "distribution": self.dist,
                "version": self.version, "hooks": self.hooks, "blocked": self.blocked,
                "disabled": self.disabled}


class PluginManager:
    def __init__(self, log: logging.Logger | None = None, blocked: set[str] | None = None) -> None:
        self.log = log or _log
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.disabled: dict[str, str] = {}
        self.info: dict[str, PluginInfo] = {}
        self.blocked: set[str] = set()
        self.loaded = False
        self.block(blocked or set())

    def block(self, names: set[str]) -> None:
        """Block plugins by name, case-insensitive: those not loaded yet never are, those loaded
        are unregistered.  pluggy's ``set_blocked`` takes exact names, so it is given every
        known name that matches."""
        wanted = {n.lower() for n in names}
        if not wanted:
            return
        self.blocked |= wanted
        known = {name for name, _ in self.pm.list_name_plugin()} | set(self.info)
        known |= {ep.name for ep in importlib.metadata.entry_points(group=hookspecs.PROJECT)}
        for name in sorted(known | wanted):
            if name.lower() in wanted and not self.pm.is_blocked(name):
                if self.pm.get_plugin(name) is not None:
                    self.log.info("plugin %s is blocked by %s", name, BLOCKED_KNOB)
                self.pm.set_blocked(name)
                if name in self.info:
                    self.info[name].blocked = True

    def load_entry_points(self) -> PluginManager:
        """Load every plugin of the ``htcd`` entry-point group once (later calls do nothing).

        pluggy's loader stops at the first entry point that fails to import or register, so when
        one does, the rest are loaded one entry point at a time: the broken one is disabled and
        the others load."""
        if self.loaded:
            return self
        self.loaded = True
        eps = []
        for ep in importlib.metadata.entry_points(group=hookspecs.PROJECT):
            if ep.name in self.info:  # a second distribution with the same name: pluggy keeps the first
                continue
            eps.append(ep)
            dist = getattr(ep, "dist", None)
            self.info[ep.name] = PluginInfo(ep.name, ep.value, dist.name if dist else "",
                                            dist.version if dist else "")
            if ep.name.lower() in self.blocked or self.pm.is_blocked(ep.name):
                self.info[ep.name].blocked = True
                self.pm.set_blocked(ep.name)
                self.log.info("plugin %s is blocked by %s", ep.name, BLOCKED_KNOB)
        try:
            self.pm.load_setuptools_entrypoints(hookspecs.PROJECT)
        except Exception:
            for ep in eps:
                if self.pm.get_plugin(ep.name) is not None or self.pm.is_blocked(ep.name):
                    continue
                try:
                    self.pm.load_setuptools_entrypoints(hookspecs.PROJECT, name=ep.name)
                except Exception as exc:  # a broken plugin must not take the daemon down
                    self._disable(ep.name, f"cannot load {ep.value}: {exc!r}")
        for ep in eps:
            self._refuse_wrappers(ep.name)
        self._refuse_unknown_hooks()
        return self

    def register(self, plugin: Any, name: str) -> None:
        """Register a plugin object directly (tests, embedding); checked like an entry point's."""
        self.info.setdefault(name, PluginInfo(name, getattr(plugin, "__name__", type(plugin).__name__)))
        if name.lower() in self.blocked:
            self.info[name].blocked = True
            return
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:
            self._disable(name, f"cannot register: {exc}")
            return
        self._refuse_wrappers(name)
        self._refuse_unknown_hooks()

    def _refuse_wrappers(self, name: str) -> None:
        """Disable a registered plugin that wraps a hook: each implementation is called on its own."""
        plugin = self.pm.get_plugin(name)
        for caller in (self.pm.get_hookcallers(plugin) or []) if plugin is not None else []:
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin and (impl.hookwrapper or impl.wrapper):
                    self._disable(name, f"{caller.name} is a hook wrapper; htcd calls each implementation on "
                                        "its own and does not support wrappers")
                    return

    def _refuse_unknown_hooks(self) -> None:
        """pluggy's check_pending: disable each plugin with an ``@hookimpl`` that names no hook."""
        while True:
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                name = self.pm.get_name(exc.plugin)
                if name is None:  # cannot happen: check_pending only sees registered plugins
                    raise
                unknown = sorted(c.name for c in self.pm.get_hookcallers(exc.plugin) or []
                                 if not c.has_spec() and any(not i.optionalhook for i in c.get_hookimpls()))
                self._disable(name, f"unknown hook {', '.join(unknown)}: htcd.hookspecs has no such hook "
                                    "(misspelled?)")

    def _disable(self, name: str, why: str) -> None:
        self.disabled[name] = why
        self.log.error("plugin %s disabled: %s", name, why)
        info = self.info.setdefault(name, PluginInfo(name))
        info.disabled = why
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            info.hooks = self.hooks_of(name) or info.hooks
            self.pm.unregister(plugin)

    def hooks_of(self, name: str) -> list[str]:
        """The hooks a registered plugin implements."""
        plugin = self.pm.get_plugin(name)
        if plugin is None:
            return []
        return sorted(c.name for c in self.pm.get_hookcallers(plugin) or [])

    def plugins(self) -> list[PluginInfo]:
        """Every plugin seen, loaded, blocked or disabled, by name."""
        for name in self.info:
            if self.pm.get_plugin(name) is not None:
                self.info[name].hooks = self.hooks_of(name)
        return [self.info[n] for n in sorted(self.info)]

    def _call_each(self, hook: str, undo: Any = None, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call ``hook`` plugin by plugin, so that one that raises is disabled (and its partial
        effect undone by ``undo``, a context returning a restore function) and the others run.
        Each implementation gets only the arguments it declares, as pluggy gives them."""
        results = []
        for impl in list(getattr(self.pm.hook, hook).get_hookimpls()):
            restore = undo() if undo else None
            try:
                args = {a: kwargs[a] for a in impl.argnames if a in kwargs}
                results.append((impl.plugin_name, impl.function(**args)))
            except Exception as exc:
                if restore:
                    restore()
                self._disable(impl.plugin_name, f"{hook} raised {exc!r}")
        return results

    def universe_names(self) -> list[str]:
        """The names of the registered universes, without starting any (what a submit may ask for)."""
        registry = UniverseRegistry()
        self._call_each("htcd_register_universes", registry=registry)
        return registry.names()

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


_MANAGER: PluginManager | None = None


def get_plugin_manager(config: Any = None, log: logging.Logger | None = None) -> PluginManager:
    """This process's plugin manager, its entry points loaded on first use.

    ``config`` (an :class:`htcd.config.Config`) gives ``PLUGINS_BLOCKED``; without one (a config
    file's ``use`` line asking for a plugin's template while the config is still being read)
    only the environment's ``_HTCD_PLUGINS_BLOCKED`` / ``_CONDOR_PLUGINS_BLOCKED`` is known,
    and a later call with the config blocks the rest.  ``log`` becomes the manager's log, so
    a daemon's plugin errors go to its own log file."""
    global _MANAGER
    if _MANAGER is None:
        env = os.environ.get(f"_HTCD_{BLOCKED_KNOB}") or os.environ.get(f"_CONDOR_{BLOCKED_KNOB}")
        _MANAGER = PluginManager(log, blocked_names(env))
    if log is not None:
        _MANAGER.log = log
    if config is not None:
        _MANAGER.block(blocked_names(config.get("PLUGINS_BLOCKED")))
    return _MANAGER.load_entry_points()


def reset_plugin_manager() -> None:
    """Forget this process's plugin manager (tests that change the installed plugins)."""
    global _MANAGER
    _MANAGER = None
