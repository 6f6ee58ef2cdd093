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

from htcd.dagman.errors import DagError, Origin
from htcd.dagman.graph import check_acyclic
from htcd.dagman.lexer import LineReader, Words
from htcd.dagman.model import ALL_NODES, SPLICE_SEPARATOR, Dag, Node, NodeKind
from htcd.dagman.options import ParseOptions
from htcd.dagman.statements import (
    HANDLERS,
    NOT_HONOURED,
    SecondPass,
    SpliceEnds,
    Statement,
)

NODE_KEYWORDS = {"JOB": NodeKind.JOB, "FINAL": NodeKind.FINAL, "SERVICE": NodeKind.SERVICE,
                 "PROVISIONER": NodeKind.PROVISIONER}
RESERVED_NAMES = ("PARENT", "CHILD", ALL_NODES)
DAG_SUBMIT_SUFFIX = ".condor.sub"


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



class _Parser(SecondPass):
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
        self.splices: dict[str, SpliceEnds] = {}
        self.splice_dirs: dict[str, str] = {}
        self.pins_in: dict[int, list[Node]] = {}
        self.pins_out: dict[int, list[Node]] = {}
        self.splice_configs: list[tuple[str, str, Origin]] = []  # splice, its CONFIG, SPLICE line

    # -- reading ---------------------------------------------------------------------------

    def _statements(self, text: str, file: str, chain: tuple[str, ...],
                    including: tuple[str, ...]) -> list[Statement]:
        """Every statement of ``text``, INCLUDEd files spliced in where they are named."""
        self.dag.files.append(file)
        reader = LineReader(text)
        out: list[Statement] = []
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
            stmt = Statement(file, lineno, chain, keyword, words)
            if keyword in NODE_KEYWORDS or keyword == "SUBMIT-DESCRIPTION":
                reader.seek(pos)
                self._read_inline(stmt, reader, file, chain)
                pos = reader.simple_lines()[1]
            out.append(stmt)
        return out

    def _read_inline(self, stmt: Statement, reader: LineReader, file: str,
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
            handler = HANDLERS.get(stmt.keyword)
            if handler is not None:
                handler(self, stmt)
            elif stmt.keyword not in _FIRST_PASS:
                raise DagError(
                    f"unknown statement {stmt.words.text.split()[0]!r} (expected one of "
                    + ", ".join(sorted(_FIRST_PASS | set(HANDLERS) | {"INCLUDE"})) + ")",
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

    def _node_options(self, stmt: Statement, kind: NodeKind, syntax: str) -> tuple[str, bool, bool]:
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

    def _node(self, stmt: Statement, kind: NodeKind) -> None:
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

    def _subdag(self, stmt: Statement) -> None:
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

    def _submit_description(self, stmt: Statement) -> None:
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

    def _splice(self, stmt: Statement) -> None:
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
        self.splices[name] = SpliceEnds(sub.initial_nodes(), sub.terminal_nodes(),
                                        inner.pins_in, inner.pins_out)

    def _check_files(self) -> None:
        if not self.options.check_files:
            return
        seen: dict[tuple[str, str], bool] = {}  # most nodes share a few submit files
        for node in self.own:
            # a SUBDAG EXTERNAL's DAG file is read when the node runs, as condor_dagman does (a
            # PRE script or a parent may write it: htcondor-dags' "delayed diamond")
            if node.noop or node.inline is not None or node.dag_file is not None:
                continue
            wanted = node.submit
            key = (node.directory, wanted)
            found = seen.get(key)
            if found is None:
                found = seen[key] = os.path.isfile(os.path.join(self.base, node.directory, wanted))
            if not found:
                where = f" in directory {node.directory}" if node.directory else ""
                raise DagError(f"node {node.name}: submit file {wanted}{where} does not exist",
                               node.origin)


_FIRST_PASS = {*NODE_KEYWORDS, "SUBDAG", "SPLICE", "SUBMIT-DESCRIPTION"}
