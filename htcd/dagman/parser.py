"""DAG file text -> :class:`Dag`, with HTCondor DAGMan's statements and checks.

Read in two passes as DAGMan does: first the statements that make nodes (JOB, FINAL,
SERVICE, PROVISIONER, SUBDAG, SPLICE, SUBMIT-DESCRIPTION), then the rest in file order, so
``PARENT`` may come before the ``JOB`` lines it names.  INCLUDE reads a file as if its lines
stood there.  A SPLICE is parsed as a DAG of its own and lifted in: its nodes are named
``splice+node`` and their DIR is taken below the splice's.  The first problem raises
:class:`DagError` naming the file, the line and the INCLUDE/SPLICE lines that led there.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from htcd.dagman.errors import DagError, DagWarning, Origin
from htcd.dagman.graph import check_acyclic
from htcd.dagman.lexer import LineReader, Words
from htcd.dagman.macros import unknown_macros
from htcd.dagman.model import (
    ALL_NODES,
    OUTSIDE_GRAPH,
    SPLICE_SEPARATOR,
    Dag,
    Dot,
    Node,
    NodeKind,
    NodeStatusFile,
    Script,
    ScriptKind,
    Var,
)

NODE_KEYWORDS = {"JOB": NodeKind.JOB, "FINAL": NodeKind.FINAL, "SERVICE": NodeKind.SERVICE,
                 "PROVISIONER": NodeKind.PROVISIONER}
RESERVED_NAMES = ("PARENT", "CHILD", ALL_NODES)
DAG_SUBMIT_SUFFIX = ".condor.sub"

# Statements htcd reads but whose effect the runtime does not (yet) give: each draws a warning.
NOT_HONOURED = {
    "DOT": "htcd writes no Graphviz DOT file; DOT is ignored",
    "SAVE_POINT_FILE": "htcd writes no save point files; SAVE_POINT_FILE is ignored",
    "PROVISIONER": "htcd starts a PROVISIONER node like any other node (no provisioning wait)",
    "TOLERANCE": "htcd does not apply node TOLERANCE; a failed job fails its node",
    "SCRIPT DEBUG": "htcd does not capture script output into a DEBUG file",
}


class _Statement:
    """One statement; its Origin is made only when asked for (most never are)."""

    __slots__ = ("chain", "file", "inline", "inline_origin", "keyword", "line", "words")

    def __init__(self, file: str, line: int, chain: tuple[str, ...], keyword: str,
                 words: Words) -> None:
        self.file = file
        self.line = line
        self.chain = chain
        self.keyword = keyword  # upper case
        self.words = words
        self.inline: str | None = None  # the text of an inline submit description
        self.inline_origin: Origin | None = None

    @property
    def origin(self) -> Origin:
        return Origin(self.file, self.line, self.chain)


@dataclass(slots=True)
class _Splice:
    """What the parent DAG needs of a lifted splice: its edge ends and its pins."""

    initial: list[Node]
    terminal: list[Node]
    pins_in: dict[int, list[Node]] = field(default_factory=dict)
    pins_out: dict[int, list[Node]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ParseOptions:
    """``cwd``: where the DAG is submitted from (relative names resolve there, as with
    condor_submit_dag); ``use_dag_dir``: resolve against each top DAG file's directory instead
    (``-usedagdir``); ``check_files``: refuse a node whose submit file (or SUBDAG file) is
    missing; ``check_inline``: parse inline submit descriptions with htcd's submit language."""

    cwd: str = "."
    use_dag_dir: bool = False
    check_files: bool = True
    check_inline: bool = True


def parse_dag(path: str, *, cwd: str | None = None, use_dag_dir: bool = False,
              check_files: bool = True, check_inline: bool = True) -> Dag:
    """Parse the DAG file at ``path`` (relative to ``cwd``) and check it is runnable."""
    options = ParseOptions(cwd=os.path.abspath(cwd or os.getcwd()), use_dag_dir=use_dag_dir,
                           check_files=check_files, check_inline=check_inline)
    base = os.path.dirname(os.path.join(options.cwd, path)) if use_dag_dir else options.cwd
    text = _read(path, options.cwd, None)
    return parse_dag_text(text, path, options=options, base=base)


def parse_dag_text(text: str, file: str = "<dag>", *, options: ParseOptions | None = None,
                   base: str | None = None) -> Dag:
    """Parse DAG text that came from ``file`` (used in messages and to find relative files)."""
    options = options or ParseOptions(cwd=os.getcwd())
    base = base if base is not None else os.path.abspath(options.cwd)
    parser = _Parser(file, options, base, scope="", chain=(), rejected_splices=())
    dag = parser.parse(text)
    check_acyclic(dag)
    return dag


