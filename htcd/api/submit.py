"""``Submit``: a job description as htcondor2 holds it, a dict of submit commands plus the
arguments of one queue statement, built from a dict, keyword arguments or submit-file text.

The description is kept as text lines (so ``include``, ``use`` and ``if`` lines of a submit file
survive) and handed to htcd's submit language whole when the schedd gets it: every check and
error message is the one ``htcd submit`` gives, naming the line."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any

from htcd.errors import UserError
from htcd.submit import SubmitDescription, parse_submit
from htcd.submit.macros import Expander, MacroError
from htcd.submit.parser import assignment, is_queue, logical_lines, parse_queue, queue_rest, split_row
from htcd.submit.predefined import predefined
from htcd.submit.templates import TemplateSet

from .errors import HTCondorException

SOURCE = "<htcd.api.Submit>"  # what error messages name as the file
_QUEUE_WORD = re.compile(r"^\s*queue\b\s*", re.IGNORECASE)
_COUNT = re.compile(r"^\s*(\d+|\$\([^)]*\))?\s*(.*)$", re.DOTALL)


def _key_name(name: str) -> str:
    """htcondor2 spells ``+Attr`` as ``MY.Attr``."""
    return "MY." + name[1:] if name.startswith("+") else name


class Submit(MutableMapping[str, str]):
    """A submit description: ``Submit({"executable": "/bin/sleep"})``, ``Submit(executable=...)``
    or ``Submit(submit_file_text)``; ``queue`` sets the queue statement's arguments."""

    def __init__(self, input: Mapping[str, str] | str | None = None, queue: str | None = None,
                 **kwargs: str) -> None:
        #: lines in order: (lower-case key, name, value) for settings, (None, text, "") for others
        self._lines: list[tuple[str | None, str, str]] = []
        self._qargs: str | None = None
        if isinstance(input, str):
            self._read(input)
        elif input is not None:
            for k, v in dict(input).items():
                self[k] = v
        for k, v in kwargs.items():
            self[k] = v
        if queue is not None:
            self.setQArgs(queue)

    def _read(self, text: str) -> None:
        lines = logical_lines(text)
        i = 0
        while i < len(lines):
            line_no, line = lines[i]
            i += 1
            if not line:
                continue
            if is_queue(line):
                try:
                    rest, i = queue_rest(lines, i, _QUEUE_WORD.sub("", line, count=1), line_no, SOURCE)
                except UserError as exc:
                    raise HTCondorException(str(exc)) from None
                if self._qargs is not None:
                    raise HTCondorException(f"{SOURCE}:{line_no}: a Submit object holds one queue statement; "
                                            "this is the second (submit it with htcd submit instead)")
                self._qargs = rest.strip()
                continue
            setting = assignment(line)
            if setting is None:
                self._lines.append((None, line, ""))
            else:
                written = line.partition("=")[0].strip()  # "My.x" keeps its spelling, "+x" is "MY.x"
                self[written if written.lower().startswith("my.") else _key_name(setting.name)] = setting.value

    # -- the mapping
    def _find(self, key: str) -> int:
        low = key.lower()
        for i, (k, _, _) in enumerate(self._lines):
            if k == low:
                return i
        return -1

    def __getitem__(self, key: str) -> str:
        i = self._find(_key_name(key))
        if i < 0:
            raise KeyError(key)
        return self._lines[i][2]

    def __setitem__(self, key: str, value: str) -> None:
        if not isinstance(key, str):
            raise TypeError("key must be a string")
        if not isinstance(value, str):
            raise TypeError("value must be a string")
        name = _key_name(key)
        i = self._find(name)
        if i < 0:
            self._lines.append((name.lower(), name, value))
        else:
            self._lines[i] = (name.lower(), self._lines[i][1], value)

    def __delitem__(self, key: str) -> None:
        i = self._find(_key_name(key))
        if i < 0:
            raise KeyError(key)
        del self._lines[i]

    def __iter__(self) -> Iterator[str]:
        return iter([name for k, name, _ in self._lines if k is not None])

    def __len__(self) -> int:
        return sum(1 for k, _, _ in self._lines if k is not None)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(_key_name(key)) >= 0

    # -- text
    def body(self) -> str:
        """The description without its queue statement."""
        return "".join(f"{name} = {value}\n" if k is not None else f"{name}\n" for k, name, value in self._lines)

    def __str__(self) -> str:
        q = self._qargs or ""
        return self.body() + ("queue " + q if q else "queue") + "\n"

    def __repr__(self) -> str:
        return f"Submit({self})"

    # -- the queue statement
    def getQArgs(self) -> str:
        return self._qargs or ""

    def setQArgs(self, args: str) -> None:
        if not isinstance(args, str):
            raise TypeError("args must be a string")
        self._qargs = _QUEUE_WORD.sub("", args, count=1).strip() if is_queue(args.strip()) else args.strip()

    def itemdata(self, qargs: str | None = None) -> Iterator[str] | Iterator[dict[str, str]]:
        """The items of the queue statement (``qargs``, default this description's): dicts of
        variable -> value, or strings when the statement names no variable."""
        text = self.getQArgs() if qargs is None else qargs
        try:
            stmt = parse_queue(text, 0, SOURCE)
        except UserError as exc:
            raise HTCondorException(str(exc)) from None
        if not stmt.source:
            return iter([])
        desc = self._description(f"queue {text}")
        try:
            rows = desc._items(stmt, self._expander(), os.getcwd())
        except UserError as exc:
            raise HTCondorException(str(exc)) from None
        if not stmt.variables:
            return iter([r.get("item", "") for r in rows])
        names = {v.lower(): v for v in stmt.variables}
        return iter([{names[k]: v for k, v in r.items() if k in names} for r in rows])

    # -- macro expansion
    def _expander(self, extra: Mapping[str, str] | None = None) -> Expander:
        from .config import config

        cfg = config()
        table = {"cluster": "1", "clusterid": "1", "process": "0", "procid": "0", "node": "0", "step": "0",
                 "itemindex": "0", "row": "0", **predefined("", 0, cfg.get)}
        own = {k: v for k, _, v in self._lines if k is not None}
        extra = {k.lower(): v for k, v in (extra or {}).items()}

        def lookup(name: str) -> str | None:
            low = name.lower()
            if low in extra:
                return extra[low]
            if low in own:
                return own[low]
            return table.get(low)

        return Expander(lookup, os.environ)

    def expand(self, attr: str) -> str:
        """The value of ``attr`` with its macros expanded (unknown ones are empty), as cluster 1 proc 0."""
        try:
            return self._expander().expand(self[attr])
        except MacroError as exc:
            raise HTCondorException(f"{SOURCE}: {attr}: {exc}") from None

    # -- what the schedd gets
    def _description(self, queue_line: str) -> SubmitDescription:
        from .config import config

        try:
            return parse_submit(self.body() + queue_line + "\n", SOURCE, submit_dir=os.getcwd(),
                                templates=TemplateSet.from_config(config()))
        except UserError as exc:
            raise HTCondorException(str(exc)) from None

    def queue_line(self, count: int = 0, itemdata: Iterable[str] | Iterable[Mapping[str, str]] | None = None,
                   queue: str | None = None) -> str:
        """The queue statement a submit with these arguments uses (htcondor2's rules: ``queue``
        replaces the description's statement; ``itemdata`` gives the items and ``count`` the
        number of jobs per item)."""
        if queue is not None:
            return "queue " + _QUEUE_WORD.sub("", queue, count=1).strip()
        if itemdata is not None:
            return _itemdata_statement(count, list(itemdata), self.getQArgs())
        own = self.getQArgs()
        if not count:
            return "queue " + own if own else "queue"
        m = _COUNT.match(own)
        rest = m.group(2) if m else own
        return f"queue {count} {rest}".rstrip()


