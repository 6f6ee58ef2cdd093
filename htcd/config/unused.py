"""Knobs a configuration sets that htcd accepts but does not act on.

HTCondor's param table has ~1,300 knobs; htcd reads many of them, and the others (its ``unused``
rows) are accepted so that an HTCondor configuration loads.  A site that sets one of those is
told so -- in each daemon's log when it starts and reconfigures, and by ``htcd config_val -v`` --
rather than left to believe it took effect."""

from __future__ import annotations

from htcd.config._core import EMBEDDED, Config, Entry
from htcd.config._table import lookup


def unused_settings(cfg: Config) -> list[Entry]:
    """The definitions from the site's files, templates it uses and the environment that name a
    knob of HTCondor's table htcd does not act on (``SCHEDD.X`` counts as ``X``).  The embedded
    default's own lines are left out; so is a knob the table does not know (a site's macro)."""
    found = []
    for e in cfg.definitions():
        if e.source == EMBEDDED or not e.raw.strip():
            continue
        p = lookup(e.name.lower().rsplit(".", 1)[-1], "")
        if p is not None and not p.acted_on:
            found.append(e)
    return found


def warnings(cfg: Config) -> list[str]:
    """One line per such knob, naming where it is set."""
    return [f"{e.name} (set at {e.source}{f':{e.line}' if e.line else ''}) is HTCondor's knob; htcd "
            "accepts it but does not act on it (docs/knobs.md)" for e in unused_settings(cfg)]
