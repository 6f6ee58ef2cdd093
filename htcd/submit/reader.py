"""Reads submit-description text into statements, following the statements that shape it:
``include``, ``if``/``elif``/``else``/``endif``, ``use CATEGORY : Name(args)``, ``error :``
and ``warning :``.

These act while the text is read, in file order, as in condor_submit: a condition sees the
variables set above it (and ``$ENV()``), never the configuration or per-job macros.  The
conditions are the configuration language's (``htcd.config``), evaluated by its own code.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from htcd.config import MAX_INCLUDE_DEPTH, ConfigError, conditionals, split_top
from htcd.submit.errors import SubmitError
from htcd.submit.macros import PREVIOUS_PREFIX, Expander, expand_or_raise, rename_reference, self_reference
from htcd.submit.parser import (
    VIRTUAL_LINE,
    ParsedFile,
    QueueStatement,
    Setting,
    assignment,
    is_queue,
    logical_lines,
    parse_queue,
    queue_rest,
)
from htcd.submit.sources import SourceError, Sources
from htcd.submit.templates import TemplateSet

_WORD = re.compile(r"[A-Za-z0-9_.]*")
_CONDITIONALS = ("if", "elif", "else", "endif")


class _Scope:
    """What the configuration language's ``if`` asks of its surroundings, from a submit file."""

    def __init__(self, reader: Reader, source: str, line: int) -> None:
        self.reader, self.source, self.line = reader, source, line

    def expand(self, text: str) -> str:
        return expand_or_raise(self.reader.expander(), text, source=self.source, line=self.line).strip()

    def is_defined(self, name: str) -> bool:
        self.reader.parsed.used.add(name.lower())
        return bool(self.reader.values.get(name.lower(), "").strip())


