"""Plugins: built-ins register through the entry-point group; broken ones are disabled."""

from __future__ import annotations

import importlib.metadata
import logging

from htcd.hookspecs import hookimpl
from htcd.plugins import PluginManager


def test_vanilla_registers_through_the_entry_point_group() -> None:
    names = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="htcd")}
    assert names.get("vanilla") == "htcd_plugins.vanilla"
    pm = PluginManager().load_entry_points()
    assert "vanilla" in pm.universes()


class Broken:
    @hookimpl
    def htcd_register_universes(self, registry) -> None:  # noqa: ANN001
        registry.add("half", object)
        raise RuntimeError("plugin bug")

    @hookimpl
    def htcd_machine_attributes(self, config) -> None:  # noqa: ANN001
        raise ValueError("also broken")


class Good:
    @hookimpl
    def htcd_machine_attributes(self, config) -> dict:  # noqa: ANN001
        return {"HasThing": True}


def test_broken_plugin_is_disabled_and_others_work(caplog) -> None:  # noqa: ANN001
    pm = PluginManager(logging.getLogger("test-plugins")).load_entry_points()
    pm.register(Broken(), "broken")
    pm.register(Good(), "good")
    with caplog.at_level(logging.ERROR):
        universes = pm.universes()
        attrs = pm.machine_attributes(None)
    assert "vanilla" in universes and "half" not in universes, "a failing plugin's registrations are undone"
    assert "broken" in pm.disabled and "plugin bug" in pm.disabled["broken"]
    assert attrs == {"HasThing": True}
    assert "plugin broken disabled" in caplog.text


def test_unloadable_entry_point_is_disabled(pool_dir, monkeypatch) -> None:  # noqa: ANN001
    """A real installed distribution whose entry point names a module that does not exist."""
    dist = pool_dir / "ghost_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ghost-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[htcd]\nghost = no_such_module_xyz\n")
    monkeypatch.syspath_prepend(str(pool_dir))
    pm = PluginManager().load_entry_points()
    assert "ghost" in pm.disabled and "no_such_module_xyz" in pm.disabled["ghost"]
    assert "vanilla" in pm.universes()


class Templates:
    @hookimpl
    def htcd_config_templates(self) -> list:
        return [("POLICY", "Test_Only_Plugin", "START = $(1:TRUE) && KeyboardIdle > 0\n")]


def test_plugin_templates_are_fetched_only_when_needed(pool_dir) -> None:  # noqa: ANN001
    from htcd import config

    calls = []

    def provider() -> None:
        calls.append(1)
        pm = PluginManager()
        pm.register(Templates(), "templates")
        pm.register_config_templates()

    top = pool_dir / "cfg"
    top.write_text("use POLICY : Always_Run_Jobs\n")
    config.set_template_provider(provider)
    try:
        assert config.load("STARTD", env={"HTCD_CONFIG": str(top)}).get("START")
        assert calls == [], "shipped templates need no plugins"
        top.write_text("use POLICY : Test_Only_Plugin(Cpus > 0)\n")
        assert config.load("STARTD", env={"HTCD_CONFIG": str(top)}).get("START") == "Cpus > 0 && KeyboardIdle > 0"
        assert calls == [1]
    finally:
        config.set_template_provider(None)