def _read(path: str, base: str, origin: Origin | None) -> str:
    full = os.path.join(base, path)
    try:
        with open(full, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError as e:
        raise DagError(f"cannot read DAG file {path}: {e.strerror}", origin) from None


def _int(word: str | None, what: str, origin: Origin, *, minimum: int | None = None) -> int:
    if word is None:
        raise DagError(f"missing {what}", origin)
    try:
        value = int(word)
    except ValueError:
        raise DagError(f"{what} must be an integer, not {word!r}", origin) from None
    if minimum is not None and value < minimum:
        raise DagError(f"{what} must be at least {minimum}, not {value}", origin)
    return value


class _Parser:
    """One DAG file (and what it INCLUDEs) in one splice scope."""

    def __init__(self, file: str, options: ParseOptions, base: str, *, scope: str,
                 chain: tuple[str, ...], rejected_splices: tuple[str, ...]) -> None:
        self.file = file
        self.options = options
        self.base = base  # directory relative names of this scope resolve against
        self.scope = scope  # "" at the top, "S+" inside splice S (for categories)
        self.chain = chain
        self.active_files = rejected_splices  # splice files being read: a loop is refused
        self.dag = Dag(file=file)
        self.own: list[Node] = []  # nodes of this file, not of its splices: ALL_NODES means these
        self.splices: dict[str, _Splice] = {}
        self.splice_dirs: dict[str, str] = {}
        self.pins_in: dict[int, list[Node]] = {}
        self.pins_out: dict[int, list[Node]] = {}
        self.splice_configs: list[tuple[str, str, Origin]] = []  # splice, its CONFIG, SPLICE line

    # -- reading ---------------------------------------------------------------------------

    def _statements(self, text: str, file: str, chain: tuple[str, ...],
                    including: tuple[str, ...]) -> list[_Statement]:
        """Every statement of ``text``, INCLUDEd files spliced in where they are named."""
        self.dag.files.append(file)
        reader = LineReader(text)
        out: list[_Statement] = []
        lines, pos = reader.simple_lines()
        count = len(lines)
        while True:
            # the common plain line is taken here; the reader does continuations
            if pos < count:
                line = lines[pos].strip()
                if not line or line[0] == "#":
                    pos += 1
                    continue
                if line[-1] != "\\":
                    pos += 1
                    lineno = pos
                else:
                    reader.seek(pos)
                    item = reader.next_line()
                    if item is None:
                        break
                    lineno, line = item
                    pos = reader.simple_lines()[1]
            else:
                break
            words = Words(line)
            keyword = (words.next() or "").upper()
            if keyword == "INCLUDE":
                origin = Origin(file, lineno, chain)
                name = words.next()
                if name is None:
                    raise DagError("INCLUDE needs a file name (INCLUDE filename)", origin)
                if extra := words.next():
                    raise DagError(f"invalid parameter {extra!r} after the INCLUDE file", origin)
                full = os.path.normpath(os.path.join(self.base, name))
                if full in including:
                    raise DagError(f"INCLUDE of {name} includes itself", origin)
                included = _read(name, self.base, origin)
                out += self._statements(included, name, (f"included from {file}:{lineno}", *chain),
                                        (*including, full))
                continue
            stmt = _Statement(file, lineno, chain, keyword, words)
            if keyword in NODE_KEYWORDS or keyword == "SUBMIT-DESCRIPTION":
                reader.seek(pos)
                self._read_inline(stmt, reader, file, chain)
                pos = reader.simple_lines()[1]
            out.append(stmt)
        return out

    def _read_inline(self, stmt: _Statement, reader: LineReader, file: str,
                     chain: tuple[str, ...]) -> None:
        """If the statement opens an inline description (``{`` or ``@=TOKEN``), read it in."""
        words = stmt.words
        if "{" not in words.text and "@=" not in words.text:
            return
        pos = words.index
        words.next()
        opener = words.next()
        words.index = pos
        if opener is None:
            return
        if opener.startswith("{"):
            end = "}"
        elif opener.startswith("@="):
            end = "@" + opener[2:]
            if end == "@":
                raise DagError("no inline description closing token given (@=TOKEN)", stmt.origin)
        else:
            return
        if words.text.rstrip() != words.text[:words.text.find(opener)] + opener:
            raise DagError(f"text after the inline description opener {opener!r}", stmt.origin)
        lines: list[str] = []
        first = None
        while (raw := reader.raw_line()) is not None:
            lineno, line = raw
            if first is None:
                first = lineno
            if not line or line[0] == "#":
                continue
            if line == end or line.startswith(end + " ") or line.startswith(end + "\t"):
                stmt.inline = "".join(x + "\n" for x in lines)
                stmt.inline_origin = Origin(file, first, chain)
                # words after the closing token belong to the statement (DIR, NOOP, DONE)
                stmt.words = Words(words.text[:words.text.find(opener)] + "{} " + line[len(end):],
                                   pos)
                return
            lines.append(line)
        raise DagError(f"missing inline description closing token: {end}", stmt.origin)

    # -- the two passes ---------------------------------------------------------------------

    def parse(self, text: str) -> Dag:
        statements = self._statements(text, self.file, self.chain, ())
        for stmt in statements:
            if stmt.keyword in NODE_KEYWORDS:
                self._node(stmt, NODE_KEYWORDS[stmt.keyword])
            elif stmt.keyword == "SUBDAG":
                self._subdag(stmt)
            elif stmt.keyword == "SPLICE":
                self._splice(stmt)
            elif stmt.keyword == "SUBMIT-DESCRIPTION":
                self._submit_description(stmt)
        for stmt in statements:
            handler = self._SECOND_PASS.get(stmt.keyword)
            if handler is not None:
                handler(self, stmt)
            elif stmt.keyword not in _FIRST_PASS:
                raise DagError(
                    f"unknown statement {stmt.words.text.split()[0]!r} (expected one of "
                    + ", ".join(sorted(_FIRST_PASS | set(self._SECOND_PASS) | {"INCLUDE"})) + ")",
                    stmt.origin)
        self._splice_configs()
        for node in self.own:
            if node.inline is None and node.kind is not NodeKind.SUBDAG:
                node.inline = self.dag.submit_descriptions.get(node.submit)
        self._check_files()
        return self.dag

    # -- node definitions -------------------------------------------------------------------

    def _new_node_name(self, name: str | None, what: str, origin: Origin) -> str:
        if name is None:
            raise DagError(f"no node name given ({what})", origin)
        if name.upper() in RESERVED_NAMES:
            raise DagError(f"a node cannot be named {name} (a reserved word)", origin)
        if SPLICE_SEPARATOR in name:
            raise DagError(f"node name {name} contains an illegal character ('+')", origin)
        if name in self.dag.nodes:
            first = self.dag.nodes[name].origin
            raise DagError(f"node {name} is defined twice (first at {first.file}:{first.line})", origin)
        if name in self.splices:
            raise DagError(f"node name {name} is already the name of a splice", origin)
        return name

    def _node_options(self, stmt: _Statement, kind: NodeKind, syntax: str) -> tuple[str, bool, bool]:
        """DIR directory, NOOP, DONE: optional, in that order."""
        words = stmt.words
        directory = ""
        noop = done = False
        word = words.next()
        if word is not None and word.upper() == "DIR":
            got = words.next_quoted()
            if not got:
                raise DagError(f"no directory given after DIR ({syntax})", stmt.origin)
            if self.options.use_dag_dir:
                raise DagError("DIR in node lines is not allowed with -usedagdir", stmt.origin)
            directory = got
            word = words.next()
        if word is not None and word.upper() == "NOOP":
            noop = True
            word = words.next()
        if word is not None and word.upper() == "DONE":
            if kind is NodeKind.FINAL:
                raise DagError("a FINAL node cannot be DONE", stmt.origin)
            done = True
            word = words.next()
        if word is not None:
            raise DagError(f"invalid parameter {word!r} ({syntax})", stmt.origin)
        return directory, noop, done

    def _add(self, node: Node) -> None:
        self.dag.nodes[node.name] = node
        self.own.append(node)

    def _node(self, stmt: _Statement, kind: NodeKind) -> None:
        syntax = f"{stmt.keyword} NodeName SubmitDescription [DIR directory] [NOOP] [DONE]"
        words = stmt.words
        name = self._new_node_name(words.next(), syntax, stmt.origin)
        submit = words.next_quoted()
        if not submit:
            raise DagError(f"no submit file or submit description given ({syntax})", stmt.origin)
        inline = stmt.inline
        if inline is not None:
            submit = f"{name}-inline"
        directory, noop, done = self._node_options(stmt, kind, syntax)
        if inline is None and submit.endswith(DAG_SUBMIT_SUFFIX) and kind is not NodeKind.FINAL:
            raise DagError(f"a {stmt.keyword} node cannot run a nested DAG's {submit}: "
                           "use SUBDAG EXTERNAL", stmt.origin)
        if kind is NodeKind.FINAL and self.dag.final is not None:
            raise DagError(f"a second FINAL node {name} (the first is "
                           f"{self.dag.final.name}); a DAG has at most one", stmt.origin)
        if kind is NodeKind.PROVISIONER:
            if any(n.kind is NodeKind.PROVISIONER for n in self.own):
                raise DagError(f"a second PROVISIONER node {name}; a DAG has at most one",
                               stmt.origin)
            self._warn(NOT_HONOURED["PROVISIONER"], stmt.origin)
        if inline is not None and self.options.check_inline:
            self._check_submit_text(inline, stmt.inline_origin or stmt.origin)
        node = Node(name, kind, submit, directory, stmt.origin, inline=inline, noop=noop, done=done)
        if kind is NodeKind.FINAL:
            self.dag.final = node
        self._add(node)

    def _subdag(self, stmt: _Statement) -> None:
        syntax = "SUBDAG EXTERNAL NodeName DagFileName [DIR directory] [NOOP] [DONE]"
        words = stmt.words
        external = words.next()
        if external is None:
            raise DagError(f"SUBDAG needs the EXTERNAL keyword ({syntax})", stmt.origin)
        if external.upper() != "EXTERNAL":
            raise DagError(f"only SUBDAG EXTERNAL is supported ({syntax})", stmt.origin)
        name = self._new_node_name(words.next(), syntax, stmt.origin)
        dag_file = words.next_quoted()
        if not dag_file:
            raise DagError(f"no DAG file given ({syntax})", stmt.origin)
        directory, noop, done = self._node_options(stmt, NodeKind.SUBDAG, syntax)
        node = Node(name, NodeKind.SUBDAG, dag_file + DAG_SUBMIT_SUFFIX, directory, stmt.origin,
                    noop=noop, done=done)
        node.dag_file = dag_file
        self._add(node)

    def _submit_description(self, stmt: _Statement) -> None:
        syntax = "SUBMIT-DESCRIPTION DescriptionName { ... }"
        name = stmt.words.next()
        if name is None or stmt.inline is None:
            raise DagError(f"SUBMIT-DESCRIPTION needs a name and an inline description ({syntax})",
                           stmt.origin)
        if name in self.dag.submit_descriptions:
            self._warn(f"SUBMIT-DESCRIPTION {name} is defined again: the later one is used",
                       stmt.origin)
        if extra := stmt.words.remaining()[1:]:
            raise DagError(f"invalid parameter {extra[0]!r} ({syntax})", stmt.origin)
        if self.options.check_inline:
            self._check_submit_text(stmt.inline, stmt.inline_origin or stmt.origin)
        self.dag.submit_descriptions[name] = stmt.inline

    def _check_submit_text(self, text: str, origin: Origin) -> None:
        """Refuse an inline description htcd's submit language refuses.  One that runs a
        command (a line ending in ``|``) is left to submit time: parsing a DAG runs nothing."""
        from htcd.submit import SubmitError, parse_submit

        if any(line.rstrip().endswith("|") for line in text.splitlines()):
            return
        try:
            parse_submit(text, f"{origin.file}:{origin.line}", submit_dir=self.base, env={})
        except SubmitError as e:
            raise DagError(f"inline submit description: {e}", origin) from None

    # -- splices ----------------------------------------------------------------------------

    def _splice(self, stmt: _Statement) -> None:
        syntax = "SPLICE SpliceName SpliceFileName [DIR directory]"
        words = stmt.words
        name = words.next()
        if name is None:
            raise DagError(f"missing SPLICE name ({syntax})", stmt.origin)
        if name.upper() in RESERVED_NAMES or SPLICE_SEPARATOR in name:
            raise DagError(f"a splice cannot be named {name}", stmt.origin)
        if name in self.splices:
            raise DagError(f"splice {name} is defined twice", stmt.origin)
        if name in self.dag.nodes:
            raise DagError(f"splice name {name} is already the name of a node", stmt.origin)
        file = words.next()
        if file is None:
            raise DagError(f"missing SPLICE file name ({syntax})", stmt.origin)
        directory = ""
        word = words.next()
        if word is not None:
            if word.upper() != "DIR":
                raise DagError(f"illegal token ({word}) on SPLICE line ({syntax})", stmt.origin)
            got = words.next()
            if got is None:
                raise DagError(f"DIR requires a directory ({syntax})", stmt.origin)
            directory = got
            if extra := words.next():
                raise DagError(f"invalid parameter {extra!r} ({syntax})", stmt.origin)
        base = os.path.normpath(os.path.join(self.base, directory))
        full = os.path.normpath(os.path.join(base, file))
        if full in self.active_files:
            raise DagError(f"splice {name} ({file}) splices itself in", stmt.origin)
        text = _read(file, base, stmt.origin)
        link = f"in splice {name} from {stmt.origin.file}:{stmt.origin.line}"
        inner = _Parser(file, self.options, base, scope=self.scope + name + SPLICE_SEPARATOR,
                        chain=(link, *stmt.origin.chain),
                        rejected_splices=(*self.active_files, full))
        sub = inner.parse(text)
        if sub.final is not None:
            raise DagError(f"splice {name} has a FINAL node ({sub.final.name}); splices cannot "
                           "have FINAL nodes", stmt.origin)
        if sub.config is not None:
            self.splice_configs.append((name, sub.config, stmt.origin))
        for kind_word in ("jobstate_log", "node_status_file", "dot"):
            if getattr(sub, kind_word) is not None:
                self._warn(f"splice {name}: {kind_word.upper()} in a spliced DAG has no effect",
                           stmt.origin)
        if sub.set_job_attrs or sub.env_get or sub.env_set:
            self._warn(f"splice {name}: SET_JOB_ATTR and ENV in a spliced DAG have no effect",
                       stmt.origin)
        self._lift(name, directory, inner, stmt.origin)

    def _splice_configs(self) -> None:
        """One DAGMan config file per DAG: a splice's CONFIG naming another file is fatal (as
        the manual says); naming the same one, or where the DAG has none, it has no effect."""
        for name, file, origin in self.splice_configs:
            first = self.dag.config or self.splice_configs[0][1]
            if file != first:
                raise DagError(f"splice {name} names DAGMan config file {file}, but the DAG "
                               f"already has {first}: one config file per DAG", origin)
            self._warn(f"splice {name}: CONFIG {file} in a spliced DAG has no effect", origin)

    def _lift(self, name: str, directory: str, inner: _Parser, origin: Origin) -> None:
        """Take the splice's nodes in as ``name+node``, DIR below the splice's DIR."""
        sub = inner.dag
        prefix = name + SPLICE_SEPARATOR
        for node in sub.nodes.values():
            node.name = prefix + node.name
            if directory and not os.path.isabs(node.directory):
                node.directory = os.path.normpath(os.path.join(directory, node.directory))
            if node.category is not None and not node.category.startswith("+"):
                node.category = prefix + node.category
            if node.inline is None and node.submit in sub.submit_descriptions:
                node.inline = sub.submit_descriptions[node.submit]
            if node.name in self.dag.nodes:
                raise DagError(f"splice {name} makes node {node.name}, which already exists", origin)
            self.dag.nodes[node.name] = node
        for category, limit in sub.max_jobs.items():
            key = category if category.startswith("+") else prefix + category
            self.dag.max_jobs[key] = limit
        self.dag.warnings += sub.warnings
        self.dag.files += sub.files
        self.dag.splices[name] = sub.file
        for inner_name, inner_file in sub.splices.items():
            self.dag.splices[prefix + inner_name] = inner_file
        self.splices[name] = _Splice(sub.initial_nodes(), sub.terminal_nodes(),
                                     inner.pins_in, inner.pins_out)

    # -- second pass ------------------------------------------------------------------------

    def _warn(self, reason: str, origin: Origin) -> None:
        self.dag.warnings.append(DagWarning(reason, origin))

    def _lookup(self, name: str | None, origin: Origin, syntax: str, *,
                all_nodes: bool = True, final: bool = True) -> list[Node]:
        """The node(s) a name means: one node, or every node of this file for ALL_NODES."""
        if name is None:
            raise DagError(f"missing node name ({syntax})", origin)
        if name.upper() == ALL_NODES:
            if not all_nodes:
                raise DagError(f"ALL_NODES cannot be used here ({syntax})", origin)
            return [n for n in self.own if n.kind not in (NodeKind.FINAL, NodeKind.SERVICE)]
        node = self.dag.nodes.get(name)
        if node is None:
            if name in self.splices:
                raise DagError(f"{name} is a splice, not a node ({syntax})", origin)
            raise DagError(f"unknown node name {name} ({syntax})", origin)
        if not final and node.kind is NodeKind.FINAL:
            raise DagError(f"{syntax.split()[0]} cannot name the FINAL node {name}", origin)
        return [node]

    def _script(self, stmt: _Statement) -> None:
        syntax = ("SCRIPT [DEFER status time] [DEBUG file (STDOUT|STDERR|ALL)] (PRE|POST|HOLD) "
                  "NodeName Script Args ...")
        words, origin = stmt.words, stmt.origin
        kind_word = words.next()
        if kind_word is None:
            raise DagError(f"missing PRE, POST, HOLD or DEFER ({syntax})", origin)
        defer_status = None
        defer_time = 0
        if kind_word.upper() == "DEFER":
            defer_status = _int(words.next(), "DEFER status value", origin, minimum=1)
            defer_time = _int(words.next(), "DEFER time value", origin, minimum=0)
            kind_word = words.next()
            if kind_word is None:
                raise DagError(f"missing PRE, POST, HOLD or DEBUG ({syntax})", origin)
        debug_file = debug_stream = None
        if kind_word.upper() == "DEBUG":
            debug_file = words.next()
            if debug_file is None:
                raise DagError(f"script DEBUG is missing its file name ({syntax})", origin)
            stream = words.next()
            if stream is None or stream.upper() not in ("STDOUT", "STDERR", "ALL"):
                raise DagError(f"script DEBUG needs STDOUT, STDERR or ALL, not {stream!r}", origin)
            debug_stream = stream.upper()
            self._warn(NOT_HONOURED["SCRIPT DEBUG"], origin)
            kind_word = words.next()
            if kind_word is None:
                raise DagError(f"missing PRE, POST or HOLD ({syntax})", origin)
        try:
            kind = ScriptKind(kind_word.upper())
        except ValueError:
            raise DagError(f"after SCRIPT expected PRE, POST, HOLD, DEFER or DEBUG, "
                           f"found {kind_word!r} ({syntax})", origin) from None
        nodes = self._lookup(words.next(), origin, syntax)
        executable = words.next()
        if executable is None:
            raise DagError(f"no script executable given ({syntax})", origin)
        arguments = words.rest()
        if "$" in arguments or "$" in executable:
            for warning in unknown_macros(kind, f"{executable} {arguments}"):
                self._warn(warning, origin)
        attr = kind.value.lower()
        for node in nodes:
            script = Script(kind, executable, arguments, defer_status, defer_time, debug_file,
                            debug_stream)
            old = getattr(node, attr)
            if old is not None:
                self._warn(f"node {node.name} already has {kind.value} script <{old.executable} "
                           f"{old.arguments}> assigned; changing to <{executable} {arguments}>",
                           origin)
            setattr(node, attr, script)

    def _parent(self, stmt: _Statement, weak: bool = False) -> None:
        syntax = "[WEAK] PARENT p1 [p2 ...] CHILD c1 [c2 ...]"
        words, origin = stmt.words, stmt.origin
        if weak:
            word = words.next()
            if word is None or word.upper() != "PARENT":
                raise DagError(f"WEAK must be followed by PARENT ({syntax})", origin)
            self._warn("htcd runs a WEAK edge as a normal one: the child waits for the parent "
                       "to succeed", origin)
        parents: list[str] = []
        children: list[str] = []
        seen_child = False
        for word in words.remaining():
            if word.upper() == "CHILD":
                if seen_child:
                    raise DagError(f"CHILD given twice ({syntax})", origin)
                seen_child = True
            elif word.upper() == "PARENT":
                raise DagError(f"PARENT given twice ({syntax})", origin)
            else:
                (children if seen_child else parents).append(word)
        if not parents:
            raise DagError(f"no parent node names given ({syntax})", origin)
        if not seen_child:
            raise DagError(f"expected CHILD after the parent node names ({syntax})", origin)
        if not children:
            raise DagError(f"no child node names given ({syntax})", origin)
        ups = [self._edge_end(name, origin, parent=True) for name in parents]
        downs = [self._edge_end(name, origin, parent=False) for name in children]
        for up_nodes in ups:
            for up in up_nodes:
                up_children = up.children
                for down_nodes in downs:
                    for down in down_nodes:
                        if down not in up_children:
                            up_children[down] = None
                            down.parents[up] = None
                        if weak:
                            if down.weak_parents is None:
                                down.weak_parents = set()
                            down.weak_parents.add(up.name)

    def _edge_end(self, name: str, origin: Origin, *, parent: bool) -> list[Node]:
        node = self.dag.nodes.get(name)
        if node is not None:
            if node.kind in OUTSIDE_GRAPH:
                raise DagError(f"{node.kind.value} node {name} cannot be a "
                               f"{'parent' if parent else 'child'}", origin)
            return [node]
        splice = self.splices.get(name)
        if splice is not None:
            return splice.terminal if parent else splice.initial
        if name.upper() == ALL_NODES:
            raise DagError("ALL_NODES cannot be used in PARENT/CHILD", origin)
        raise DagError(f"unknown node name {name} in PARENT/CHILD", origin)

    def _weak(self, stmt: _Statement) -> None:
        self._parent(stmt, weak=True)

    def _retry(self, stmt: _Statement) -> None:
        syntax = "RETRY NodeName NumberOfRetries [UNLESS-EXIT value]"
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax, final=False)
        count = _int(words.next(), "number of retries", origin, minimum=0)
        unless = None
        word = words.next()
        if word is not None:
            if word.upper() != "UNLESS-EXIT":
                raise DagError(f"invalid parameter {word!r} ({syntax})", origin)
            unless = _int(words.next(), "UNLESS-EXIT value", origin)
            if extra := words.next():
                raise DagError(f"invalid parameter {extra!r} ({syntax})", origin)
        for node in nodes:
            node.retry = count
            node.retry_unless_exit = unless

    def _abort(self, stmt: _Statement) -> None:
        syntax = "ABORT-DAG-ON NodeName NodeExitValue [RETURN DAGReturnValue]"
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax, final=False)
        status = _int(words.next(), "node exit value", origin)
        ret = None
        word = words.next()
        if word is not None:
            if word.upper() != "RETURN":
                raise DagError(f"invalid parameter {word!r} ({syntax})", origin)
            ret = _int(words.next(), "DAG return value", origin)
            if not 0 <= ret <= 255:
                raise DagError(f"DAG return value must be between 0 and 255, not {ret}", origin)
            if extra := words.next():
                raise DagError(f"invalid parameter {extra!r} ({syntax})", origin)
        for node in nodes:
            node.abort_status = status
            node.abort_return = ret

    def _vars(self, stmt: _Statement) -> None:
        syntax = 'VARS NodeName [PREPEND | APPEND] name1="value1" [name2="value2" ...]'
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax)
        position = ""
        nxt = words.peek()
        if nxt is not None and nxt.upper() in ("PREPEND", "APPEND"):
            position = nxt.upper()
            words.next()
        pairs = parse_vars(words.rest(), position, lambda r: DagError(r, origin))
        if not pairs:
            raise DagError(f"no macros given ({syntax})", origin)
        for node in nodes:
            for pair in pairs:
                for i, old in enumerate(node.vars):
                    if old.name == pair.name:
                        self._warn(f'VAR "{pair.name}" is already defined in node "{node.name}": '
                                   f'now "{pair.value}"', origin)
                        node.vars[i] = Var(old.name, pair.value, old.position)
                        break
                else:
                    node.vars.append(pair)

    def _priority(self, stmt: _Statement) -> None:
        syntax = "PRIORITY NodeName PriorityValue"
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax, final=False)
        value = _int(words.next(), "priority value", origin)
        self._no_more(words, origin, syntax)
        for node in nodes:
            node.priority = value

    def _category(self, stmt: _Statement) -> None:
        syntax = "CATEGORY NodeName CategoryName"
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax, final=False)
        category = words.next()
        if category is None:
            raise DagError(f"missing category name ({syntax})", origin)
        self._no_more(words, origin, syntax)
        for node in nodes:
            if node.category is not None:
                self._warn(f"new category {category} for node {node.name} overrides old value "
                           f"{node.category}", origin)
            node.category = category

    def _maxjobs(self, stmt: _Statement) -> None:
        syntax = "MAXJOBS CategoryName MaxJobsValue"
        words, origin = stmt.words, stmt.origin
        category = words.next()
        if category is None:
            raise DagError(f"missing category name ({syntax})", origin)
        limit = _int(words.next(), "MAXJOBS value", origin, minimum=0)
        self._no_more(words, origin, syntax)
        self.dag.max_jobs[category] = limit

    def _config(self, stmt: _Statement) -> None:
        syntax = "CONFIG filename"
        words, origin = stmt.words, stmt.origin
        file = words.next()
        if file is None:
            raise DagError(f"missing CONFIG file name ({syntax})", origin)
        self._no_more(words, origin, syntax)
        if self.dag.config is not None and self.dag.config != file:
            raise DagError(f"conflicting DAGMan config files {self.dag.config} and {file}", origin)
        if self.options.check_files and not os.path.isfile(os.path.join(self.base, file)):
            raise DagError(f"DAGMan config file {file} does not exist", origin)
        self.dag.config = file

    def _set_job_attr(self, stmt: _Statement) -> None:
        syntax = "SET_JOB_ATTR AttributeName = AttributeValue"
        text = stmt.words.rest()
        name, eq, value = text.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name or not value or any(c in name for c in " \t"):
            raise DagError(f"expected an attribute assignment ({syntax})", stmt.origin)
        self.dag.set_job_attrs.append((name, value))

    def _env(self, stmt: _Statement) -> None:
        syntax = "ENV GET VAR1 [VAR2 ...]  or  ENV SET Key=Value;Key=Value;..."
        words, origin = stmt.words, stmt.origin
        action = (words.next() or "").upper()
        if action == "GET":
            names = words.remaining()
            if not names:
                raise DagError(f"ENV GET needs variable names ({syntax})", origin)
            self.dag.env_get += [n for part in names for n in part.split(",") if n]
        elif action == "SET":
            text = words.rest()
            pairs = []
            for item in (p.strip() for p in text.split(";")):
                if not item:
                    continue
                key, eq, value = item.partition("=")
                if not eq or not key.strip():
                    raise DagError(f"ENV SET expects Key=Value, not {item!r} ({syntax})", origin)
                pairs.append((key.strip(), value))
            if not pairs:
                raise DagError(f"ENV SET needs Key=Value pairs ({syntax})", origin)
            self.dag.env_set += pairs
        else:
            raise DagError(f"ENV needs GET or SET ({syntax})", origin)

    def _dot(self, stmt: _Statement) -> None:
        syntax = "DOT filename [UPDATE | DONT-UPDATE] [OVERWRITE | DONT-OVERWRITE] [INCLUDE header]"
        words, origin = stmt.words, stmt.origin
        file = words.next()
        if file is None:
            raise DagError(f"missing DOT file name ({syntax})", origin)
        dot = Dot(file)
        while (word := words.next()) is not None:
            upper = word.upper()
            if upper in ("UPDATE", "DONT-UPDATE"):
                dot.update = upper == "UPDATE"
            elif upper in ("OVERWRITE", "DONT-OVERWRITE"):
                dot.overwrite = upper == "OVERWRITE"
            elif upper == "INCLUDE":
                dot.include = words.next()
                if dot.include is None:
                    raise DagError(f"missing DOT include file ({syntax})", origin)
            else:
                raise DagError(f"unknown DOT option {word!r} ({syntax})", origin)
        self._warn(NOT_HONOURED["DOT"], origin)
        self.dag.dot = dot

    def _node_status_file(self, stmt: _Statement) -> None:
        syntax = "NODE_STATUS_FILE filename [minimumUpdateTime] [ALWAYS-UPDATE]"
        words, origin = stmt.words, stmt.origin
        file = words.next()
        if file is None:
            raise DagError(f"missing node status file name ({syntax})", origin)
        status = NodeStatusFile(file)
        word = words.next()
        if word is not None and word.upper() != "ALWAYS-UPDATE":
            status.min_update_time = _int(word, "minimum update time", origin, minimum=0)
            word = words.next()
        if word is not None:
            if word.upper() != "ALWAYS-UPDATE":
                raise DagError(f"invalid parameter {word!r} ({syntax})", origin)
            status.always_update = True
        self._no_more(words, origin, syntax)
        if self.dag.node_status_file is not None:
            self._warn(f"NODE_STATUS_FILE {file} does not override the earlier "
                       f"{self.dag.node_status_file.file}", origin)
            return
        self.dag.node_status_file = status

    def _jobstate_log(self, stmt: _Statement) -> None:
        syntax = "JOBSTATE_LOG filename"
        words, origin = stmt.words, stmt.origin
        file = words.next()
        if file is None:
            raise DagError(f"missing JOBSTATE_LOG file name ({syntax})", origin)
        self._no_more(words, origin, syntax)
        if self.dag.jobstate_log is not None:
            self._warn(f"JOBSTATE_LOG {file} does not override the earlier {self.dag.jobstate_log}",
                       origin)
            return
        self.dag.jobstate_log = file

    def _save_point(self, stmt: _Statement) -> None:
        syntax = "SAVE_POINT_FILE NodeName [Filename]"
        words, origin = stmt.words, stmt.origin
        (node,) = self._lookup(words.next(), origin, syntax, all_nodes=False)
        file = words.next()
        self._no_more(words, origin, syntax)
        node.save_point_file = file or f"{node.name}-{os.path.basename(self.file)}.save"
        self._warn(NOT_HONOURED["SAVE_POINT_FILE"], origin)

    def _reject(self, stmt: _Statement) -> None:
        raise DagError("the DAG file is marked REJECT", stmt.origin)

    def _pre_skip(self, stmt: _Statement) -> None:
        syntax = "PRE_SKIP NodeName non-zero-exit-code"
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax)
        code = _int(words.next(), "PRE_SKIP exit code", origin)
        if not 0 <= code <= 255:
            raise DagError(f"PRE_SKIP exit code must be between 0 and 255, not {code}", origin)
        if code == 0:
            self._warn("exit code 0 for a PRE_SKIP value is weird (as HTCondor says)", origin)
        self._no_more(words, origin, syntax)
        for node in nodes:
            if node.pre_skip is not None:
                self._warn(f"new PRE_SKIP value {code} for node {node.name} overrides old value "
                           f"{node.pre_skip}", origin)
            node.pre_skip = code

    def _done(self, stmt: _Statement) -> None:
        syntax = "DONE NodeName"
        words, origin = stmt.words, stmt.origin
        (node,) = self._lookup(words.next(), origin, syntax, all_nodes=False)
        self._no_more(words, origin, syntax)
        if node.kind is NodeKind.FINAL:
            raise DagError(f"the FINAL node {node.name} cannot be marked DONE", origin)
        node.done = True

    def _tolerance(self, stmt: _Statement) -> None:
        syntax = "TOLERANCE NodeName FailureValue[%] [FAIL-FAST | WAIT]"
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax)
        value = words.next()
        if value is None or not value.rstrip("%").isdigit():
            raise DagError(f"TOLERANCE needs a number or percentage ({syntax})", origin)
        mode = words.next()
        if mode is not None and mode.upper() not in ("FAIL-FAST", "WAIT"):
            raise DagError(f"invalid parameter {mode!r} ({syntax})", origin)
        self._no_more(words, origin, syntax)
        self._warn(NOT_HONOURED["TOLERANCE"], origin)
        for node in nodes:
            node.tolerance = value + (f" {mode.upper()}" if mode else "")

    def _pin(self, stmt: _Statement, pins: dict[int, list[Node]]) -> None:
        syntax = f"{stmt.keyword} NodeName PinNumber"
        words, origin = stmt.words, stmt.origin
        (node,) = self._lookup(words.next(), origin, syntax, all_nodes=False)
        number = _int(words.next(), "pin number", origin, minimum=1)
        self._no_more(words, origin, syntax)
        pins.setdefault(number, []).append(node)

    def _pin_in(self, stmt: _Statement) -> None:
        self._pin(stmt, self.pins_in)

    def _pin_out(self, stmt: _Statement) -> None:
        self._pin(stmt, self.pins_out)

    def _connect(self, stmt: _Statement) -> None:
        syntax = "CONNECT OutputSpliceName InputSpliceName"
        words, origin = stmt.words, stmt.origin
        names = [words.next(), words.next()]
        self._no_more(words, origin, syntax)
        if names[0] is None or names[1] is None:
            raise DagError(f"CONNECT needs two splice names ({syntax})", origin)
        out_name, in_name = names[0], names[1]
        splices = []
        for name in (out_name, in_name):
            if name not in self.splices:
                raise DagError(f"{name} is not a splice of this DAG (CONNECT joins splices only)",
                               origin)
            splices.append(self.splices[name])
        out_splice, in_splice = splices
        for name, pins in ((out_name, out_splice.pins_out), (in_name, in_splice.pins_in)):
            if sorted(pins) != list(range(1, len(pins) + 1)):
                raise DagError(f"the pins of splice {name} are not numbered 1 to {len(pins)} "
                               f"without gaps", origin)
        if len(out_splice.pins_out) != len(in_splice.pins_in):
            raise DagError(f"splice {out_name} has {len(out_splice.pins_out)} PIN_OUTs but "
                           f"{in_name} has {len(in_splice.pins_in)} PIN_INs", origin)
        pinned = {n for nodes in in_splice.pins_in.values() for n in nodes}
        for node in in_splice.initial:
            if node not in pinned:
                raise DagError(f"initial node {node.name} of splice {in_name} is not connected "
                               "to a PIN_IN", origin)
        for number, ups in out_splice.pins_out.items():
            for up in ups:
                for down in in_splice.pins_in[number]:
                    if down not in up.children:
                        up.children[down] = None
                        down.parents[up] = None

    @staticmethod
    def _no_more(words: Words, origin: Origin, syntax: str) -> None:
        extra = words.next()
        if extra is not None:
            raise DagError(f"invalid parameter {extra!r} ({syntax})", origin)

    def _check_files(self) -> None:
        if not self.options.check_files:
            return
        seen: dict[tuple[str, str], bool] = {}  # most nodes share a few submit files
        for node in self.own:
            if node.noop or node.inline is not None:
                continue
            wanted = node.dag_file if node.dag_file is not None else node.submit
            key = (node.directory, wanted)
            found = seen.get(key)
            if found is None:
                found = seen[key] = os.path.isfile(os.path.join(self.base, node.directory, wanted))
            if not found:
                where = f" in directory {node.directory}" if node.directory else ""
                what = "DAG file" if node.dag_file is not None else "submit file"
                raise DagError(f"node {node.name}: {what} {wanted}{where} does not exist",
                               node.origin)

    _SECOND_PASS: ClassVar[dict[str, Callable[[_Parser, _Statement], None]]] = {
        "SCRIPT": _script, "PARENT": _parent, "WEAK": _weak, "RETRY": _retry,
        "ABORT-DAG-ON": _abort, "VARS": _vars, "PRIORITY": _priority, "CATEGORY": _category,
        "MAXJOBS": _maxjobs, "CONFIG": _config, "SET_JOB_ATTR": _set_job_attr, "ENV": _env,
        "DOT": _dot, "NODE_STATUS_FILE": _node_status_file, "JOBSTATE_LOG": _jobstate_log,
        "SAVE_POINT_FILE": _save_point, "REJECT": _reject, "PRE_SKIP": _pre_skip,
        "DONE": _done, "TOLERANCE": _tolerance, "PIN_IN": _pin_in, "PIN_OUT": _pin_out,
        "CONNECT": _connect,
    }


