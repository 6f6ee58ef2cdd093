"""Reading HTCondor-style configuration: sources, the line parser, lazy lookups.

Definitions are stored unexpanded and expanded on lookup, as HTCondor does, so a later
``A = 2`` changes every knob that says ``$(A)``.  A knob that refers to itself is the
exception: ``A = $(A) more`` takes the previous definition at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from htcd.config import conditionals
from htcd.config._expand import WHERE, Arith, ConfigError, expand, find_close, split_top
from htcd.config._lines import append_separator, assignment, first_word
from htcd.config._table import COMPUTED, fallback, lookup, table
from htcd.config.persist_file import persistent_file

#: The HTCondor release whose config language this follows; ``if version`` compares with it.
MAX_INCLUDE_DEPTH = 20
EMBEDDED = "<embedded default>"
PARAM_TABLE = "<param table>"
ENVIRONMENT = "<environment>"
_TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")

#: Used when no top config file exists: a personal pool on this machine, state per user.
EMBEDDED_DEFAULT = """\
# A personal pool on this machine: every daemon, the collector on an ephemeral port of
# loopback (daemons find it through COLLECTOR_ADDRESS_FILE), state kept per user; the
# default security policy (docs/security.md).
use ROLE : Personal
use SECURITY : Recommended
CONDOR_HOST = 127.0.0.1
COLLECTOR_HOST = $(CONDOR_HOST):0
LOCAL_DIR = $ENV(XDG_STATE_HOME:$ENV(HOME)/.local/state)/htcd
"""

_TRUE = {"true", "yes", "t", "y", "1", "on"}
_FALSE = {"false", "no", "f", "n", "0", "off"}


class Entry:
    """One definition: its spelling, raw text and where it came from."""

    __slots__ = ("line", "name", "raw", "source")

    def __init__(self, name: str, raw: str, source: str, line: int) -> None:
        self.name = name
        self.raw = raw
        self.source = source
        self.line = line

    def __repr__(self) -> str:
        return f"Entry({self.name!r}, {self.raw!r}, {self.source!r}, {self.line})"


class Config:
    """A loaded configuration as one daemon (``subsystem`` / ``local_name``) sees it."""

    def __init__(self, subsystem: str = "TOOL", local_name: str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.subsystem = subsystem.upper()
        self.local_name = local_name
        self.files: list[str] = []
        #: The persistent-config file read (config_val -set), if any.
        self.persistent: str | None = None
        self._env: Mapping[str, str] = os.environ if env is None else env
        self._defs: dict[str, Entry] = {}
        self._cache: dict[str, str | None] | None = None
        self._prefixes = [p.lower() + "." for p in (local_name, self.subsystem) if p]

    # ----- lookups ---------------------------------------------------------------------------

    def _entry(self, name: str) -> Entry | None:
        """The winning definition of ``name``: local-name prefix, subsystem prefix, plain, default."""
        key = name.lower()
        defs = self._defs
        if "." not in key:
            for p in self._prefixes:
                e = defs.get(p + key)
                if e is not None:
                    return e
        e = defs.get(key)
        if e is not None:
            return e
        return _default_entry(key, self.subsystem)

    def _value(self, name: str, stack: list[str]) -> str | None:
        key = name.lower()
        cache = self._cache
        if cache is not None and key in cache:
            return cache[key]
        e = self._entry(key)
        if e is None:
            value = None
        else:
            if key in stack:
                chain = " -> ".join([*stack[stack.index(key):], key]).upper()
                first = self._entry(stack[stack.index(key)])
                raise ConfigError(f"macro recursion: {chain}",
                                  source=first.source if first else None, line=first.line if first else None)
            stack.append(key)
            WHERE.append((e.source, e.line))
            try:
                value = expand(e.raw, self._value, self._env, stack)
            except ConfigError as err:
                if err.source is not None:
                    raise
                raise ConfigError(f"{e.name} = {e.raw}: {err.message}", source=e.source, line=e.line) from None
            finally:
                stack.pop()
                WHERE.pop()
        if cache is not None:
            cache[key] = value
        return value

    def get(self, name: str, default: str | None = None) -> str | None:
        """The fully expanded value; an empty value counts as undefined, as in HTCondor."""
        value = self._value(name, [])
        return value if value else default

    def _typed_value(self, name: str) -> str | None:
        """What the typed getters read: the value, else the param table's ``-(...)`` fallback.

        A config or param-table value wins over a getter's ``default`` argument, which is only
        for knobs the table does not know; tests/config/test_call_site_defaults.py keeps the two
        from disagreeing where both are written."""
        value = self.get(name)
        return value if value is not None else fallback(name)

    def raw(self, name: str) -> str | None:
        """The winning definition as written, before expansion."""
        e = self._entry(name)
        return None if e is None else e.raw

    def where(self, name: str) -> tuple[str, int] | None:
        """(file, line) of the winning definition, or a ``<...>`` pseudo-source."""
        e = self._entry(name)
        return None if e is None else (e.source, e.line)

    def expand(self, text: str) -> str:
        """Expand ``$(...)`` in any text against this config (e.g. ``$(LOG)/SchedLog``)."""
        return expand(text, self._value, self._env, [])

    def _fail(self, name: str, value: str, what: str) -> ConfigError:
        e = self._entry(name)
        return ConfigError(f"{name.upper()} = {value}: not {what}",
                           source=e.source if e else None, line=e.line if e else None)

    def get_bool(self, name: str, default: bool = False) -> bool:
        """true/yes/t/1/on or false/no/f/0/off, any case; anything else is an error."""
        value = self._typed_value(name)
        if value is None:
            return default
        v = value.strip().lower()
        if v in _TRUE:
            return True
        if v in _FALSE:
            return False
        raise self._fail(name, value, "a boolean")

    def get_int(self, name: str, default: int = 0) -> int:
        """An integer, or simple arithmetic (``2*1024``, ``MIN({a, b})``) that yields one.

        A knob of type ``size`` in the param table (MAX_*_LOG) also takes units, as HTCondor does
        (``10 Mb`` is 10485760); see get_size.
        """
        value = self._typed_value(name)
        if value is None:
            return default
        try:
            return int(value.strip(), 10)
        except ValueError:
            pass
        try:
            result = Arith(value).parse()
        except ValueError:
            p = table().get(name.lower().rsplit(".", 1)[-1])
            size = parse_size(value) if p is not None and p.type == "size" else None
            if size is None:
                raise self._fail(name, value, "an integer") from None
            return size
        if isinstance(result, float):
            if not result.is_integer():
                raise self._fail(name, value, "an integer")
            result = int(result)
        return result

    def get_float(self, name: str, default: float = 0.0) -> float:
        """A real number, or simple arithmetic that yields one."""
        value = self._typed_value(name)
        if value is None:
            return default
        try:
            return float(value.strip())
        except ValueError:
            pass
        try:
            return float(Arith(value).parse())
        except ValueError:
            raise self._fail(name, value, "a number") from None

    def get_size(self, name: str, default: int = 0) -> int:
        """A size in bytes: ``N`` bytes, or ``N`` with a unit K, M, G or T (powers of 1024, an
        optional trailing ``b``/``B``, blanks allowed: ``10 Mb``, ``512K``, ``1.5 GB``).

        This is the form HTCondor accepts for sizes such as MAX_DEFAULT_LOG / MAX_*_LOG.
        """
        value = self._typed_value(name)
        if value is None:
            return default
        size = parse_size(value)
        if size is None:
            raise self._fail(name, value, "a size (a number of bytes, optionally with K, M, G or T)")
        return size

    def get_expr(self, name: str, default: str | None = None) -> str | None:
        """The expanded value, checked to be one ClassAd expression (e.g. START, RANK).

        Returns the text (not a parsed tree), so callers parse it where they evaluate it.
        """
        value = self._typed_value(name)
        if value is None:
            return default
        from htcd.classad import parse_expr
        from htcd.errors import UserError

        try:
            parse_expr(value)
        except UserError as err:
            e = self._entry(name)
            raise ConfigError(f"{name.upper()} = {value}: not a valid ClassAd expression: {err.message}",
                              source=e.source if e else None, line=e.line if e else None) from None
        return value

    def get_list(self, name: str, default: tuple[str, ...] | list[str] = ()) -> list[str]:
        """Items split on commas and whitespace, empty ones dropped."""
        value = self._typed_value(name)
        if value is None:
            return list(default)
        return value.replace(",", " ").split()

    def names(self) -> list[str]:
        """Every knob with a value from a file, the environment, the param table or the machine."""
        seen = {k: e.name for k, e in self._defs.items()}
        for k, p in table().items():
            if p.default:
                seen.setdefault(k, p.name)
        for k, (n, _) in COMPUTED.items():
            seen.setdefault(k, n)
        seen.setdefault("subsystem", "SUBSYSTEM")
        return sorted(seen.values(), key=str.lower)

    def is_defined(self, name: str) -> bool:
        """Whether ``name`` has a non-empty definition (the test of ``if defined``)."""
        e = self._entry(name)
        return e is not None and bool(e.raw)

    def definitions(self) -> list[Entry]:
        """Every definition read from a file, template, the embedded default or the environment,
        the last one of each name only, in the order they were made."""
        return list(self._defs.values())

    def default_raw(self, name: str) -> str | None:
        """The param-table (or computed) value of ``name``, ignoring every file."""
        e = _default_entry(name.lower(), self.subsystem)
        return None if e is None else e.raw

    def copy(self) -> Config:
        """An independent copy, e.g. to try a change before making it."""
        other = Config(self.subsystem, self.local_name, self._env)
        other.files = list(self.files)
        other.persistent = self.persistent
        other._defs = dict(self._defs)
        other._cache = None if self._cache is None else {}
        return other

    # ----- definitions -----------------------------------------------------------------------

    def define(self, name: str, raw: str, source: str, line: int) -> None:
        """Add one definition; a reference to the knob itself takes its previous value now."""
        key = name.lower()
        if "$" in raw and _may_name_itself(raw, key):
            raw = _rewrite_self(raw, key, self._previous(key))
        self._defs.pop(key, None)
        self._defs[key] = Entry(name, raw, source, line)

    def append(self, name: str, raw: str, source: str, line: int, sep: str = " ") -> None:
        """``NAME += more``: the previous definition of exactly this name (or its default), the
        separator and ``more``, as written (so macros in either stay lazy), as HTCondor 25 does."""
        key = name.lower()
        e = self._defs.get(key)
        if e is None:
            e = _default_entry(key, self.subsystem)
        previous = e.raw if e is not None else ""
        self.define(name, f"{previous}{sep}{raw}" if previous else raw, source, line)

    def _previous(self, key: str) -> str | None:
        e = self._defs.get(key)
        if e is None and "." in key:  # a file's NAME, not NAME's default, as in HTCondor
            e = self._defs.get(key.split(".", 1)[1])
        if e is None:
            e = _default_entry(key, self.subsystem)
        return None if e is None else e.raw


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int | None:
    """``10 Mb`` -> 10485760; None when ``text`` is not a size."""
    t = text.strip().lower()
    if t.endswith("b"):
        t = t[:-1].rstrip()
    unit = ""
    if t[-1:] in "kmgt" and t:
        unit = t[-1]
        t = t[:-1].rstrip()
    try:
        number = float(t) if any(c in t for c in ".e") else int(t, 10)
    except ValueError:
        return None
    if number < 0 or number != number or number == float("inf"):
        return None
    return int(number * _UNITS[unit])


def _default_entry(key: str, subsystem: str) -> Entry | None:
    p = lookup(key, subsystem)
    if p is not None:
        return None if p.default is None else Entry(p.name, p.default, PARAM_TABLE, 0)
    c = COMPUTED.get(key)
    if c is not None:
        return Entry(c[0], c[1](), PARAM_TABLE, 0)
    if key == "subsystem":
        return Entry("SUBSYSTEM", subsystem, PARAM_TABLE, 0)
    return None


def _may_name_itself(raw: str, key: str) -> bool:
    """Whether ``raw`` could hold ``$(KEY)``: a self-reference is rare, and this test spares
    almost every definition the scan of its macros."""
    low = raw.lower()
    return key in low or ("." in key and key.split(".", 1)[1] in low)


def _rewrite_self(raw: str, key: str, previous: str | None) -> str:
    """Replace ``$(KEY)`` / ``$(KEY:default)`` (and the unprefixed form) by the previous value."""
    short = key.split(".", 1)[1] if "." in key else None
    out: list[str] = []
    i = 0
    while True:
        j = raw.find("$(", i)
        if j < 0:
            out.append(raw[i:])
            break
        close = find_close(raw, j + 2)
        if close < 0:
            out.append(raw[i:])
            break
        if j > 0 and raw[j - 1] == "$":
            out.append(raw[i:close + 1])
            i = close + 1
            continue
        body = raw[j + 2:close]
        parts = split_top(body, ":", 1)
        name = parts[0].strip().lower()
        out.append(raw[i:j])
        if name == key or (short is not None and name == short):
            if previous:
                out.append(previous)
            elif len(parts) > 1:
                out.append(parts[1])
        else:
            out.append(raw[j:close + 1])
        i = close + 1
    return "".join(out)


# ----- the line parser -----------------------------------------------------------------------


class _Parser:
    """Feeds the lines of one source into a Config, handling if/include/use."""

    def __init__(self, cfg: Config, depth: int = 0) -> None:
        self.cfg = cfg
        self.depth = depth

    def parse_file(self, path: str, *, required: bool = True) -> None:
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
        except FileNotFoundError:
            if required:
                raise ConfigError(f"config file {path} not found") from None
            return
        except OSError as err:
            raise ConfigError(f"cannot read config file {path}: {err.strerror}") from None
        self.cfg.files.append(path)
        self.parse_text(text, path)

    def parse_text(self, text: str, source: str, fixed_line: int | None = None) -> None:
        """Parse ``text``; ``fixed_line`` attributes every definition to one line (templates)."""
        cfg = self.cfg
        lines = text.split("\n")
        n = len(lines)
        i = 0
        # Each frame: [parent_active, this_branch_active, some_branch_taken, seen_else, line]
        stack: list[list] = []
        active = True

        def where(ln: int) -> int:
            return fixed_line if fixed_line is not None else ln

        while i < n:
            lineno = i + 1
            line, i = _logical_line(lines, i)
            if not line or line.startswith("#") or line.startswith("["):
                continue
            if line[:1] == "@" and first_word(line[1:])[0].lower() in ("use", "include", "error", "warning"):
                line = line[1:]  # the documented "@use": older readers skip it as a bad line
            if active and "$(" in line and (line.startswith("$(") or first_word(line)[1].startswith("$(")):
                if fixed_line is not None:  # HTCondor expands no macro in a template's knob names
                    raise ConfigError(f"illegal knob name in a template line: {line}", source=source,
                                      line=fixed_line)
                line = self._expand_name(line, source, where(lineno))
            word, rest = first_word(line)
            lw = word.lower()
            is_kw = not rest.lstrip().startswith(("=", "@="))
            if is_kw and lw in ("if", "elif", "else", "endif"):
                active = self._conditional(lw, rest, stack, active, source, where(lineno))
                continue
            name, op, value = assignment(line)
            if op == "@=" and name is not None:
                tag = value.strip()
                body: list[str] = []
                while True:
                    if i >= n:
                        raise ConfigError(f"multi-line value of {name} has no closing @{tag}",
                                          source=source, line=where(lineno))
                    t, i = _logical_line(lines, i)
                    if t == "@" + tag:
                        break
                    if t and not t.startswith("#"):  # blank and comment lines are not part of it
                        body.append(t)
                if active:
                    cfg.define(name, "\n".join(body), source, where(lineno))
                continue
            if not active:
                continue
            if is_kw and lw == "include" and (rest[:1].isspace() or rest.lstrip().startswith(":")):
                self._include(rest, source, where(lineno))
                continue
            if is_kw and lw in ("error", "warning") and rest.lstrip().startswith(":"):
                self._message(lw, rest.lstrip()[1:], source, where(lineno))
                continue
            if is_kw and lw == "use" and rest[:1].isspace():
                self._use(rest, source, where(lineno))
                continue
            if name is None:
                raise ConfigError(f"not a valid config line: {line!r} (expected NAME = value)",
                                  source=source, line=where(lineno))
            if op is not None and op.startswith("+"):
                cfg.append(name, value.strip(), source, where(lineno), append_separator(op))
            elif op in ("junk=", "junk:"):
                junk = line[len(name):line.index(op[-1], len(name))].strip()
                self._message("warning", f"{name} {junk} {op[-1]} ...: the words before '{op[-1]}' are "
                              f"ignored, as HTCondor ignores them; this sets {name}", source, where(lineno))
                cfg.define(name, value.strip(), source, where(lineno))
            else:
                cfg.define(name, value.strip(), source, where(lineno))
        if stack:
            raise ConfigError(f"if on line {stack[-1][4]} has no endif before end of file",
                              source=source, line=stack[-1][4])

    def _expand_name(self, line: str, source: str, line_no: int) -> str:
        """``$(PFX)_KNOB = 1``: macros in a knob's name are expanded when the line is read."""
        k = 0
        while k < len(line):
            if line.startswith("$(", k):
                close = find_close(line, k + 2)
                if close < 0:
                    break
                k = close + 1
            elif line[k].isalnum() or line[k] in "_.":
                k += 1
            else:
                break
        try:
            name = self.cfg.expand(line[:k])
        except ConfigError as err:
            raise ConfigError(err.message, source=source, line=line_no) from None
        if not name or first_word(name)[0] != name:
            raise ConfigError(f"illegal knob name {name!r} (from {line[:k]})", source=source, line=line_no)
        return name + line[k:]

    def _conditional(self, kw: str, rest: str, stack: list[list], active: bool, source: str,
                     line: int) -> bool:
        return conditionals.step(self.cfg, kw, rest, stack, active, source, line)

    def _include(self, rest: str, source: str, line: int) -> None:
        """``include [ifexist] [command [into FILE]] : target``; a target ending in ``|`` is a
        command too.  ``into FILE`` reads FILE when it exists, else runs the command, keeps
        its output in FILE and reads that (HTCondor's cache for slow commands)."""
        head, sep, target = rest.partition(":")
        if not sep:
            raise ConfigError("include needs ':' before the file name", source=source, line=line)
        words = head.split()
        ifexist = bool(words) and words[0].lower() in ("ifexist", "ifexists")
        words = words[1:] if ifexist else words
        command = bool(words) and words[0].lower() in ("command", "output")
        words = words[1:] if command else words
        into = None
        if command and words and words[0].lower() == "into":
            if len(words) < 2:
                raise ConfigError("include ... into: expected a file name after 'into'", source=source, line=line)
            into, words = words[1], words[2:]
            if words:  # HTCondor reads nothing after the file name
                self._message("warning", f"include ... into {into} {' '.join(words)}: the words after the "
                              "file name are ignored, as HTCondor ignores them", source, line)
                words = []
        if words:
            raise ConfigError(f"unknown include option {words[0]!r} (the form is: include [ifexist] "
                              "[command [into FILE]] : target)", source=source, line=line)
        try:
            target = self.cfg.expand(target).strip()
            into = self.cfg.expand(into).strip() if into is not None else None
        except ConfigError as err:
            raise ConfigError(err.message, source=source, line=line) from None
        if target.endswith("|"):
            command, target = True, target[:-1].strip()
        if not target:
            raise ConfigError("include without a file name", source=source, line=line)
        if into is not None and (not into or into.endswith("|")):
            raise ConfigError(f"include ... into {into!r}: the destination must be a file", source=source,
                              line=line)
        if self.depth >= MAX_INCLUDE_DEPTH:
            raise ConfigError(f"includes nested deeper than {MAX_INCLUDE_DEPTH}", source=source, line=line)
        sub = _Parser(self.cfg, self.depth + 1)
        try:
            if into is not None and os.path.isfile(into):
                sub.parse_file(into)
            elif command:
                try:
                    text = _run_command(target)
                except ConfigError:
                    if ifexist:
                        return
                    raise
                if into is not None:
                    with open(into, "w", encoding="utf-8") as f:
                        f.write(text)
                    sub.parse_file(into)
                else:
                    sub.parse_text(text, f"<command: {target}>")
            elif ifexist and not os.path.exists(target):
                return
            else:
                sub.parse_file(target)
        except ConfigError as err:
            if err.source is None:
                raise ConfigError(err.message, source=source, line=line) from None
            raise
        except OSError as err:
            raise ConfigError(f"include ... into {into}: cannot write it: {err.strerror}", source=source,
                              line=line) from None

    def _message(self, kind: str, text: str, source: str, line: int) -> None:
        """``error : text`` stops reading with that message; ``warning : text`` goes to stderr."""
        try:
            text = self.cfg.expand(text).strip()
        except ConfigError as err:
            raise ConfigError(err.message, source=source, line=line) from None
        if kind == "error":
            raise ConfigError(text or "error directive", source=source, line=line)
        import sys

        print(f"{source}:{line}: warning: {text}", file=sys.stderr)

    def _use(self, rest: str, source: str, line: int) -> None:
        cat, sep, items = rest.partition(":")
        cat = cat.strip()
        if not sep or not cat:
            raise ConfigError("use needs 'CATEGORY : template'", source=source, line=line)
        for tname, args in _use_items(items, f"use {cat}:", source, line):
            text = _template(cat, tname, source, line)
            self.parse_text(apply_template_args(text, args), source, fixed_line=line)


