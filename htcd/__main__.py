"""``python -m htcd`` is the ``htcd`` command (the master starts daemons this way)."""

from htcd.cli.main import main

raise SystemExit(main())
