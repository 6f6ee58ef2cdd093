"""Harvest the options of HTCondor's tools from their man pages into htcd/cli/condor_options.tsv.

Each line: the tool, an option as the man page spells it, and whether it takes a value (the man
page shows an italic argument after it anywhere).  htcd reads the table to tell an HTCondor option
it does not implement from a typo; tests/dropin/test_man_page_options.py checks that every option
of every tool htcd has a condor name for is accepted or refused with that clear message.

    python scripts/harvest_condor_options.py [MIRROR]   # default: /work/.mirror/htcondor+htcondor/repo
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from htcd.cli.condor_names import CONDOR_NAMES  # noqa: E402

OUT = REPO / "htcd/cli/condor_options.tsv"
BOLD = re.compile(r"\*\*([^*]+)\*\*( \*[^*]+\*)?")
OPTION = re.compile(r"-[A-Za-z][A-Za-z0-9_-]*")


def sections(text: str) -> str:
    """The Synopsis and Options sections: the options a tool takes (not those the prose mentions)."""
    keep, out = False, []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
            keep = line.strip().lower() in ("synopsis", "options")
        if keep:
            out.append(line)
    return "\n".join(out)


def options(text: str) -> dict[str, bool]:
    found: dict[str, bool] = {}
    for m in BOLD.finditer(sections(text)):
        inner, italic = m.group(1), m.group(2)
        words = re.split(r"[/|]", inner)
        for w in words:
            w = w.strip()
            o = OPTION.match(w)
            if not o:
                continue
            name = o.group(0).rstrip("-")
            rest = w[o.end():].strip()
            value = bool(italic) or (bool(rest) and not rest.startswith(("[", ":")))
            found[name] = found.get(name, False) or value
    return found


def main() -> int:
    mirror = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/htcondor+htcondor/repo"
    rows = []
    for tool in sorted(CONDOR_NAMES):
        try:
            text = subprocess.run(["git", "-C", mirror, "show", f"HEAD:docs/man-pages/{tool}.rst"],
                                  capture_output=True, text=True, check=True).stdout
        except subprocess.CalledProcessError:
            continue  # no man page (the daemons have one for condor_master only)
        for opt, value in sorted(options(text).items()):
            rows.append(f"{tool}\t{opt}\t{'value' if value else 'flag'}\n")
    OUT.write_text("# tool\toption\tvalue|flag -- from HTCondor's man pages by scripts/harvest_condor_options.py\n"
                   + "".join(rows))
    print(f"{len(rows)} options of {len({r.split(chr(9))[0] for r in rows})} tools -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
