"""Where :mod:`htcd.wire.locate` used to be; kept so tests and scripts written against the old
path still import.  Nothing in htcd imports it (tests/test_layers.py checks)."""

from htcd.wire.locate import *  # noqa: F403
from htcd.wire.locate import COLLECTOR_PORT, read_address_file  # noqa: F401
