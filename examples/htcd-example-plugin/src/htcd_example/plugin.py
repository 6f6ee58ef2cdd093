"""The module the ``htcd`` entry point names: its ``@hookimpl`` functions are the plugin.

A plugin imports only ``htcd.hookspecs``, ``htcd.universe`` and ``htcd.classad``, the API that
stays stable; everything else in htcd may change between versions.
"""

from __future__ import annotations

from htcd.hookspecs import hookimpl
from htcd.universe import UniverseRegistry

from htcd_example.universe import ExampleUniverse

# ``use POLICY : Example_Universe_Only`` (or ``...(EXTRA)``, an expression the job must also
# satisfy): this execute point's slots run only jobs of the example universe.
POLICY = """\
START = (TARGET.PluginUniverse =?= "example") && ($(1:True))
"""


@hookimpl
def htcd_register_universes(registry: UniverseRegistry) -> None:
    registry.add("example", ExampleUniverse)


@hookimpl
def htcd_config_templates() -> list[tuple[str, str, str]]:
    return [("POLICY", "Example_Universe_Only", POLICY)]
