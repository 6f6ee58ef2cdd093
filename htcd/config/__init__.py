"""HTCondor's configuration language as a library: files, includes, conditionals, metaknobs,
lazy macros, the param table of defaults and environment overrides.

Only files and the environment are read (``include command`` is the one place a program runs).
"""

from htcd.config._core import (
    EMBEDDED_DEFAULT,
    MAX_INCLUDE_DEPTH,
    Config,
    apply_template_args,
    known_templates,
    load,
    preload_templates,
    register_templates,
    set_template_provider,
)
from htcd.config._expand import ConfigError, split_top
from htcd.config._table import Param, table
from htcd.config.conditionals import COMPAT_VERSION

__all__ = ["COMPAT_VERSION", "EMBEDDED_DEFAULT", "MAX_INCLUDE_DEPTH", "Config", "ConfigError", "Param",
           "apply_template_args", "known_templates", "load", "preload_templates", "register_templates", "set_template_provider",
           "split_top", "table"]