def _itemdata_statement(count: int, items: list[Any], qargs: str) -> str:
    """``queue [count] vars from (rows)`` for items given in Python; a value the submit
    language would split differently than given is refused, never silently changed."""
    prefix = f"queue {count} " if count else "queue "
    if not items:
        return prefix + "0"
    if all(isinstance(x, Mapping) for x in items):
        names = list(items[0].keys())
        for item in items:
            if list(item.keys()) != names:
                raise ValueError("every itemdata dict must have the same keys, in the same order")
        rows = []
        for item in items:
            values = [str(item[n]) for n in names]
            for n, v in zip(names, values[:-1], strict=False):
                if not v or re.search(r"[\s,]", v):
                    raise ValueError(f"itemdata value {v!r} of {n!r}: only the last variable of a row may "
                                     "be empty or hold spaces or commas")
            if "\n" in values[-1] or (values and split_row(" ".join(values), len(names)) != values):
                raise ValueError(f"itemdata row {item!r} cannot be written as one row of a queue statement")
            rows.append(" ".join(values))
        return f"{prefix}{','.join(names)} from (\n" + "\n".join(rows) + "\n)"
    if not all(isinstance(x, str) for x in items):
        raise TypeError("itemdata must be an iterator of strings or of dicts")
    stmt_vars = ""
    if qargs:
        try:
            stmt_vars = ",".join(parse_queue(qargs, 0, SOURCE).variables)
        except UserError:
            stmt_vars = ""
    for x in items:
        if "\n" in x:
            raise ValueError(f"itemdata item {x!r} holds a newline")
    return f"{prefix}{stmt_vars or 'Item'} from (\n" + "\n".join(items) + "\n)"
