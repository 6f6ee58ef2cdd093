"""The layer rule of docs/architecture.md, checked from the source (AST, nothing imported).

Layers, lowest first; a module may import its own layer and the ones below, never above:

    base      htcd (the package root: __version__), htcd.debug, htcd.pacer
    language  htcd.errors, htcd.eventlog, htcd.classad, htcd.config, htcd.submit, htcd.dagman
    wire      htcd.wire
    runtime   htcd.daemon, htcd.transfer, htcd.jobenv, htcd.universe, htcd.plugins, htcd.hookspecs
    client    htcd.client (the protocol side of the tools: never a daemon, never the CLI)
    api       htcd.api, the htcondor2-shaped Python API: it sits on htcd.client as the CLI does
              (never htcd.wire.client or htcd.wire.framing itself), and nothing but htcd.cli
              imports it
    daemons   htcd.collector, htcd.negotiator, htcd.schedd, htcd.startd, htcd.master,
              htcd.starter, htcd.defrag, htcd.dagrun (the DAGMan job), htcd.sharedport -- each only its own package,
              never another daemon's, except that
              the startd imports the starter it runs as a task
    cli       htcd.cli; nothing imports it but htcd.__main__; it talks to daemons only through
              htcd.client (never htcd.wire.client or htcd.wire.framing itself)

``htcd.client`` may not import ``htcd.daemon`` either: it sits beside the daemon core, so a
tool never loads the server runtime.  Plugins (``htcd_plugins``) may import only the public
plugin API: ``htcd.hookspecs``, ``htcd.universe`` and ``htcd.classad``.

Every import counts, at module level or inside a function, and ``if TYPE_CHECKING:`` ones too:
a type named across layers is a dependency a reader must follow all the same.

A name with a leading underscore stays in its module: one that another module needs is made
public (the CLI's shared helpers are in ``htcd.cli.common``).

``python tests/layering.py`` prints the violations and the import cycles.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (ROOT / "htcd", ROOT / "plugins" / "htcd_plugins")

BASE, LANGUAGE, WIRE, RUNTIME, CLIENT, API, DAEMON, CLI, MAIN, PLUGIN = range(10)
LAYER_NAMES = ("base", "language", "wire", "runtime", "client", "api", "daemon", "cli", "main", "plugin")

DAEMON_PACKAGES = ("collector", "negotiator", "schedd", "startd", "master", "starter", "defrag", "dagrun",
                   "sharedport")
LAYER_OF_PACKAGE = {
    "debug": BASE,
    "pacer": BASE,
    "version": BASE,
    "errors": LANGUAGE,
    "eventlog": LANGUAGE,
    "classad": LANGUAGE,
    "config": LANGUAGE,
    "submit": LANGUAGE,
    "dagman": LANGUAGE,
    "wire": WIRE,
    "daemon": RUNTIME,
    "transfer": RUNTIME,
    "jobenv": RUNTIME,
    "universe": RUNTIME,
    "plugins": RUNTIME,
    "hookspecs": RUNTIME,
    "client": CLIENT,
    "api": API,
    "cli": CLI,
    "__main__": MAIN,
    **{name: DAEMON for name in DAEMON_PACKAGES},
}
DAEMON_HOSTS = {("startd", "starter")}  # (daemon, the package it runs in its own process)
CLIENT_ONLY = ("htcd.wire.client", "htcd.wire.framing")  # the CLI reaches these through htcd.client
PLUGIN_API = ("htcd.hookspecs", "htcd.universe", "htcd.classad")  # as htcd/hookspecs.py says


@dataclass(frozen=True)
class Import:
    """One import statement's target as seen from ``module``."""

    module: str
    target: str
    line: int
    deferred: bool  # inside a function or an ``if TYPE_CHECKING:`` block
    name: str = ""  # the name taken by ``from target import name`` when it is no module
    typing_only: bool = False  # inside an ``if TYPE_CHECKING:`` block: never run


@dataclass(frozen=True)
class Violation:
    module: str
    target: str
    rule: str

    def __str__(self) -> str:
        return f"{self.module} -> {self.target} ({self.rule})"


def module_files() -> dict[str, Path]:
    """Every module of htcd and of the built-in plugins, by dotted name."""
    found: dict[str, Path] = {}
    for base in SOURCES:
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports_in(tree: ast.AST, module: str, is_package: bool, known: set[str]) -> Iterator[Import]:
    package = module if is_package else module.rpartition(".")[0]

    def resolve(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = package.split(".")
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def visit(node: ast.AST, deferred: bool, typing: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield Import(module, alias.name, child.lineno, deferred, typing_only=typing)
            elif isinstance(child, ast.ImportFrom):
                source = resolve(child)
                for alias in child.names:
                    sub = f"{source}.{alias.name}"
                    if sub in known:
                        yield Import(module, sub, child.lineno, deferred, typing_only=typing)
                    else:
                        yield Import(module, source, child.lineno, deferred, alias.name, typing)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from visit(child, True, typing)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), True, True)
                for stmt in child.orelse:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), deferred, typing)
            else:
                yield from visit(child, deferred, typing)

    yield from visit(tree, False, False)


