"""The statements of the second pass (all but those that make nodes), on a parser's DAG.

A mixin of the DAG parser: each handler reads one statement's words, finds the nodes it
names, and sets what it says on them or on the DAG; a problem raises :class:`DagError` at
the statement's line, and what htcd's runtime will not act on draws a warning.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from htcd.dagman.errors import DagError, DagWarning, Origin
from htcd.dagman.lexer import Words
from htcd.dagman.macros import unknown_macros
from htcd.dagman.model import (
    ALL_NODES,
    OUTSIDE_GRAPH,
    Dag,
    Dot,
    Node,
    NodeKind,
    NodeStatusFile,
    Script,
    ScriptKind,
    Var,
)
from htcd.dagman.options import ParseOptions

# Statements htcd reads but whose effect the runtime does not (yet) give: each draws a warning.
NOT_HONOURED = {
    "DOT": "htcd writes no Graphviz DOT file; DOT is ignored",
    "SAVE_POINT_FILE": "htcd writes no save point files; SAVE_POINT_FILE is ignored",
    "PROVISIONER": "htcd starts a PROVISIONER node like any other node (no provisioning wait)",
    "TOLERANCE": "htcd does not apply node TOLERANCE; a failed job fails its node",
}


class Statement:
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
class SpliceEnds:
    """What the parent DAG needs of a lifted splice: its edge ends and its pins."""

    initial: list[Node]
    terminal: list[Node]
    pins_in: dict[int, list[Node]] = field(default_factory=dict)
    pins_out: dict[int, list[Node]] = field(default_factory=dict)


def parse_int(word: str | None, what: str, origin: Origin, *, minimum: int | None = None) -> int:
    """The integer a statement's word must be."""
    if word is None:
        raise DagError(f"missing {what}", origin)
    try:
        value = int(word)
    except ValueError:
        raise DagError(f"{what} must be an integer, not {word!r}", origin) from None
    if minimum is not None and value < minimum:
        raise DagError(f"{what} must be at least {minimum}, not {value}", origin)
    return value