def _use_items(items: str, what: str, source: str, line: int) -> list[tuple[str, str]]:
    """The templates of a use line with their argument text: names separated by blanks or
    commas (``use ROLE : Execute Submit``), each optionally followed by ``(arguments)``."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(items)
    while True:
        while i < n and (items[i].isspace() or items[i] == ","):
            i += 1
        if i >= n:
            return out
        k = i
        while k < n and not items[k].isspace() and items[k] not in ",(":
            k += 1
        name = items[i:k]
        while k < n and items[k].isspace():
            k += 1
        args = ""
        if k < n and items[k] == "(":
            close = _find_close_brackets(items, k)
            if close < 0:
                raise ConfigError(f"{what}{items[i:].strip()}: missing ')'", source=source, line=line)
            args = items[k + 1:close]
            k = close + 1
        if not name:
            raise ConfigError(f"{what}{items.strip()}: expected a template name", source=source, line=line)
        out.append((name, args))
        i = k


def _find_close_brackets(text: str, start: int) -> int:
    """Index of the ``)`` closing the ``(`` at ``start``, nested () and [] counted; -1 if none."""
    stack: list[str] = []
    for k in range(start, len(text)):
        c = text[k]
        if c in "([":
            stack.append(")" if c == "(" else "]")
        elif c in ")]":
            if not stack or stack.pop() != c:
                return -1
            if not stack:
                return k
    return -1


def _logical_line(lines: list[str], i: int) -> tuple[str, int]:
    """The line at ``i``, trimmed, with the lines a trailing ``\\`` continues it onto (each
    trimmed; comment lines inside skipped); and the index after it."""
    line = lines[i].strip()
    i += 1
    while line.endswith("\\") and i < len(lines):
        nxt = lines[i].strip()
        i += 1
        if nxt.startswith("#"):
            continue
        line = line[:-1] + nxt
    if line.endswith("\\"):
        line = line[:-1]
    return line, i


def _run_command(cmd: str) -> str:
    import subprocess

    try:
        proc = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise ConfigError(f"command {cmd!r} did not finish within 60 s") from None
    if proc.returncode != 0:
        raise ConfigError(f"command {cmd!r} exited with status {proc.returncode}: "
                          f"{proc.stderr.strip()[:200]}")
    return proc.stdout


#: Templates added at run time by plugins: (category, name) in lower case -> (spelling, text).
_REGISTERED: dict[tuple[str, str], tuple[str, str, str]] = {}
#: Shipped templates read into memory by :func:`preload_templates`: (category, name) -> text.
_PRELOADED: dict[tuple[str, str], str] = {}


def preload_templates() -> int:
    """Read every shipped template into memory, so that later ``use`` lines read no file.

    For a process about to lose access to the installation: a forked child that becomes
    another user, who may not be able to read a virtualenv under a private home directory.
    Returns how many templates were read."""
    for cat in os.listdir(_TEMPLATES):
        folder = os.path.join(_TEMPLATES, cat)
        if os.path.isdir(folder):
            for fn in os.listdir(folder):
                if fn.endswith(".conf"):
                    with open(os.path.join(folder, fn), encoding="utf-8") as f:
                        _PRELOADED[(cat, fn[:-5])] = f.read()
    return len(_PRELOADED)


def register_templates(category: str, name: str, text: str) -> None:
    """Make ``use CATEGORY : name`` read ``text`` (config language, ``$(1)``... for arguments).

    For plugins: a new category is fine; replacing a template htcd ships is refused, and
    registering the same name again replaces the earlier registration. Names are
    case-insensitive, as in ``use`` lines.
    """
    cat, nm = category.strip(), name.strip()
    if not (cat.replace("_", "").isalnum() and nm.replace("_", "").isalnum()):
        raise ValueError(f"template category and name must be letters, digits and _: {category}:{name}")
    if os.path.isfile(os.path.join(_TEMPLATES, cat.lower(), nm.lower() + ".conf")):
        raise ValueError(f"{cat.upper()} : {nm} is a built-in template and cannot be replaced")
    _REGISTERED[(cat.lower(), nm.lower())] = (cat.upper(), nm, text)


def known_templates() -> dict[str, list[str]]:
    """Category -> template names (their documented spelling): the templates folder, then
    those registered by plugins."""
    out: dict[str, list[str]] = {}
    for cat in sorted(os.listdir(_TEMPLATES)):
        d = os.path.join(_TEMPLATES, cat)
        if not os.path.isdir(d):
            continue
        names = []
        for fn in sorted(os.listdir(d)):
            if fn.endswith(".conf"):
                with open(os.path.join(d, fn), encoding="utf-8") as f:
                    first = f.readline()
                # first line reads "# CATEGORY : Name ..." and gives the documented spelling
                spelled = first.lstrip("# ").split(":", 1)[-1].split()[0] if ":" in first else fn[:-5]
                names.append(spelled.split("(")[0])
        out[cat.upper()] = names
    for cat, name, _ in _REGISTERED.values():
        out.setdefault(cat, []).append(name)
    return out


_PROVIDER: list[Callable[[], None]] = []


def set_template_provider(provider: Callable[[], None] | None) -> None:
    """Install a function that registers more templates (plugins' ones) when a ``use`` line
    names a template not found so far.  Called at most once, so config loads that use only
    shipped templates never pay for loading plugins."""
    _PROVIDER[:] = [provider] if provider else []


def _template(cat: str, name: str, source: str, line: int) -> str:
    registered = _REGISTERED.get((cat.lower(), name.lower()))
    if registered is not None:
        return registered[2]
    preloaded = _PRELOADED.get((cat.lower(), name.lower()))
    if preloaded is not None:
        return preloaded
    path = os.path.join(_TEMPLATES, cat.lower(), name.lower() + ".conf")
    if "/" not in cat + name and os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        _PRELOADED[(cat.lower(), name.lower())] = text  # read once per process
        return text
    if _PROVIDER:
        provider = _PROVIDER.pop()
        provider()
        return _template(cat, name, source, line)
    known = known_templates()
    if cat.upper() not in known:
        raise ConfigError(f"use {cat}:{name}: unknown category {cat}; known categories: "
                          + ", ".join(known), source=source, line=line)
    raise ConfigError(f"use {cat}:{name}: unknown {cat.upper()} template {name}; known: "
                      + ", ".join(known[cat.upper()]), source=source, line=line)


def _arg_tokens(args: str) -> list[tuple[int, str]]:
    """The arguments of a ``use`` line: (end offset, text) of each comma-separated piece that is
    not blank, trimmed.  Commas inside parentheses separate too, and blank pieces are dropped
    (``T(, b)`` has one argument, ``b``), as HTCondor's reader has it."""
    out = []
    start = 0
    for k, c in enumerate(args + ","):
        if c == ",":
            piece = args[start:k].strip()
            if piece:
                out.append((k, piece))
            start = k + 1
    return out


def _meta_arg(body: str, args: str, tokens: list[tuple[int, str]]) -> str:
    """The value of one ``$(N...)`` of a template: N, then ``?`` (1 when non-empty), ``#`` or
    ``+`` (N = 0: the count; else argument N and the rest, as written), then ``:default``."""
    k = 0
    while k < len(body) and body[k].isdigit():
        k += 1
    index = int(body[:k])
    flag = body[k:k + 1] if body[k:k + 1] in ("?", "#", "+") else ""
    k += len(flag)
    default = body[k + 1:] if body[k:k + 1] == ":" else None
    if index <= 0:
        value = str(len(tokens)) if flag in ("#", "+") else args
    elif flag in ("#", "+"):
        if index == 1:
            value = args
        elif index - 1 <= len(tokens):
            value = args[tokens[index - 2][0]:]
            value = value[1:] if value.startswith(",") else value
        else:
            value = ""
        if not value.strip() and default is not None:
            value = default
    elif index <= len(tokens):
        value = tokens[index - 1][1]
    else:
        value = default if default is not None else ""
    value = value.strip()
    if flag == "?":
        return "1" if value else "0"
    return value


def apply_template_args(text: str, args: str) -> str:
    """Fill template arguments: ``$(0)`` all, ``$(N)``, ``$(N:def)``, ``$(N?)``, ``$(N+)``, ``$(0#)``.

    The first such macro is replaced, then the text is scanned again from the start, so a
    default may hold another (``$(3+:1/$(NUM_SLOTS_TYPE_$(1:1)))``)."""
    tokens = _arg_tokens(args)
    pos = 0
    while True:
        j = text.find("$(", pos)
        if j < 0:
            return text
        if (j > 0 and text[j - 1] == "$") or not text[j + 2:j + 3].isdigit():
            pos = j + 2
            continue
        close = find_close(text, j + 2)
        if close < 0:
            return text
        text = text[:j] + _meta_arg(text[j + 2:close], args, tokens) + text[close + 1:]
        pos = 0


# ----- sources -------------------------------------------------------------------------------


def _top_file(env: Mapping[str, str]) -> str | None:
    """The top config file path, ``""`` for ONLY_ENV, or None when only the embedded default applies."""
    for var in ("HTCD_CONFIG", "CONDOR_CONFIG"):
        value = env.get(var)
        if value:
            if value.strip().upper() == "ONLY_ENV":
                return ""
            if not os.path.exists(value):
                raise ConfigError(f"config file {value} named by {var} does not exist")
            return value
    home = env.get("HOME") or os.path.expanduser("~")
    for path in ("/etc/htcd/htcd_config", os.path.join(home, ".config", "htcd", "htcd_config")):
        if os.path.exists(path):
            return path
    return None


def load(subsystem: str = "TOOL", local_name: str | None = None,
         env: Mapping[str, str] | None = None) -> Config:
    """Read every config source in HTCondor's order and return the view of one daemon."""
    cfg = Config(subsystem, local_name, env)
    env = cfg._env
    top = _top_file(env)
    parser = _Parser(cfg)
    if top is None:
        parser.parse_text(EMBEDDED_DEFAULT, EMBEDDED)
    elif top:
        root = os.path.dirname(os.path.abspath(top))
        cfg.define("CONFIG_ROOT", root, PARAM_TABLE, 0)  # the top file's folder, for includes
        parser.parse_file(top)
    if top != "":
        _locals(cfg, parser)
        _persistent(cfg, parser)
    _env_overrides(cfg, env)
    cfg._cache = {}
    return cfg


def _locals(cfg: Config, parser: _Parser) -> None:
    """LOCAL_CONFIG_DIR (lexical order, excluded names skipped), then LOCAL_CONFIG_FILE (a file
    that changes LOCAL_CONFIG_FILE chains to the new list), then LOCAL_CONFIG_DIR again if
    those files changed it, then the user's config file: HTCondor's order."""
    dirs = cfg.get("LOCAL_CONFIG_DIR")
    if dirs:
        _local_dirs(cfg, parser)
    _local_files(cfg, parser)
    new_dirs = cfg.get("LOCAL_CONFIG_DIR")
    if new_dirs and new_dirs != dirs:
        _local_dirs(cfg, parser)
    _user_file(cfg, parser)


def _local_dirs(cfg: Config, parser: _Parser) -> None:
    import re

    pattern = cfg.get("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP")
    try:
        exclude = re.compile(pattern) if pattern else None
    except re.error as err:
        where = cfg.where("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP")
        raise ConfigError(f"LOCAL_CONFIG_DIR_EXCLUDE_REGEXP is not a valid regular expression: {err}",
                          source=where[0] if where else None, line=where[1] if where else None) from None
    for d in cfg.get_list("LOCAL_CONFIG_DIR"):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for fn in names:
            path = os.path.join(d, fn)
            if exclude is not None and exclude.search(fn):
                continue
            if os.path.isfile(path):
                parser.parse_file(path)


def _local_list(value: str) -> list[str]:
    """LOCAL_CONFIG_FILE's value as sources: one command (ending in ``|``), else a file list."""
    if value.strip().endswith("|"):
        return [value.strip()]
    return value.replace(",", " ").split()


def _local_files(cfg: Config, parser: _Parser) -> None:
    value = cfg.get("LOCAL_CONFIG_FILE") or ""
    todo = _local_list(value)
    if not todo:
        return
    required = cfg.get_bool("REQUIRE_LOCAL_CONFIG_FILE", True)
    done: list[str] = []
    k = 0
    while k < len(todo):
        source = todo[k]
        if source.endswith("|"):  # a command whose output is config text
            cmd = source[:-1].strip()
            parser.parse_text(_run_command(cmd), f"<command: {cmd}>")
        elif os.path.exists(source):
            parser.parse_file(source)
        elif required:
            where = cfg.where("LOCAL_CONFIG_FILE")
            raise ConfigError(f"local config file {source} not found (set REQUIRE_LOCAL_CONFIG_FILE = "
                              "false to allow this)", source=where[0] if where else None,
                              line=where[1] if where else None)
        done.append(source)
        new = cfg.get("LOCAL_CONFIG_FILE") or ""
        if new != value:  # the file named other local files: go on with those not read yet
            value = new
            todo = [s for s in _local_list(new) if s not in done]
            k = 0
            continue
        k += 1


def _user_file(cfg: Config, parser: _Parser) -> None:
    """USER_CONFIG_FILE: an absolute path, or a name under ~/.condor of the effective user.
    Daemons running as root skip it, as HTCondor's do (they can switch ids)."""
    name = (cfg.get("USER_CONFIG_FILE") or "").strip()
    if not name or (os.geteuid() == 0 and cfg.subsystem not in ("TOOL", "SUBMIT")):
        return
    if not os.path.isabs(name):
        import pwd

        try:
            home = pwd.getpwuid(os.geteuid()).pw_dir
        except KeyError:
            return
        name = os.path.join(home, ".condor", name)
    if os.access(name, os.R_OK) and os.path.isfile(name):
        parser.parse_file(name)


def _persistent(cfg: Config, parser: _Parser) -> None:
    """The daemon's ``config_val -set`` file, when ENABLE_PERSISTENT_CONFIG allows it."""
    path = persistent_file(cfg)
    if path is not None and os.path.exists(path):
        parser.parse_file(path)
        cfg.persistent = path


def _env_overrides(cfg: Config, env: Mapping[str, str]) -> None:
    """``_CONDOR_KNOB`` then ``_HTCD_KNOB`` environment variables, which beat every file."""
    condor: list[tuple[str, str]] = []
    htcd: list[tuple[str, str]] = []
    for key, value in env.items():
        if key[:1] != "_":
            continue
        up = key.upper()
        if up.startswith("_CONDOR_") and len(key) > 8:
            condor.append((key[8:], value))
        elif up.startswith("_HTCD_") and len(key) > 6:
            htcd.append((key[6:], value))
    for name, value in condor + htcd:
        cfg.define(name, value, ENVIRONMENT, 0)
