"""``htcd install-condor-names [--prefix DIR] [--force] [--uninstall]``: put the ``condor_*``
names (:mod:`htcd.cli.condor_names`) into ``DIR/bin`` so that tools and scripts written for
HTCondor run htcd unchanged.

Each name is a small Python script carrying :data:`WRAPPER_MARK`: it runs this interpreter's
``htcd`` under the condor name.  A ``condor_*`` that is not htcd's, in the prefix or anywhere on
PATH, is a real HTCondor install: it is never shadowed or replaced silently -- the command refuses,
naming it, unless ``--force``.  ``--uninstall`` removes only files carrying the mark.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from htcd.cli.condor_names import CONDOR_NAMES, WRAPPER_MARK
from htcd.errors import UserError

DEFAULT_PREFIX = "/usr/local"


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("--prefix", "-prefix", default=DEFAULT_PREFIX, metavar="DIR",
                   help=f"install into DIR/bin (default: {DEFAULT_PREFIX})")
    p.add_argument("--force", "-force", action="store_true",
                   help="install even where a condor_* that is not htcd's exists (in the prefix it is replaced)")
    p.add_argument("--uninstall", "-uninstall", action="store_true",
                   help="remove the names this command installed (files that are not htcd's stay)")
    return run


def run(args: argparse.Namespace) -> int:
    if args.uninstall:
        return uninstall(Path(args.prefix))
    return install(Path(args.prefix), force=args.force)


def is_ours(path: Path) -> bool:
    """Whether ``path`` is a wrapper this command wrote (it carries the mark in its first lines)."""
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError:
        return False
    return WRAPPER_MARK.encode() in head


def wrapper_text(name: str, python: str, paths: list[str]) -> str:
    """The wrapper: this interpreter with ``-S`` and the import path written out, because the
    ``site`` module's reading of every ``.pth`` file in a full environment costs more than the
    rest of a ``condor_q`` (about 85 ms here)."""
    return (f"#!{python} -S\n"
            f"{WRAPPER_MARK}: {name} runs `htcd {' '.join(CONDOR_NAMES[name])}`\n"
            "import sys\n"
            f"sys.path[1:1] = {paths!r}\n"
            "from htcd.cli.main import main\n"
            "sys.exit(main())\n")


def import_path() -> list[str]:
    """Where this interpreter finds htcd, its plugins and its dependencies: the package
    directories' parents (an editable install's source tree too), then every directory on
    sys.path (those that site and the ``.pth`` files added included)."""
    import importlib.util

    import htcd

    found = [str(Path(htcd.__file__).resolve().parent.parent)]
    # the built-in plugins' package: located, not imported (plugins are loaded through entry points)
    spec = importlib.util.find_spec("htcd_plugins")
    if spec is not None and spec.submodule_search_locations:
        found.append(str(Path(next(iter(spec.submodule_search_locations))).resolve().parent))
    found += [p for p in sys.path[1:] if p and os.path.isdir(p)]  # (sys.path[0]: the running script's)
    return list(dict.fromkeys(found))


def foreign_names(bindir: Path, path_env: str | None = None) -> list[str]:
    """Every ``condor_*`` of ours' names that is not htcd's: in ``bindir`` or on PATH."""
    found: list[str] = []
    dirs = [bindir] + [Path(d) for d in (path_env if path_env is not None else os.environ.get("PATH", "")).split(os.pathsep) if d]
    seen: set[Path] = set()
    for d in dirs:
        try:
            key = d.resolve()
        except OSError:
            continue
        if key in seen:
            continue
        seen.add(key)
        for name in CONDOR_NAMES:
            f = d / name
            if (f.exists() or f.is_symlink()) and not is_ours(f):
                found.append(str(f))
    return found


def install(prefix: Path, force: bool = False, python: str | None = None) -> int:
    bindir = prefix / "bin"
    foreign = foreign_names(bindir)
    if foreign and not force:
        shown = "\n  ".join(foreign[:10]) + ("\n  ..." if len(foreign) > 10 else "")
        raise UserError("a real HTCondor seems to be installed on this host; these are not htcd's:\n  "
                        f"{shown}\nnothing was installed: htcd's names would shadow them "
                        "(--force installs anyway, replacing those in the prefix)")
    try:
        bindir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {bindir}: {exc.strerror}") from None
    interpreter = python or sys.executable
    paths = import_path()
    for name in CONDOR_NAMES:
        target = bindir / name
        if target.is_symlink() or target.exists():
            if not is_ours(target):
                print(f"replacing {target}, which is not htcd's (--force)", file=sys.stderr)
            target.unlink()
        tmp = bindir / f".{name}.htcd-tmp"
        try:
            tmp.write_text(wrapper_text(name, interpreter, paths))
            tmp.chmod(0o755)
            tmp.replace(target)
        except OSError as exc:
            raise UserError(f"cannot write {target}: {exc.strerror}") from None
    print(f"installed {len(CONDOR_NAMES)} condor_* names in {bindir}")
    on_path = [Path(d) for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    if bindir.resolve() not in {d.resolve() for d in on_path if d.exists()}:
        print(f"note: {bindir} is not on PATH", file=sys.stderr)
    for f in foreign:
        if not f.startswith(str(bindir) + "/"):
            print(f"warning: {f} is not htcd's; whichever comes first on PATH runs (--force)", file=sys.stderr)
    return 0


def uninstall(prefix: Path) -> int:
    bindir = prefix / "bin"
    removed = 0
    for name in CONDOR_NAMES:
        target = bindir / name
        if not (target.exists() or target.is_symlink()):
            continue
        if is_ours(target):
            target.unlink()
            removed += 1
        else:
            print(f"left {target}: it is not htcd's", file=sys.stderr)
    print(f"removed {removed} condor_* names from {bindir}")
    return 0