class SecondPass:
    """The handlers of the second-pass statements; the parser supplies the attributes."""

    dag: Dag
    file: str
    base: str
    options: ParseOptions
    own: list[Node]
    splices: dict[str, SpliceEnds]
    pins_in: dict[int, list[Node]]
    pins_out: dict[int, list[Node]]

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

    def _script(self, stmt: Statement) -> None:
        syntax = ("SCRIPT [DEFER status time] [DEBUG file (STDOUT|STDERR|ALL)] (PRE|POST|HOLD) "
                  "NodeName Script Args ...")
        words, origin = stmt.words, stmt.origin
        kind_word = words.next()
        if kind_word is None:
            raise DagError(f"missing PRE, POST, HOLD or DEFER ({syntax})", origin)
        defer_status = None
        defer_time = 0
        if kind_word.upper() == "DEFER":
            defer_status = parse_int(words.next(), "DEFER status value", origin, minimum=1)
            defer_time = parse_int(words.next(), "DEFER time value", origin, minimum=0)
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

    def _parent(self, stmt: Statement, weak: bool = False) -> None:
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

    def _weak(self, stmt: Statement) -> None:
        self._parent(stmt, weak=True)

    def _retry(self, stmt: Statement) -> None:
        syntax = "RETRY NodeName NumberOfRetries [UNLESS-EXIT value]"
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax, final=False)
        count = parse_int(words.next(), "number of retries", origin, minimum=0)
        unless = None
        word = words.next()
        if word is not None:
            if word.upper() != "UNLESS-EXIT":
                raise DagError(f"invalid parameter {word!r} ({syntax})", origin)
            unless = parse_int(words.next(), "UNLESS-EXIT value", origin)
            if extra := words.next():
                raise DagError(f"invalid parameter {extra!r} ({syntax})", origin)
        for node in nodes:
            node.retry = count
            node.retry_unless_exit = unless

    def _abort(self, stmt: Statement) -> None:
        syntax = "ABORT-DAG-ON NodeName NodeExitValue [RETURN DAGReturnValue]"
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax, final=False)
        status = parse_int(words.next(), "node exit value", origin)
        ret = None
        word = words.next()
        if word is not None:
            if word.upper() != "RETURN":
                raise DagError(f"invalid parameter {word!r} ({syntax})", origin)
            ret = parse_int(words.next(), "DAG return value", origin)
            if not 0 <= ret <= 255:
                raise DagError(f"DAG return value must be between 0 and 255, not {ret}", origin)
            if extra := words.next():
                raise DagError(f"invalid parameter {extra!r} ({syntax})", origin)
        for node in nodes:
            node.abort_status = status
            node.abort_return = ret

    def _vars(self, stmt: Statement) -> None:
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

    def _priority(self, stmt: Statement) -> None:
        syntax = "PRIORITY NodeName PriorityValue"
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax, final=False)
        value = parse_int(words.next(), "priority value", origin)
        self._no_more(words, origin, syntax)
        for node in nodes:
            node.priority = value

    def _category(self, stmt: Statement) -> None:
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

    def _maxjobs(self, stmt: Statement) -> None:
        syntax = "MAXJOBS CategoryName MaxJobsValue"
        words, origin = stmt.words, stmt.origin
        category = words.next()
        if category is None:
            raise DagError(f"missing category name ({syntax})", origin)
        limit = parse_int(words.next(), "MAXJOBS value", origin, minimum=0)
        self._no_more(words, origin, syntax)
        self.dag.max_jobs[category] = limit

    def _config(self, stmt: Statement) -> None:
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
        if self.dag.config is None:
            self.dag.config_origin = origin
        self.dag.config = file

    def _set_job_attr(self, stmt: Statement) -> None:
        syntax = "SET_JOB_ATTR AttributeName = AttributeValue"
        text = stmt.words.rest()
        name, eq, value = text.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name or not value or any(c in name for c in " \t"):
            raise DagError(f"expected an attribute assignment ({syntax})", stmt.origin)
        self.dag.set_job_attrs.append((name, value))

    def _env(self, stmt: Statement) -> None:
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

    def _dot(self, stmt: Statement) -> None:
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

    def _node_status_file(self, stmt: Statement) -> None:
        syntax = "NODE_STATUS_FILE filename [minimumUpdateTime] [ALWAYS-UPDATE]"
        words, origin = stmt.words, stmt.origin
        file = words.next()
        if file is None:
            raise DagError(f"missing node status file name ({syntax})", origin)
        status = NodeStatusFile(file)
        word = words.next()
        if word is not None and word.upper() != "ALWAYS-UPDATE":
            status.min_update_time = parse_int(word, "minimum update time", origin, minimum=0)
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

    def _jobstate_log(self, stmt: Statement) -> None:
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

    def _save_point(self, stmt: Statement) -> None:
        syntax = "SAVE_POINT_FILE NodeName [Filename]"
        words, origin = stmt.words, stmt.origin
        (node,) = self._lookup(words.next(), origin, syntax, all_nodes=False)
        file = words.next()
        self._no_more(words, origin, syntax)
        node.save_point_file = file or f"{node.name}-{os.path.basename(self.file)}.save"
        self._warn(NOT_HONOURED["SAVE_POINT_FILE"], origin)

    def _reject(self, stmt: Statement) -> None:
        raise DagError("the DAG file is marked REJECT", stmt.origin)

    def _pre_skip(self, stmt: Statement) -> None:
        syntax = "PRE_SKIP NodeName non-zero-exit-code"
        words, origin = stmt.words, stmt.origin
        nodes = self._lookup(words.next(), origin, syntax)
        code = parse_int(words.next(), "PRE_SKIP exit code", origin)
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

    def _done(self, stmt: Statement) -> None:
        syntax = "DONE NodeName"
        words, origin = stmt.words, stmt.origin
        (node,) = self._lookup(words.next(), origin, syntax, all_nodes=False)
        self._no_more(words, origin, syntax)
        if node.kind is NodeKind.FINAL:
            raise DagError(f"the FINAL node {node.name} cannot be marked DONE", origin)
        node.done = True

    def _tolerance(self, stmt: Statement) -> None:
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

    def _pin(self, stmt: Statement, pins: dict[int, list[Node]]) -> None:
        syntax = f"{stmt.keyword} NodeName PinNumber"
        words, origin = stmt.words, stmt.origin
        (node,) = self._lookup(words.next(), origin, syntax, all_nodes=False)
        number = parse_int(words.next(), "pin number", origin, minimum=1)
        self._no_more(words, origin, syntax)
        pins.setdefault(number, []).append(node)

    def _pin_in(self, stmt: Statement) -> None:
        self._pin(stmt, self.pins_in)

    def _pin_out(self, stmt: Statement) -> None:
        self._pin(stmt, self.pins_out)

    def _connect(self, stmt: Statement) -> None:
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


HANDLERS: dict[str, Callable[[SecondPass, Statement], None]] = {
    "SCRIPT": SecondPass._script, "PARENT": SecondPass._parent, "WEAK": SecondPass._weak,
    "RETRY": SecondPass._retry, "ABORT-DAG-ON": SecondPass._abort, "VARS": SecondPass._vars,
    "PRIORITY": SecondPass._priority, "CATEGORY": SecondPass._category,
    "MAXJOBS": SecondPass._maxjobs, "CONFIG": SecondPass._config,
    "SET_JOB_ATTR": SecondPass._set_job_attr, "ENV": SecondPass._env, "DOT": SecondPass._dot,
    "NODE_STATUS_FILE": SecondPass._node_status_file, "JOBSTATE_LOG": SecondPass._jobstate_log,
    "SAVE_POINT_FILE": SecondPass._save_point, "REJECT": SecondPass._reject,
    "PRE_SKIP": SecondPass._pre_skip, "DONE": SecondPass._done,
    "TOLERANCE": SecondPass._tolerance, "PIN_IN": SecondPass._pin_in,
    "PIN_OUT": SecondPass._pin_out, "CONNECT": SecondPass._connect,
}


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
