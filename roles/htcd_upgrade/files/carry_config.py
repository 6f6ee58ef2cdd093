#!/usr/bin/env python3
"""Keep the local settings of an upgraded host that Ansible does not render itself.

Reads the output of ``htcd config_val -writeconfig:upgrade`` (written by the version being
replaced) and writes, to the carried file, the sections whose source is not a file managed by
Ansible: ``config_val -set`` settings and files an administrator wrote by hand.  Ansible's own
snippets are left out on purpose, so a knob later removed from the inventory does not live on
here.  Prints "changed" when the carried file was (re)written, "unchanged" otherwise.

usage: carry_config.py WRITECONFIG_FILE CARRIED_FILE OLD_VERSION NEW_VERSION
"""

from __future__ import annotations

import os
import sys


def managed(source: str) -> bool:
    """Whether ``source`` is a file Ansible renders (its head says so), or not a file at all."""
    if not source.startswith("/"):
        return True  # <environment> and the like: not a local file to carry
    try:
        with open(source, encoding="utf-8", errors="replace") as f:
            head = "".join(f.readline() for _ in range(10))
    except OSError:
        return False
    return "managed by ansible" in head.lower()


def sections(text: str) -> list[tuple[str, list[str]]]:
    """(source, assignment lines) per "# from SOURCE" section of a -writeconfig:upgrade file."""
    out: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("# from ") and i > 0 and lines[i - 1] == "#":
            source, body = lines[i][len("# from "):], []
            i += 2  # the closing "#"
            while i < len(lines) and not (lines[i] == "#" and i + 1 < len(lines)
                                          and lines[i + 1].startswith("# from ")):
                if lines[i]:
                    body.append(lines[i])
                i += 1
            out.append((source, body))
            continue
        i += 1
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src, dest, old, new = argv[1:]
    with open(src, encoding="utf-8") as f:
        text = f.read()
    kept = [(s, body) for s, body in sections(text) if body and not managed(s)]
    lines = [
        "# Written by upgrade.yml (roles/htcd_upgrade) when this host went from htcd",
        f"# {old} to {new}: the local settings of {old} that Ansible does not render",
        "# (config_val -set settings, hand-written files), read before Ansible's snippets,",
        "# which win.  Rewritten by the next upgrade; remove a knob here to drop it.",
    ]
    for source, body in kept:
        lines += ["", f"# from {source}", *body]
    content = "\n".join(lines) + "\n"
    try:
        with open(dest, encoding="utf-8") as f:
            if f.read() == content:
                print("unchanged")
                return 0
    except OSError:
        pass
    tmp = f"{dest}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(content)
    os.chmod(tmp, 0o644)
    os.replace(tmp, dest)
    print("changed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
