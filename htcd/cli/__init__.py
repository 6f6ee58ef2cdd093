"""The ``htcd`` command: daemons and tools as subcommands, each module imported only when used."""
