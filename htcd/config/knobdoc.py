"""docs/knobs.md from the param table: ``python -m htcd.config.knobdoc > docs/knobs.md``.

The table is the one place a knob's type, default and reconfig-or-restart are written, so the
reference is generated from it (a test fails when docs/knobs.md falls behind).
"""

from __future__ import annotations

import os
import re
import sys

from htcd.config._table import COMPUTED, subsystem_rows, table

_INTRO = """\
# Knob reference

Generated from `htcd/config/param_table.tsv` by `python -m htcd.config.knobdoc > docs/knobs.md`;
do not edit by hand. Each knob may be set in any config source
(see docs/config.md), also per daemon (`SCHEDD.KNOB`) or per local name. **When** says what a
change needs: `reconfig` (`htcd reconfig` applies it) or `restart` (the daemon must restart;
a reconfig reports it as pending). A name with `<...>` stands for a family of knobs. A default
*(none)*, read as `V` is a knob left undefined (as HTCondor leaves it: `$(KNOB)` and
`htcd config_val KNOB` find nothing) that the daemons read as `V`.

**Use** says whether htcd acts on the knob: `used`, `unused` (accepted, not used by htcd:
`htcd config_val -v KNOB` says so, and a daemon whose config sets it says so in its log) or `htcd-only` (htcd's own, not in HTCondor's param table).
The table holds every knob of HTCondor {version}'s param table with HTCondor's default text
(`scripts/gen_param_table.py` reads it from the `htcondor` wheel); a name `SUBSYS.KNOB` is
HTCondor's default of KNOB for that daemon alone.

Computed from the machine when the config loads (a file may override them):
{computed}, SUBSYSTEM.
"""


def _htcondor_version() -> str:
    """The HTCondor release the table was generated from, as its header says."""
    with open(os.path.join(os.path.dirname(__file__), "param_table.tsv"), encoding="utf-8") as f:
        for line in f:
            m = re.search(r"the htcondor wheel, ([0-9.]+)", line)
            if m:
                return m.group(1)
    return "?"


def _cell(text: str) -> str:
    """Table-safe text: pipes escaped, code spans for values."""
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    """The whole of docs/knobs.md."""
    sections: dict[str, list] = {}
    for p in [*table().values(), *subsystem_rows()]:
        sections.setdefault(p.section or "Other", []).append(p)
    out = [_INTRO.format(computed=", ".join(n for n, _ in COMPUTED.values()), version=_htcondor_version())]
    out.append("## Contents\n")
    for title in sections:
        anchor = "".join(c for c in title.lower().replace(" ", "-") if c.isalnum() or c == "-")
        out.append(f"- [{title}](#{anchor})")
    out.append("")
    for title, rows in sections.items():
        out.append(f"## {title}\n")
        out.append("| Knob | Type | Default | When | Use | Description |")
        out.append("| --- | --- | --- | --- | --- | --- |")
        for p in rows:
            if p.fallback is not None:
                default = f"*(none)*, read as `{_cell(p.fallback)}`"
            elif p.default is None:
                default = "*(none)*"
            else:
                default = "*(empty)*" if p.default == "" else f"`{_cell(p.default)}`"
            out.append(f"| `{p.name}` | {p.type} | {default} | {'reconfig' if p.reconfig else 'restart'} "
                       f"| {p.use} | {_cell(p.description)} |")
        out.append("")
    return "\n".join(out)


def main() -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
