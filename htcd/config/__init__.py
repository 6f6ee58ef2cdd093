"""HTCondor's configuration language as a library: files, includes, conditionals, metaknobs,
lazy macros, the param table of defaults and environment overrides.

Only files and the environment are read (``include command`` is the one place a program runs).
"""

from htcd.config._core import (
    COMPAT_VERSION,
    EMBEDDED_DEFAULT,
    Config,
    known_templates,
    load,
    register_templates,
    set_template_provider,
)
from htcd.config._expand import ConfigError
from htcd.config._table import Param, table

__all__ = ["COMPAT_VERSION", "EMBEDDED_DEFAULT", "Config", "ConfigError", "Param", "known_templates",
           "load", "register_templates", "set_template_provider", "table"]
