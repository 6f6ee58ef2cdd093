"""The htcd plugin API.  These docstrings are its documentation.

Plugins are Python modules or objects with functions marked ``@hookimpl`` and named after the
hooks below.  They are found through the ``htcd`` entry-point group, the built-in ones
included, so a third-party plugin is registered exactly like ``htcd_plugins.vanilla``::

    [project.entry-points.htcd]
    myuniverse = "my_package.my_module"

A plugin may import only ``htcd.hookspecs``, ``htcd.universe`` and ``htcd.classad``.  A plugin
that fails to import, or raises from a hook, is logged and disabled; the daemon goes on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from htcd.universe import UniverseRegistry

PROJECT = "htcd"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def htcd_register_universes(registry: UniverseRegistry) -> None:
    """Register job universes with ``registry.add(name, factory)``.

    ``factory()`` returns a :class:`htcd.universe.Universe`.  Called once when the startd (or the
    schedd, for universes that run on the access point) starts.  A name registered twice is
    an error reported against the second plugin, which is then disabled.
    """


@hookspec
def htcd_machine_attributes(config: object) -> dict[str, object] | None:
    """Extra attributes for every slot ad of this machine (for example HasDocker).

    ``config`` is the daemon's :class:`htcd.config.Config`.  Return a mapping of attribute name
    to a Python value (int, float, str, bool, list) or None.  Called at start-up and on every
    ad update, so keep it cheap or cache inside the plugin.
    """


@hookspec
def htcd_config_templates() -> list[tuple[str, str, str]] | None:
    """Metaknob templates this plugin adds, as ``(category, name, text)`` tuples.

    ``text`` is config language; ``$(1)``, ``$(2)``... are the arguments of
    ``use CATEGORY : name(arg1, arg2)``.  htcd asks for these only when a ``use`` line names
    a template it does not ship, so plugins cost nothing to configs that do not use them.
    Replacing a shipped template is refused (the plugin is then disabled).
    """
