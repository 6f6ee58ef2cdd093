"""Regenerate htcd/config/templates/ from the metaknob table of HTCondor's config library.

The templates (``use ROLE : Personal``, ``use POLICY : Hold_If_Memory_Exceeded(...)``...) are
facts of HTCondor's configuration language.  This reads them out of the ``htcondor`` wheel's
``libcondor_utils`` (the test-only oracle in the dev venv): the library holds a table of
categories, each a sorted array of (name, pointer to text) pairs.  In the position-independent
library every pointer is an R_X86_64_RELATIVE relocation, so the table is walked through the
relocations of ``.rela.dyn``.  tests/config/test_templates.py then checks every expansion
against the same wheel.

    .venv/bin/python scripts/gen_config_templates.py [--manual PATH] [--check]

``--manual`` names HTCondor's introduction-to-configuration.rst, whose ``:config-template:``
roles give the documented spelling of each name (``Hold_If_Memory_Exceeded`` for the table's
``HOLD_IF_MEMORY_EXCEEDED``); without it the spellings already in the files are kept.
``--check`` writes nothing and exits 1 when a file would change.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import struct
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "htcd", "config", "templates")
CATEGORIES = ("EXPERIMENTAL", "FEATURE", "POLICY", "ROLE", "SECURITY", "UPGRADE")
_RELATIVE = 8  # R_X86_64_RELATIVE


class Library:
    """The sections and relative relocations of one ELF64 little-endian shared library."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise SystemExit(f"{path}: not a 64-bit little-endian ELF file")
        shoff = struct.unpack_from("<Q", d, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        raw = [struct.unpack_from("<IIQQQQ", d, shoff + i * shentsize) for i in range(shnum)]
        names_off = raw[shstrndx][4]
        #: section name -> (address, file offset, size)
        self.sections = {self._cstr_at(names_off + r[0]): (r[3], r[4], r[5]) for r in raw}
        _addr, off, size = self.sections[".rela.dyn"]
        self.rel: dict[int, int] = {}
        for o in range(off, off + size, 24):
            where, info, addend = struct.unpack_from("<QQq", d, o)
            if info & 0xFFFFFFFF == _RELATIVE:
                self.rel[where] = addend

    def _cstr_at(self, off: int) -> str:
        return self.data[off:self.data.index(b"\0", off)].decode("utf-8", "surrogateescape")

    def _offset(self, addr: int) -> int:
        for a, off, size in self.sections.values():
            if a <= addr < a + size and off:
                return addr - a + off
        raise KeyError(hex(addr))

    def cstr(self, addr: int) -> str:
        return self._cstr_at(self._offset(addr))

    def in_section(self, name: str, addr: int) -> bool:
        a, _, size = self.sections[name]
        return a <= addr < a + size

    def metaknobs(self) -> dict[str, list[tuple[str, str]]]:
        """Category -> [(template name, text)] as the library holds them.

        A category entry is (pointer to its name, pointer to its array, count); each array
        entry is (pointer to the template's name, pointer to a value whose first field points
        to the text)."""
        out: dict[str, list[tuple[str, str]]] = {}
        for where, target in self.rel.items():
            if not self.in_section(".rodata", target):
                continue
            name = self.cstr(target)
            if name not in CATEGORIES or name in out:
                continue
            table = self.rel.get(where + 8)
            if table is None or not self.in_section(".data.rel.ro", table):
                continue
            count = struct.unpack_from("<i", self.data, self._offset(where + 16))[0]
            items = []
            for k in range(count):
                entry = table + 16 * k
                items.append((self.cstr(self.rel[entry]), self.cstr(self.rel[self.rel[entry + 8]])))
            out[name] = items
        missing = set(CATEGORIES) - set(out)
        if missing:
            raise SystemExit(f"metaknob categories not found in the library: {sorted(missing)}")
        return out


def find_library() -> str:
    import sysconfig

    libs = glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "htcondor.libs", "libcondor_utils_*.so"))
    if not libs:
        raise SystemExit("the htcondor wheel is not installed in this Python (make .venv/.dev)")
    return libs[0]


def wheel_version() -> str:
    from importlib.metadata import version

    return version("htcondor")


def manual_spellings(path: str) -> dict[tuple[str, str], str]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = {}
    for m in re.finditer(r":config-template:`([A-Za-z_0-9]+)[^`<]*<([A-Z]+)>`", text):
        out[(m.group(2), m.group(1).lower())] = m.group(1)
    return out


def current_spellings() -> dict[tuple[str, str], str]:
    out = {}
    for path in glob.glob(os.path.join(OUT, "*", "*.conf")):
        with open(path, encoding="utf-8") as f:
            first = f.readline()
        m = re.match(r"# ([A-Z]+) : ([A-Za-z_0-9]+)", first)
        if m:
            out[(m.group(1), m.group(2).lower())] = m.group(2)
    return out


def render(category: str, spelled: str, text: str, version: str) -> str:
    head = (f"# {category} : {spelled} -- HTCondor {version}'s template, as its config library holds it.\n"
            "# Generated by scripts/gen_config_templates.py: do not edit.\n")
    return head + text.rstrip("\n") + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--library", help="libcondor_utils of the htcondor wheel (default: this Python's)")
    ap.add_argument("--manual", help="HTCondor's docs/admin-manual/introduction-to-configuration.rst")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    args = ap.parse_args()
    lib = Library(args.library or find_library())
    version = wheel_version()
    spellings = current_spellings()
    if args.manual:
        spellings.update(manual_spellings(args.manual))
    wanted: dict[str, str] = {}
    for category, items in lib.metaknobs().items():
        for name, text in items:
            spelled = spellings.get((category, name.lower()), name)
            path = os.path.join(OUT, category.lower(), name.lower() + ".conf")
            wanted[path] = render(category, spelled, text, version)
    stale = [p for p in glob.glob(os.path.join(OUT, "*", "*.conf")) if p not in wanted]
    changed = []
    for path, text in sorted(wanted.items()):
        try:
            with open(path, encoding="utf-8") as f:
                same = f.read() == text
        except FileNotFoundError:
            same = False
        if not same:
            changed.append(path)
            if not args.check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    if not args.check:
        for path in stale:
            os.remove(path)
    for path in changed + stale:
        print(os.path.relpath(path, REPO), "stale" if path in stale else "changed")
    print(f"{len(wanted)} templates from HTCondor {version}", file=sys.stderr)
    return 1 if args.check and (changed or stale) else 0


if __name__ == "__main__":
    sys.exit(main())
