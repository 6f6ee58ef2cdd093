"""Plugins: built-ins register through the entry-point group; broken ones are disabled; pluggy's
contract (fewer arguments, unknown hooks refused); blocking; one manager per process."""

from __future__ import annotations

import importlib.metadata
import logging
from collections.abc import Iterator

import pytest

from htcd.hookspecs import hookimpl
from htcd.plugins import PluginManager, blocked_names, get_plugin_manager, reset_plugin_manager


def test_vanilla_registers_through_the_entry_point_group() -> None:
    names = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="htcd")}
    assert names.get("vanilla") == "htcd_plugins.vanilla"
    pm = PluginManager().load_entry_points()
    assert "vanilla" in pm.universes()


class Broken:
    @hookimpl
    def htcd_register_universes(self, registry) -> None:
        registry.add("half", object)
        raise RuntimeError("plugin bug")

    @hookimpl
    def htcd_machine_attributes(self, config) -> None:
        raise ValueError("also broken")


class Good:
    @hookimpl
    def htcd_machine_attributes(self, config) -> dict:
        return {"HasThing": True}


def test_broken_plugin_is_disabled_and_others_work(caplog) -> None:
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


def test_unloadable_entry_point_is_disabled(pool_dir, monkeypatch) -> None:
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


def test_plugin_templates_are_fetched_only_when_needed(pool_dir) -> None:
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


class FewerArguments:
    """pluggy lets an implementation declare a subset of its hookspec's arguments."""

    @hookimpl
    def htcd_machine_attributes(self) -> dict:
        return {"HasFewer": True}

    @hookimpl
    def htcd_register_universes(self) -> None:
        FewerArguments.called = True


def test_an_implementation_gets_only_the_arguments_it_declares() -> None:
    pm = PluginManager()
    pm.register(FewerArguments(), "fewer")
    pm.register(Good(), "good")
    assert pm.machine_attributes(config=object()) == {"HasFewer": True, "HasThing": True}
    pm.universes()
    assert FewerArguments.called
    assert pm.disabled == {}
    assert pm.hooks_of("fewer") == ["htcd_machine_attributes", "htcd_register_universes"]


class Misspelled:
    @hookimpl
    def htcd_register_universe(self, registry) -> None:  # no such hook: universes
        raise AssertionError("never called")


def test_a_misspelled_hook_disables_its_plugin_with_the_hook_named(caplog) -> None:
    pm = PluginManager()
    with caplog.at_level(logging.ERROR):
        pm.register(Misspelled(), "typo")
        pm.register(Good(), "good")
    assert "htcd_register_universe" in pm.disabled["typo"] and "unknown hook" in pm.disabled["typo"]
    assert "plugin typo disabled: unknown hook htcd_register_universe" in caplog.text
    assert pm.pm.get_plugin("typo") is None
    assert "good" not in pm.disabled and pm.machine_attributes(None) == {"HasThing": True}
    info = {p.name: p for p in pm.plugins()}
    assert info["typo"].hooks == ["htcd_register_universe"] and info["typo"].disabled


class OldWrapper:
    @hookimpl(hookwrapper=True)
    def htcd_machine_attributes(self, config):
        yield


class NewWrapper:
    @hookimpl(wrapper=True)
    def htcd_register_universes(self, registry):
        return (yield)


def test_hook_wrappers_are_refused_clearly() -> None:
    pm = PluginManager()
    pm.register(OldWrapper(), "old")
    pm.register(NewWrapper(), "new")
    pm.register(Good(), "good")
    assert "htcd_machine_attributes is a hook wrapper" in pm.disabled["old"]
    assert "htcd_register_universes is a hook wrapper" in pm.disabled["new"]
    assert pm.machine_attributes(None) == {"HasThing": True}


COUNTING_PLUGIN = """
from htcd.hookspecs import hookimpl

@hookimpl
def htcd_machine_attributes():
    return {"HasCounting": True}
"""


def install(site, module: str, text: str, entry: str) -> None:
    """A module and a distribution declaring it in the ``htcd`` group, as pip installs them."""
    (site / f"{module}.py").write_text(text)
    dist = site / f"{module}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[htcd]\n{entry} = {module}\n")