class Reader:
    """Collects the statements of one submit description into ``parsed``."""

    def __init__(self, filename: str, *, sources: Sources, templates: TemplateSet,
                 env: Mapping[str, str], path: str | None = None) -> None:
        self.parsed = ParsedFile(filename)
        self.sources = sources
        self.templates = templates
        self.env = env
        #: The variables set so far (lower-case name -> unexpanded value), for conditions.
        self.values: dict[str, str] = {}
        #: The files being read, outermost first, by ``sources.name``: an include loop names them.
        self.chain = [path] if path else [] if filename.startswith("<") else [sources.name(filename)]
        self._next = VIRTUAL_LINE
        self._generation = 0

    def expander(self) -> Expander:
        return Expander(self._lookup, self.env)

    def _lookup(self, name: str) -> str | None:
        self.parsed.used.add(name.lower())
        return self.values.get(name.lower())

    def line_for(self, source: str, line: int | None) -> int:
        """The statement line for ``source:line``: itself in the top file, else a new virtual one."""
        if source == self.parsed.filename and line is not None:
            return line
        self._next += 1
        self.parsed.origins[self._next] = (source, line)
        return self._next

    def read(self, text: str, source: str, *, at: tuple[str, int] | None = None, depth: int = 0) -> None:
        """Read ``text`` of ``source``; ``at`` pins every statement to one line (a template's ``use``)."""
        lines = logical_lines(text)
        stack: list[list] = []  # the configuration language's frames; [4] is the if's line
        active = True
        i = 0
        while i < len(lines):
            num, line = lines[i]
            i += 1
            if not line:
                continue
            src, ln = at or (source, num)
            word = _WORD.match(line).group()  # type: ignore[union-attr]  # the pattern matches the empty string
            rest = line[len(word):]
            lw = word.lower()
            keyword = not rest.lstrip().startswith("=")
            if keyword and lw in _CONDITIONALS:
                try:
                    active = conditionals.step(_Scope(self, src, ln), lw, rest, stack, active, src, ln)
                except ConfigError as err:
                    raise SubmitError(err.message, source=err.source, line=err.line) from None
                continue
            if not active:
                continue
            if keyword and lw == "include" and (not rest or rest[:1].isspace() or rest.lstrip().startswith(":")):
                self._include(rest, src, ln, depth)
            elif keyword and lw in ("error", "warning") and rest.lstrip().startswith(":"):
                self._message(lw, rest.lstrip()[1:], src, ln)
            elif keyword and lw == "use" and (not rest or rest[:1].isspace()):
                self._use(rest, src, ln, depth)
            elif (qm := is_queue(line)) and depth > 0:
                raise SubmitError("a queue statement cannot come from an included file, a command's output "
                                  "or a template: write it in the submit file", source=src, line=ln)
            elif qm:
                rest_text, i = queue_rest(lines, i, qm.group("rest").strip(), ln, src)
                stmt = parse_queue(rest_text, ln, src)
                self.parsed.statements.append(dataclasses.replace(stmt, line=self.line_for(src, ln)))
            elif (setting := assignment(line)) is not None:
                self._setting(setting, self.line_for(src, ln))
            else:
                raise SubmitError(f"cannot parse line {line!r}: expected 'name = value', a queue statement, "
                                  f"or include, if, use, error or warning (unknown statement {line.split()[0]!r})",
                                  source=src, line=ln)
        if stack:
            where = "template" if at else "file"
            raise SubmitError(f"if on line {stack[-1][4]} has no endif before the end of the {where}",
                              source=at[0] if at else source, line=stack[-1][4])

    def _setting(self, setting: Setting, line: int) -> None:
        """Keep ``name = value``; a value that names its own variable reads the value before it."""
        value = setting.value
        if self_reference(setting.key, value):
            # condor_submit expands $(foo) in `foo = snap $(foo)` with foo's previous value: keep that
            # value under a name of its own and point the reference at it.
            self._generation += 1
            hidden = f"{PREVIOUS_PREFIX}{self._generation}_{setting.key}"
            previous = self.values.get(setting.key)
            if previous is not None:
                self.values[hidden] = previous
                self.parsed.statements.append(Setting(hidden, previous, line))
            value = rename_reference(value, setting.key, hidden)
        self.values[setting.key] = value
        self.parsed.statements.append(Setting(setting.name, value, line))

    def _include(self, rest: str, source: str, line: int, depth: int) -> None:
        """``include [ifexist] [command] : target``, or ``include : command |``."""
        head, sep, target = rest.partition(":")
        if not sep:
            raise SubmitError("include needs ':' before what to include (include : FILE, or include : COMMAND |)",
                              source=source, line=line)
        opts = head.lower().split()
        bad = [o for o in opts if o not in ("ifexist", "command")]
        if bad:
            raise SubmitError(f"unknown include option {bad[0]!r} (known: ifexist, command)",
                              source=source, line=line)
        target = expand_or_raise(self.expander(), target, source=source, line=line).strip()
        command = "command" in opts or target.endswith("|")
        target = target.removesuffix("|").strip()
        if not target:
            raise SubmitError("include without a file name or command", source=source, line=line)
        if depth >= MAX_INCLUDE_DEPTH:
            raise SubmitError(f"include {target!r}: includes nested deeper than {MAX_INCLUDE_DEPTH}",
                              source=source, line=line)
        if command:
            try:
                text = self.sources.run(target)
            except SourceError as err:
                raise SubmitError(f"include command {target!r}: {err}", source=source, line=line) from None
            self.read(text, f"<output of {target!r}>", depth=depth + 1)
            return
        name = self.sources.name(target)
        if name in self.chain:
            loop = " -> ".join([*self.chain[self.chain.index(name):], name])
            raise SubmitError(f"include {target!r}: the files include each other: {loop}", source=source, line=line)
        if "ifexist" in opts and not self.sources.exists(target):
            return
        try:
            text = self.sources.read(target)
        except SourceError as err:
            raise SubmitError(f"include {target!r}: {err}", source=source, line=line) from None
        self.chain.append(name)
        try:
            self.read(text, name, depth=depth + 1)
        finally:
            self.chain.pop()

    def _message(self, kind: str, text: str, source: str, line: int) -> None:
        """``error : text`` refuses the submit file with that text; ``warning : text`` is reported."""
        text = expand_or_raise(self.expander(), text, source=source, line=line).strip()
        if kind == "error":
            raise SubmitError(text or "error statement", source=source, line=line)
        self.parsed.warnings.append(f"{source}:{line}: {text}")

    def _use(self, rest: str, source: str, line: int, depth: int) -> None:
        """``use CATEGORY : Name[(args)][, Name...]``: read each template's text here."""
        cat, sep, items = rest.partition(":")
        cat = cat.strip()
        if not sep or not cat:
            raise SubmitError("use needs 'CATEGORY : Name', e.g. 'use template : Name(args)'",
                              source=source, line=line)
        for item in split_top(items, ","):
            item = item.strip()
            if not item:
                continue
            name, paren, args = item.partition("(")
            if paren and not args.rstrip().endswith(")"):
                raise SubmitError(f"use {cat} : {item}: missing ')'", source=source, line=line)
            label = f"use {cat} : {name.strip()}"
            try:
                text = self.templates.expand(cat, name.strip(), args.rstrip()[:-1] if paren else "")
            except KeyError as err:
                raise SubmitError(f"{label}: {err.args[0]}", source=source, line=line) from None
            if depth >= MAX_INCLUDE_DEPTH:
                raise SubmitError(f"{label}: templates nested deeper than {MAX_INCLUDE_DEPTH}",
                                  source=source, line=line)
            try:
                self.read(text, source, at=(source, line), depth=depth + 1)
            except SubmitError as err:
                if (err.source, err.line) != (source, line) or err.message.startswith("use "):
                    raise
                raise SubmitError(f"{label}: {err.message}", source=source, line=line) from None


def read_queue(reader: Reader, text: str, source: str) -> QueueStatement:
    """A ``-queue`` argument as a queue statement; its errors name ``source``."""
    try:
        stmt = parse_queue(text, 0, source)
    except SubmitError as err:
        raise SubmitError(err.message, source=source) from None
    return dataclasses.replace(stmt, line=reader.line_for(source, None))