_FIRST_PASS = {*NODE_KEYWORDS, "SUBDAG", "SPLICE", "SUBMIT-DESCRIPTION"}


def parse_vars(text: str, position: str, error: Callable[[str], Exception]) -> list[Var]:
    """``name="value" ...`` as VARS takes them: ``\\"`` and ``\\\\`` are the only escapes."""
    pairs: list[Var] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return pairs
        start = i
        while i < n and (text[i].isalnum() or text[i] in "_+."):
            if text[i] == "+" and i > start:
                raise error(f"'+' can only be the first character of a macro name "
                            f"({text[start:i + 1]})")
            i += 1
        name = text[start:i]
        if not name:
            raise error(f"unexpected character {text[i]!r} in VARS")
        if name == "+":
            raise error("a macro name must contain at least one alphanumeric character")
        while i < n and text[i].isspace():
            i += 1
        if i >= n or text[i] != "=":
            if name.upper() in ("PREPEND", "APPEND"):
                raise error(f"{name} must come before all the variables")
            found = text[i] if i < n else "end of line"
            raise error(f"illegal character ({found}) in or after macro name {name}")
        i += 1
        while i < n and text[i].isspace():
            i += 1
        if i >= n or text[i] != '"':
            raise error(f"{name}'s value must be quoted")
        i += 1
        value: list[str] = []
        while True:
            if i >= n:
                raise error(f"missing end quote in the value of {name}")
            c = text[i]
            if c == "\\":
                if i + 1 >= n or text[i + 1] not in '\\"':
                    nxt = text[i + 1] if i + 1 < n else ""
                    raise error(f'unknown escape sequence "\\{nxt}" in the value of {name}')
                value.append(text[i + 1])
                i += 2
                continue
            i += 1
            if c == '"':
                break
            value.append(c)
        if name.lower().startswith("queue"):
            raise error(f"illegal variable name {name}: names cannot begin with \"queue\"")
        pairs.append(Var(name, "".join(value), position))