def test_a_blocked_plugin_is_not_loaded(pool_dir, monkeypatch) -> None:
    import sys

    install(pool_dir, "counting_plugin_xyz", COUNTING_PLUGIN, "Counting")
    monkeypatch.syspath_prepend(str(pool_dir))
    pm = PluginManager(blocked={"counting"}).load_entry_points()
    assert "counting_plugin_xyz" not in sys.modules, "a blocked plugin is not even imported"
    assert pm.machine_attributes(None) == {}
    info = {p.name: p for p in pm.plugins()}
    assert info["Counting"].blocked and info["Counting"].dist == "counting-plugin-xyz"
    assert not info["vanilla"].blocked and "vanilla" in pm.universes()

    unblocked = PluginManager().load_entry_points()
    assert unblocked.machine_attributes(None) == {"HasCounting": True}, "the plugin itself works"
    unblocked.block({"COUNTING"})  # a config read later blocks it too: pluggy unregisters it
    assert unblocked.machine_attributes(None) == {}
    sys.modules.pop("counting_plugin_xyz", None)


@pytest.fixture
def fresh_manager() -> Iterator[None]:
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def test_one_manager_per_process_blocked_by_the_knob(pool_dir, monkeypatch, fresh_manager) -> None:
    import sys

    from htcd import config

    install(pool_dir, "counting_plugin_xyz", COUNTING_PLUGIN, "counting")
    monkeypatch.syspath_prepend(str(pool_dir))
    (pool_dir / "cfg").write_text("PLUGINS_BLOCKED = transfer_http, counting\n")
    cfg = config.load("STARTD", env={"HTCD_CONFIG": str(pool_dir / "cfg")})
    pm = get_plugin_manager(cfg)
    assert get_plugin_manager() is pm and get_plugin_manager(cfg) is pm
    assert "counting_plugin_xyz" not in sys.modules
    assert set(pm.transfer_plugins()) == {"file"}, "transfer_http is blocked"
    assert {p.name for p in pm.plugins() if p.blocked} == {"counting", "transfer_http"}


def test_the_environment_blocks_before_the_config_is_read(monkeypatch, fresh_manager) -> None:
    monkeypatch.setenv("_HTCD_PLUGINS_BLOCKED", "docker vanilla simulated")
    pm = get_plugin_manager()
    assert set(pm.universes()) == set()
    assert {p.name for p in pm.plugins() if p.blocked} == {"docker", "vanilla", "simulated"}


def test_blocked_names() -> None:
    assert blocked_names(" a,B  c,,d ") == {"a", "b", "c", "d"}
    assert blocked_names(None) == set() == blocked_names("")


def test_each_broken_entry_point_is_disabled_for_its_own_fault(pool_dir, monkeypatch) -> None:
    """pluggy's loader stops at the first failure; the others still load, and each unknown hook
    is charged to the plugin that names it."""
    import sys

    typo = "from htcd.hookspecs import hookimpl\n\n@hookimpl\ndef htcd_{}(): pass\n"
    install(pool_dir, "aa_typo_xyz", typo.format("machine_attribute"), "aa_typo")
    install(pool_dir, "ab_ghost_xyz", "raise ImportError('half installed')\n", "ab_ghost")
    install(pool_dir, "ac_typo_xyz", typo.format("transfer_plugin"), "ac_typo")
    install(pool_dir, "counting_plugin_xyz", COUNTING_PLUGIN, "counting")
    monkeypatch.syspath_prepend(str(pool_dir))
    try:
        pm = PluginManager().load_entry_points()
    finally:
        for module in ("aa_typo_xyz", "ab_ghost_xyz", "ac_typo_xyz", "counting_plugin_xyz"):
            sys.modules.pop(module, None)
    assert pm.disabled["aa_typo"].startswith("unknown hook htcd_machine_attribute:")
    assert pm.disabled["ac_typo"].startswith("unknown hook htcd_transfer_plugin:")
    assert "half installed" in pm.disabled["ab_ghost"]
    assert set(pm.disabled) == {"aa_typo", "ab_ghost", "ac_typo"}
    assert pm.machine_attributes(None) == {"HasCounting": True}
    assert "vanilla" in pm.universes() and "file" in pm.transfer_plugins()
