"""The htcd plugin API.  These docstrings are its documentation.

Plugins are Python modules or objects with functions marked ``@hookimpl`` and named after the
hooks below.  They are found through the ``htcd`` entry-point group, the built-in ones
included, so a third-party plugin is registered exactly like ``htcd_plugins.vanilla``::

    [project.entry-points.htcd]
    myuniverse = "my_package.my_module"

A plugin may import only ``htcd.hookspecs``, ``htcd.universe`` and ``htcd.classad``.  A plugin
that fails to import, or raises from a hook, is logged and disabled; the daemon goes on.

pluggy's contract holds: an implementation may declare only some of a hook's arguments and
gets just those (so a hook may gain arguments without breaking plugins), and an ``@hookimpl``
whose name is no hook below disables its plugin.  Hook wrappers are refused: every
implementation is called on its own.  ``PLUGINS_BLOCKED`` keeps plugins from loading, and
``htcd plugins`` lists them all with why any is disabled.  docs/plugins.md walks through a
complete plugin package and ``htcd.testing``, a pytest fixture that runs it on a real pool.
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
    """The attribute-provider hook: extra attributes for every slot ad of this machine, such as
    ``HasDocker``, ``DockerVersion`` or a GPU inventory (``TotalGPUs``, ``CUDADeviceName``).

    ``config`` is the startd's :class:`htcd.config.Config`.  Return a mapping of attribute name
    (a ClassAd identifier) to a value -- int, float, str, bool, None (UNDEFINED), a list of those,
    or an :class:`htcd.classad.Expr` (e.g. ``parse_expr("TotalGPUs > 0")``) -- or None for
    nothing.  The startd calls it at start-up and whenever it sends its ads to the collector
    (every ``UPDATE_INTERVAL`` and after state changes), inside its event loop: keep it cheap,
    and cache what is slow to find out (run a slow probe in a thread or in ``STARTD_CRON``).

    A provider that raises, returns something other than a mapping, or a value that is not a
    ClassAd value is logged in StartLog and disabled; the startd and the other providers go on.
    The attributes show in every slot ad (``htcd status -l``) and in matchmaking like any other.
    """


@hookspec
def htcd_config_templates() -> list[tuple[str, str, str]] | None:
    """Metaknob templates this plugin adds, as ``(category, name, text)`` tuples.

    ``text`` is config language; ``$(1)``, ``$(2)``... are the arguments of
    ``use CATEGORY : name(arg1, arg2)``.  htcd asks for these only when a ``use`` line names
    a template it does not ship, so plugins cost nothing to configs that do not use them.
    Replacing a shipped template is refused (the plugin is then disabled).
    """


@hookspec
def htcd_transfer_plugins() -> dict[str, object] | None:
    """File transfer plugins: ``{scheme: fetch}`` for the URLs a job names in
    ``transfer_input_files`` (``https://host/data.tar``, ``file:///shared/x``).

    ``fetch(url, dest, uid=None, gid=None)`` writes the file's bytes to ``dest`` (a binary
    file open for writing in the sandbox) and raises an exception whose message says what went
    wrong; the job is then held with HTCondor's hold code 13 and that message.  ``uid``/``gid``
    are the job's user when the starter runs as root: a plugin that reads local files must read
    them as that user.  A class may stand for ``fetch``: it is instantiated once and the instance
    called.  The starter calls plugins in a worker thread (a slow download does not hold up the
    startd) with the job's sandbox not yet given to the job.  Scheme names are lower case; a
    scheme registered twice keeps the first-loaded plugin's; a plugin that
    raises from this hook or returns something else than such a mapping is disabled.
    """
