"""``htcd plugins``: the plugins this host's daemons load, where each comes from, the hooks it
implements, and why any is blocked or disabled -- the first thing to look at when a universe,
a transfer scheme or a config template is missing.

The plugins are loaded here, with this host's config, as a daemon loads them, so a plugin that
fails to import or names an unknown hook shows as disabled with the reason its daemon logged.
A plugin that raises only when called (from a hook at run time) shows in its daemon's log.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from htcd.cli.common import config as load_config
from htcd.plugins import PluginInfo, get_plugin_manager


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("-json", action="store_true", help="the plugins as a JSON list")
    p.add_argument("-long", "-l", dest="long", action="store_true", help="also the entry point of each")
    return run


def status(info: PluginInfo) -> str:
    if info.blocked:
        return "blocked"
    return "disabled" if info.disabled else "loaded"


def table(plugins: list[PluginInfo], long: bool = False) -> str:
    rows = [("NAME", "DISTRIBUTION", "VERSION", "STATUS", "HOOKS")]
    for p in plugins:
        rows.append((p.name, p.dist or "-", p.version or "-", status(p), ",".join(p.hooks) or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row[:4], widths, strict=True)) + "  " + row[4])
        if i == 0:
            continue
        p = plugins[i - 1]
        if long:
            lines.append(f"    entry point: {p.value}")
        if p.disabled:
            lines.append(f"    disabled: {p.disabled}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    pm = get_plugin_manager(load_config("TOOL"))
    plugins = pm.plugins()
    if args.json:
        print(json.dumps([p.to_json() for p in plugins], indent=2))
    else:
        print(table(plugins, args.long))
    return 1 if any(p.disabled for p in plugins) else 0
