"""The layer rule of docs/architecture.md holds for every module of htcd and htcd_plugins."""

from __future__ import annotations

import ast

import pytest
from layering import Import, import_cycles, module_files, project_imports, report, violation, violations


def test_no_module_breaks_the_layer_rule() -> None:
    found = violations()
    assert not found, "layer violations (module -> imported (rule)):\n" + "\n".join(map(str, found))


def test_no_import_cycle_that_runs() -> None:
    """No two modules need each other, at load time or in a function (TYPE_CHECKING imports of a
    holder's class by its collaborators are for the checker only, and allowed)."""
    print(report())  # shown with -s, and on failure: the cycles with TYPE_CHECKING imports too
    cycles = import_cycles("run")
    assert not cycles, "modules importing each other:\n" + "\n".join(" <-> ".join(group) for group in cycles)


def test_the_checker_sees_every_kind_of_import() -> None:
    """Function-level, TYPE_CHECKING and relative imports are all found: a checker that missed
    them would pass on code that breaks the rule."""
    files = module_files()
    assert "htcd.wire.server" in files and "htcd_plugins.vanilla" in files and "htcd" in files
    found = {(i.module, i.target, i.deferred) for i in project_imports()}
    # ``if TYPE_CHECKING: from htcd.universe import UniverseRegistry`` in hookspecs
    assert ("htcd.hookspecs", "htcd.universe", True) in found
    # ``from .universe import DockerUniverse`` in the docker plugin package
    assert ("htcd_plugins.docker", "htcd_plugins.docker.universe", False) in found
    # ``from htcd.cli.main import main`` in htcd/__main__.py, a submodule resolved as one
    assert ("htcd.__main__", "htcd.cli.main", False) in found
    assert any(deferred and not module.startswith("htcd.classad") for module, _, deferred in found)


@pytest.mark.parametrize(("module", "target", "broken"), [
    ("htcd.wire.server", "htcd.daemon.log", "wire imports runtime"),
    ("htcd.schedd.local", "htcd.starter.starter", "daemons never import each other"),
    ("htcd.startd.claims", "htcd.starter.starter", None),  # the startd runs the starter as a task
    ("htcd.collector.daemon", "htcd.schedd.queue", "daemons never import each other"),
    ("htcd.schedd.daemon", "htcd.cli.common", "nothing imports htcd.cli"),
    ("htcd.__main__", "htcd.cli.main", None),
    ("htcd.client.schedd", "htcd.daemon.core", "beside the daemon core"),
    ("htcd.client.schedd", "htcd.wire.client", None),
    ("htcd.cli.q", "htcd.wire.client", "through htcd.client"),
    ("htcd.cli.q", "htcd.client.schedd", None),
    ("htcd.client.schedd", "htcd.schedd.jobs", "client imports daemon"),
    ("htcd.classad.ad", "htcd.config", None),
    ("htcd.config._core", "htcd.wire.address", "language imports wire"),
    ("htcd.debug", "htcd.errors", "base imports language"),
    ("htcd_plugins.vanilla", "htcd.universe", None),
    ("htcd_plugins.vanilla", "htcd.starter.monitor", "plugins import only"),
    ("htcd.startd.daemon", "htcd_plugins.vanilla", "never by import"),
    ("htcd.api.schedd", "htcd.client.schedd", None),
    ("htcd.api.submit", "htcd.submit.description", None),
    ("htcd.api.schedd", "htcd.wire.address", None),
    ("htcd.api.schedd", "htcd.wire.client", "htcd.api talks to daemons through htcd.client"),
    ("htcd.api.schedd", "htcd.schedd.history", "api imports daemon"),
    ("htcd.api.schedd", "htcd.cli.common", "nothing imports htcd.cli"),
    ("htcd.cli.q", "htcd.api.classad", None),
    ("htcd.client.schedd", "htcd.api.classad", "nothing imports htcd.api but htcd.cli"),
    ("htcd.schedd.daemon", "htcd.api", "nothing imports htcd.api but htcd.cli"),
    ("htcd_plugins.vanilla", "htcd.api", "plugins import only"),
])
def test_each_rule(module: str, target: str, broken: str | None) -> None:
    found = violation(Import(module, target, 1, False))
    assert (found is None) == (broken is None), found
    if found is not None and broken is not None:
        assert broken in found.rule, found.rule
        assert str(found) == f"{module} -> {target} ({found.rule})"


def test_a_violation_in_a_function_is_found() -> None:
    from layering import _imports_in

    tree = ast.parse("def f():\n    from htcd.daemon.log import dprintf\n"
                     "if TYPE_CHECKING:\n    from ..schedd import jobs\n")
    found = list(_imports_in(tree, "htcd.wire.server", False, {"htcd.daemon.log", "htcd.schedd.jobs"}))
    assert [(i.target, i.deferred) for i in found] == [("htcd.daemon.log", True), ("htcd.schedd.jobs", True)]
    assert violation(found[0]) is not None and violation(found[1]) is not None


def test_private_names() -> None:
    private = violation(Import("htcd.cli.history", "htcd.cli.q", 1, True, "_constraint"))
    assert private is not None and str(private) == \
        "htcd.cli.history -> htcd.cli.q._constraint (a private name stays in its module)"
    assert violation(Import("htcd.cli.history", "htcd.cli.common", 1, True, "job_constraint")) is None
    assert violation(Import("htcd.daemon.core", "htcd", 1, False, "__version__")) is None
