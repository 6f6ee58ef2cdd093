"""The client side of the daemons' protocols, one module per daemon, for the tools, the tests and
the benchmarks.

Blocking calls over :mod:`htcd.wire` (tools start fast and talk to one daemon at a time), failures
raised as :class:`htcd.errors.UserError` with a message fit for the command line.  It sits above
the wire and beside the daemon core: it imports no daemon, no daemon runtime and not the CLI, so
a tool loads only what it talks with.
"""
