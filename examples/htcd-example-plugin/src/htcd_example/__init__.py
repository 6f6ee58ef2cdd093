"""An example htcd plugin package (see docs/plugins.md of htcd)."""

__version__ = "0.1.0"