def project_imports() -> list[Import]:
    """Every import of an htcd or htcd_plugins module by one of them."""
    files = module_files()
    known = set(files)
    found: list[Import] = []
    for module, path in files.items():
        tree = ast.parse(path.read_text(), str(path))
        for imp in _imports_in(tree, module, path.name == "__init__.py", known):
            if imp.target.split(".")[0] in ("htcd", "htcd_plugins"):
                found.append(imp)
    return found


def layer_of(module: str) -> tuple[int, str]:
    """The layer of ``module`` and the package that owns it within the layer."""
    parts = module.split(".")
    if parts[0] == "htcd_plugins":
        return PLUGIN, "htcd_plugins"
    if len(parts) == 1:
        return BASE, "htcd"
    return LAYER_OF_PACKAGE[parts[1]], parts[1]


def violation(imp: Import) -> Violation | None:
    """The rule ``imp`` breaks, if any."""
    if imp.name.startswith("_") and imp.name != "__version__":
        return Violation(imp.module, f"{imp.target}.{imp.name}", "a private name stays in its module")
    src_layer, src_pkg = layer_of(imp.module)
    dst_layer, dst_pkg = layer_of(imp.target)

    def broken(rule: str) -> Violation:
        return Violation(imp.module, imp.target, rule)

    if src_layer == PLUGIN:
        if dst_layer == PLUGIN or any(
            imp.target == api or imp.target.startswith(api + ".") for api in PLUGIN_API
        ):
            return None
        return broken("plugins import only " + ", ".join(PLUGIN_API))
    if dst_layer == PLUGIN:
        return broken("htcd finds plugins through entry points, never by import")
    if dst_layer == CLI and src_layer not in (CLI, MAIN):
        return broken("nothing imports htcd.cli but htcd.__main__")
    if dst_layer == API and src_layer not in (API, CLI):
        return broken("nothing imports htcd.api but htcd.cli")
    if dst_layer > src_layer:
        return broken(f"{LAYER_NAMES[src_layer]} imports {LAYER_NAMES[dst_layer]}, a higher layer")
    if src_layer == DAEMON and dst_layer == DAEMON and src_pkg != dst_pkg and (
        (src_pkg, dst_pkg) not in DAEMON_HOSTS
    ):
        return broken("daemons never import each other")
    if src_layer == CLI and imp.target in CLIENT_ONLY:
        return broken("the CLI talks to daemons through htcd.client")
    if src_layer == API and imp.target in CLIENT_ONLY:
        return broken("htcd.api talks to daemons through htcd.client")
    if src_layer == CLIENT and dst_pkg == "daemon":
        return broken("the client sits beside the daemon core, not on it")
    return None


def violations() -> list[Violation]:
    """Each broken rule once per (module, target)."""
    seen: dict[tuple[str, str], Violation] = {}
    for imp in project_imports():
        found = violation(imp)
        if found is not None:
            seen.setdefault((found.module, found.target), found)
    return sorted(seen.values(), key=str)


#: Which imports make an edge of the import graph: ``load`` those run when a module is loaded;
#: ``run`` every import that ever runs (function-level ones too: a cycle hidden in a function
#: is still two modules that need each other); ``typing`` also those for the type checker alone
#: (a collaborator naming the class that holds it, which costs nothing at run time).
CYCLE_KINDS = {"load": "at module level", "run": "with function-level imports",
               "typing": "with TYPE_CHECKING imports too"}


def import_cycles(kind: str = "load") -> list[list[str]]:
    """Strongly connected groups of modules importing each other (Tarjan), largest first, counting
    the imports of ``kind`` (a key of :data:`CYCLE_KINDS`)."""
    graph: dict[str, set[str]] = {module: set() for module in module_files()}
    for imp in project_imports():
        counted = (not imp.deferred if kind == "load" else not imp.typing_only if kind == "run" else True)
        if counted and imp.target in graph and imp.target != imp.module:
            graph[imp.module].add(imp.target)

    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        # Iterative Tarjan: the import graph is deep enough to matter for recursion limits.
        work = [(node, iter(sorted(graph[node])))]
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        while work:
            current, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[current] = min(low[current], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[current])
            if low[current] == index[current]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == current:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return sorted(groups, key=lambda g: (-len(g), g))


def report() -> str:
    lines = [str(v) for v in violations()]
    lines.append(f"{len(lines)} layer violation(s)")
    for kind, said in CYCLE_KINDS.items():
        cycles = import_cycles(kind)
        lines.append(f"{len(cycles)} import cycle(s) {said}")
        lines.extend("  " + " <-> ".join(group) for group in cycles)
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
    sys.exit(1 if violations() else 0)
