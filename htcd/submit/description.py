"""SubmitDescription: a parsed submit file that turns into job ads on demand."""

from __future__ import annotations

import contextlib
import glob
import os
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

from htcd.submit.commands import (
    CUSTOM_MARK,
    KNOWN_COMMANDS,
    REQUEST_MARK,
    JobContext,
    Plan,
    Translator,
    bool_value,
)
from htcd.submit.errors import SubmitError
from htcd.submit.macros import PREVIOUS_PREFIX, Expander, MacroError, arith, expand_or_raise
from htcd.submit.names import close_command, is_condor_name, spellings
from htcd.submit.parser import ParsedFile, QueueStatement, Setting, split_row
from htcd.submit.predefined import predefined
from htcd.submit.reader import Reader, read_queue
from htcd.submit.sources import LocalSources, SourceError, Sources, run_command
from htcd.submit.templates import TemplateSet
from htcd.submit.unsupported import refusal

MACRO_REF = re.compile(r"\$(?:INT|REAL|DIRNAME|BASENAME|F[a-zA-Z]*|)\(\s*([A-Za-z_][A-Za-z0-9_.]*)", re.IGNORECASE)
_BUILTINS = {"cluster", "clusterid", "process", "procid", "step", "item", "itemindex", "row",
             "node", "jobid", "dollar"}
# Variables condor_submit never warns about: set by DAGMan and by ``use STRICT``, read elsewhere.
_QUIET = frozenset({"dag_status", "failed_count", "job", "retry", "submitwarnemptymatches",
                    "submitfailemptymatches", "submitwarnduplicatematches", "submitfailemptyfields",
                    "submitwarnemptyfields"})


def _apply_slice(values: list[str], slice_text: str, line: int, source: str) -> list[str]:
    if not slice_text:
        return values
    parts = slice_text.strip("[]").split(":")
    if len(parts) > 3 or not all(re.fullmatch(r"\s*-?\d*\s*", p) for p in parts):
        raise SubmitError(f"queue statement: bad slice {slice_text!r}", source=source, line=line)
    nums = [int(p) if p.strip() else None for p in parts]
    if len(nums) == 1:
        idx = nums[0]
        return values[idx:idx + 1] if idx is not None else values
    return values[slice(*nums)]


class SubmitDescription:
    """A parsed submit file; ``make_jobs`` produces the cluster and proc ads."""

    def __init__(self, parsed: ParsedFile, *, strict: bool = False) -> None:
        self.filename = parsed.filename
        self.origins = parsed.origins
        self.statements = parsed.statements
        self.used = parsed.used
        self.defaults: dict[str, str] = {}
        #: ``warning :`` statements met while reading; ``make_jobs`` adds its own to ``warnings``.
        self.read_warnings = list(parsed.warnings)
        self.build_warnings: list[str] = []
        if not any(isinstance(s, QueueStatement) for s in self.statements):
            # condor_submit needs a queue statement; a description without one queues one job.
            last = max((s.line for s in self.statements), default=0)
            self.statements.append(QueueStatement(line=last))
        with located(self.filename, self.origins):
            self._check_names(strict)

    @classmethod
    def bare(cls, filename: str, defaults: dict[str, str]) -> SubmitDescription:
        """A description with no statements of its own, for ``QueueJobs`` built from a submit digest
        (the schedd's late materialization)."""
        desc = cls.__new__(cls)
        desc.filename, desc.origins, desc.statements, desc.used = filename, {}, [], set()
        desc.defaults, desc.read_warnings, desc.build_warnings = defaults, [], []
        return desc

    @property
    def warnings(self) -> list[str]:
        """What the user should see on standard error: ``warning :`` statements and build warnings."""
        return self.read_warnings + self.build_warnings

    def _check_names(self, strict: bool) -> None:
        """Refuse a command htcd cannot honour; warn about a line that is neither a command nor a
        variable something uses (condor_submit's "Is it a typo?"), or refuse it when ``strict``."""
        referenced: set[str] = set(self.used)
        for s in self.statements:
            if isinstance(s, Setting):
                referenced.update(m.lower() for m in MACRO_REF.findall(s.value))
            else:
                referenced.update(v.lower() for v in s.variables)
                referenced.update(m.lower() for m in MACRO_REF.findall(s.count))
                for item in s.items:
                    referenced.update(m.lower() for m in MACRO_REF.findall(item))
                referenced.update(m.lower() for m in MACRO_REF.findall(s.filename))
        strict = strict or _last_true(self.statements, "submitwarnemptyfields")
        for s in self.statements:
            if not isinstance(s, Setting) or s.name.startswith("+") or "." in s.name:
                continue
            key = s.key
            reason = next((why for name in spellings(key) if (why := refusal(name))), None)
            if reason is not None and s.value.strip():
                raise SubmitError(f"{s.name}: htcd cannot honour this command: {reason}",
                                  source=self.filename, line=s.line)
            if (key in KNOWN_COMMANDS or key in referenced or is_condor_name(key) or key in _QUIET
                    or key.startswith(PREVIOUS_PREFIX)):
                continue
            message = f"the line '{s.name} = {s.value}' was unused by htcd submit. Is it a typo?"
            close = close_command(key, KNOWN_COMMANDS)
            if close:
                message += f" (did you mean '{close}'?)"
            if strict:
                raise SubmitError(message + " (an error with use STRICT : TRUE or -strict)",
                                  source=self.filename, line=s.line)
            where = self.origins.get(s.line, (self.filename, s.line))
            self.read_warnings.append(f"{where[0]}:{where[1]}: {message}" if where[1] is not None
                                      else f"{where[0]}: {message}")

    def make_jobs(self, cluster_id: int, *, submit_dir: str, owner: str, qdate: int,
                  config_get: Callable[[str], str | None] = lambda k: None,
                  env: Mapping[str, str] | None = None, submit_file: str = "",
                  plugin_universes: Collection[str] | None = None) -> tuple[dict[str, str], list[dict[str, str]]]:
        """Build every job; return (attributes shared by all procs, per-proc differences).

        Every proc is built and validated before anything is returned, so a bad job
        anywhere means no jobs at all.  ``submit_file`` is ``$(SUBMIT_FILE)``;
        ``plugin_universes`` names the universes the installed plugins offer (None: any name
        that could be one is taken for one, for callers that cannot know).
        """
        self.build_warnings = []
        with located(self.filename, self.origins):
            return self._make_jobs(cluster_id, submit_dir=submit_dir, owner=owner, qdate=qdate,
                                   config_get=config_get, env=env, submit_file=submit_file,
                                   plugin_universes=plugin_universes)

    def _make_jobs(self, cluster_id: int, *, submit_dir: str, owner: str, qdate: int,
                   config_get: Callable[[str], str | None], env: Mapping[str, str] | None, submit_file: str,
                   plugin_universes: Collection[str] | None) -> tuple[dict[str, str], list[dict[str, str]]]:
        environ: Mapping[str, str] = dict(os.environ) if env is None else env
        submit_dir = os.path.abspath(submit_dir)
        self.defaults = predefined(submit_file, qdate, config_get)
        ads: list[dict[str, str]] = []
        proc_id = 0
        for jobs in self.queue_jobs(cluster_id, proc_id, submit_dir=submit_dir, owner=owner, qdate=qdate,
                                 config_get=config_get, env=environ, plugin_universes=plugin_universes):
            ads.extend(jobs.build(n) for n in range(jobs.total))
        return split_common(ads)

    def queue_jobs(self, cluster_id: int, first_proc: int, *, submit_dir: str, owner: str, qdate: int,
                config_get: Callable[[str], str | None], env: Mapping[str, str],
                plugin_universes: Collection[str] | None) -> Iterator[QueueJobs]:
        """The jobs of each queue statement in turn (each statement sees the settings before it)."""
        table: dict[str, Setting] = {}
        proc_id = first_proc
        for stmt in self.statements:
            if isinstance(stmt, Setting):
                table[stmt.key] = stmt
                continue
            snapshot = dict(table)
            base_vars = {"cluster": str(cluster_id), "clusterid": str(cluster_id)}
            expander = Expander(self.macro_lookup(snapshot, base_vars), env, submit_dir)
            count_text = expand_or_raise(expander, stmt.count, source=self.filename, line=stmt.line).strip()
            try:
                number = arith(count_text)
            except MacroError:
                number = -1
            if not isinstance(number, int) or number < 0:
                raise SubmitError(f"queue statement: job count {count_text!r} is not a whole number",
                                  source=self.filename, line=stmt.line)
            rows = self._items(stmt, expander, submit_dir)
            jobs = QueueJobs(self, snapshot, stmt.variables, rows, number, stmt.line, proc_id,
                             JobContext(cluster_id, proc_id, submit_dir, owner, qdate, config_get, env,
                                        plugin_universes))
            yield jobs
            proc_id += jobs.total

    def macro_lookup(self, table: Mapping[str, Setting], vars_: Mapping[str, str]) -> Callable[[str], str | None]:
        defaults = self.defaults

        def lookup(name: str) -> str | None:
            key = name.lower()
            if key in vars_:
                return vars_[key]
            s = table.get(key)
            if s is None and key.startswith("my."):  # MY.x is the attribute set by MY.x = or +x =
                s = table.get("+" + key[3:])
            return s.value if s is not None else defaults.get(key)
        return lookup

    def _items(self, stmt: QueueStatement, expander: Expander, submit_dir: str) -> list[dict[str, str]]:
        """The item rows of a queue statement, each a mapping of (lower-case) variable -> value."""
        names = [v.lower() for v in stmt.variables] or ["item"]
        src = self.filename
        if stmt.source == "":
            return [{}]
        if stmt.source == "in":
            values = [expand_or_raise(expander, v, source=src, line=stmt.line) for v in stmt.items]
            values = _apply_slice(values, stmt.slice_text, stmt.line, src)
            rows = [split_row(v, len(names)) for v in values]
        elif stmt.source == "matching":
            found = self._matches(stmt, expander, submit_dir)
            found = _apply_slice(found, stmt.slice_text, stmt.line, src)
            rows = [split_row(v, len(names)) for v in found]
        else:
            if stmt.from_command:
                command = expand_or_raise(expander, stmt.filename, source=src, line=stmt.line)
                lines = [ln.strip() for ln in _command_output(command, submit_dir, src, stmt.line).split("\n")]
                raw_rows = [ln for ln in lines if ln and not ln.startswith("#")]
            elif stmt.filename:
                fname = expand_or_raise(expander, stmt.filename, source=src, line=stmt.line)
                path = os.path.join(submit_dir, fname)
                try:
                    with open(path, encoding="utf-8") as fh:
                        lines = [ln.strip() for ln in fh.read().split("\n")]
                except OSError as err:
                    raise SubmitError(f"queue from {fname!r}: cannot read the file: {err.strerror}",
                                      source=src, line=stmt.line) from err
                # Every non-blank line is a row: '#' starts no comment in an item file.
                raw_rows = [ln for ln in lines if ln]
            else:
                raw_rows = list(stmt.items)
            raw_rows = _apply_slice(raw_rows, stmt.slice_text, stmt.line, src)
            rows = [split_row(expand_or_raise(expander, r, source=src, line=stmt.line), len(names))
                    for r in raw_rows]
        out: list[dict[str, str]] = []
        for row in rows:
            item = dict(zip(names, row, strict=True))
            if "item" not in item and len(names) == 1:
                item["item"] = row[0]
            out.append(item)
        return out

    def _matches(self, stmt: QueueStatement, expander: Expander, submit_dir: str) -> list[str]:
        """The files and directories of ``queue ... matching``, sorted per pattern, each once.

        A duplicate is reported unless ``SubmitWarnDuplicateMatches`` is false; no match at
        all is an error with ``SubmitFailEmptyMatches`` and a warning with
        ``SubmitWarnEmptyMatches`` (``use STRICT : TRUE`` sets both).
        """
        src = self.filename
        found: list[str] = []
        patterns = [expand_or_raise(expander, p, source=src, line=stmt.line) for p in stmt.items]
        for pat in patterns:
            for path in sorted(glob.glob(os.path.join(submit_dir, pat))):
                rel = os.path.relpath(path, submit_dir)
                is_dir = os.path.isdir(path)
                if (stmt.match_kind == "files" and is_dir) or (stmt.match_kind == "dirs" and not is_dir):
                    continue
                name = rel + "/" if is_dir else rel
                if name not in found:
                    found.append(name)
                elif _flag(expander, "SubmitWarnDuplicateMatches", True):
                    self.build_warnings.append(f"{self._where(stmt.line)}: {name!r} matching pattern {pat!r} "
                                               f"is a duplicate of item {found.index(name)}, skipping")
        if not found:
            what = "no matches for pattern(s): " + " ".join(repr(p) for p in patterns)
            if _flag(expander, "SubmitFailEmptyMatches", False):
                raise SubmitError(what, source=src, line=stmt.line)
            if _flag(expander, "SubmitWarnEmptyMatches", False):
                self.build_warnings.append(f"{self._where(stmt.line)}: {what}")
        return found

    def _where(self, line: int) -> str:
        """``file:line`` of a statement, for a warning."""
        source, real = self.origins.get(line, (self.filename, line))
        return source if real is None else f"{source}:{real}"

    def _translator(self, table: Mapping[str, Setting], vars_: Mapping[str, str], ctx: JobContext,
                    fixed: dict[str, tuple[str, int]]) -> Translator:
        """A translator for one job; ``fixed`` caches the expansions that are the same for every job."""
        expander = Expander(self.macro_lookup(table, vars_), ctx.env, ctx.submit_dir)
        src = self.filename
        loop_vars = {k: v for k, v in vars_.items() if k not in _QUEUE_BUILTINS}

        def get(name: str) -> tuple[str, int] | None:
            if name in loop_vars:  # a queue variable named like a command sets that command, as in HTCondor
                s = table.get(name)
                return loop_vars[name], s.line if s is not None else 0
            got = fixed.get(name)
            if got is not None:
                return got
            s = table.get(name)
            if s is None:
                return None
            return expand_or_raise(expander, s.value, source=src, line=s.line), s.line

        def custom() -> list[tuple[str, str, int]]:
            return [(s.name[1:], expand_or_raise(expander, s.value, source=src, line=s.line), s.line)
                    for s in table.values() if s.name.startswith("+")]

        def extra() -> list[tuple[str, str, int]]:
            return [(s.name[len("request_"):], expand_or_raise(expander, s.value, source=src, line=s.line), s.line)
                    for s in table.values() if _is_extra_request(s.key)]

        return Translator(get, ctx, src, custom, extra)


class QueueJobs:
    """The jobs of one queue statement, built one at a time: the first whole, every other by
    re-running only what its own values change (the schedd builds a late-materialized cluster's
    procs this way, in batches, exactly as a plain submit would have)."""

    def __init__(self, desc: SubmitDescription, snapshot: dict[str, Setting], variables: Sequence[str],
                 rows: list[dict[str, str]], count: int, line: int, first_proc: int, ctx: JobContext) -> None:
        self.desc = desc
        self.snapshot = snapshot
        self.variables = tuple(variables)
        self.rows = rows
        self.count = count
        self.line = line
        self.first_proc = first_proc
        self.ctx = ctx
        self.total = len(rows) * count
        self.dynamic = _dynamic(snapshot, {v.lower() for v in variables})
        self._plan: Plan | None = None
        self._dirty: set[str] = set()
        self._fixed: dict[str, tuple[str, int]] = {}

    def proc_vars(self, n: int) -> dict[str, str]:
        """The macros of the statement's ``n``-th job: $(Process), $(Step), $(ItemIndex), its item..."""
        index, step = divmod(n, self.count)
        proc_id = self.first_proc + n
        cluster_id = self.ctx.cluster_id
        vars_ = {"cluster": str(cluster_id), "clusterid": str(cluster_id)}
        # $(Node) is a node number in the parallel universe only (which htcd refuses): empty
        vars_.update({"process": str(proc_id), "procid": str(proc_id), "step": str(step),
                      "itemindex": str(index), "row": str(index), "node": "", "jobid": f"{cluster_id}.{proc_id}"})
        vars_.update(self.rows[index])
        return vars_

    def build(self, n: int) -> dict[str, str]:
        """The full ad of the statement's ``n``-th job (the first is always built first)."""
        if self._plan is None and n != 0:
            self.build(0)
        ctx = self.ctx
        tr = self.desc._translator(self.snapshot, self.proc_vars(n), JobContext(
            ctx.cluster_id, self.first_proc + n, ctx.submit_dir, ctx.owner, ctx.qdate, ctx.config_get, ctx.env,
            ctx.plugin_universes), self._fixed)
        if self._plan is not None:
            return tr.rebuild(self._plan, self._dirty)
        ad = tr.build()
        self.desc.build_warnings.extend(f"{self.desc._where(self.line)}: {w}" for w in tr.warnings)
        self._plan = tr.plan()
        self._dirty = self._plan.dirty(self.dynamic)
        self._fixed.update((k, got) for k in self.snapshot if k not in self.dynamic
                           and (got := tr.get(k)) is not None)
        return ad


def _last_true(statements: Sequence[Setting | QueueStatement], key: str) -> bool:
    """Whether the last setting of ``key`` in the file is a true value (``use STRICT : TRUE`` sets some)."""
    value = next((s.value for s in reversed(statements) if isinstance(s, Setting) and s.key == key), None)
    return bool(value is not None and bool_value(value))


def _flag(expander: Expander, name: str, default: bool) -> bool:
    """A true/false submit variable such as ``SubmitFailEmptyMatches``."""
    value = expander.lookup(name)
    got = bool_value(expander.expand(value)) if value is not None else None
    return default if got is None else got


def _is_extra_request(key: str) -> bool:
    return key.startswith("request_") and key not in KNOWN_COMMANDS


PER_PROC = frozenset(_BUILTINS - {"cluster", "clusterid", "dollar"})
# the macros every job of a queue statement gets besides the statement's own variables
_QUEUE_BUILTINS = frozenset({"cluster", "clusterid", "process", "procid", "step", "itemindex", "row", "node",
                             "jobid"})
_VOLATILE = re.compile(r"\$(RANDOM_CHOICE|RANDOM_INTEGER|CHOICE|SUBSTR)\(", re.IGNORECASE)


def _dynamic(table: Mapping[str, Setting], queue_vars: set[str]) -> set[str]:
    """Commands whose value may differ between the jobs of one queue statement.

    A setting is dynamic when it names a per-job macro ($(Process), $(Item), a queue
    variable...) or another dynamic setting, or uses a function that is random or whose
    arguments are not followed here.
    """
    varying = set(PER_PROC) | queue_vars
    dynamic: set[str] = set(queue_vars)  # a queue variable named like a command sets it per job
    changed = True
    while changed:
        changed = False
        for key, s in table.items():
            if key in dynamic:
                continue
            refs = {m.lower() for m in MACRO_REF.findall(s.value)}
            if refs & varying or _VOLATILE.search(s.value):
                dynamic.add(key)
                varying.add(key)
                changed = True
    if any(k.startswith("+") for k in dynamic):
        dynamic.add(CUSTOM_MARK)
    if any(_is_extra_request(k) for k in dynamic):
        dynamic.add(REQUEST_MARK)
    return dynamic


def _command_output(command: str, cwd: str, source: str, line: int) -> str:
    """Standard output of ``queue ... from command |``, run by the shell in the submit directory."""
    try:
        return run_command(command, cwd)
    except SourceError as err:
        raise SubmitError(f"queue from {command!r} |: {err}", source=source, line=line) from None


def split_common(ads: list[dict[str, str]]) -> tuple[dict[str, str], list[dict[str, str]]]:
    """Factor attributes identical across every proc into the cluster ad."""
    if not ads:
        return {}, []
    common = dict(ads[0])
    del common["ProcId"]
    for ad in ads[1:]:
        for k, _ in common.items() - ad.items():  # set operations on the item views: C speed
            del common[k]
    procs = []
    for ad in ads:
        own = ad.keys() - common.keys()
        procs.append({"ProcId": ad["ProcId"], **{k: ad[k] for k in own if k != "ProcId"}})
    return common, procs


def parse_submit(text: str, filename: str = "<submit>", *, append: Sequence[str] = (),
                 defines: Sequence[str] = (), queue: str | None = None, submit_dir: str | None = None,
                 templates: TemplateSet | None = None, sources: Sources | None = None,
                 env: Mapping[str, str] | None = None, path: str | None = None,
                 strict: bool = False) -> SubmitDescription:
    """Parse submit-file text; raise SubmitError naming the file and line of the first problem.

    ``include`` reads through ``sources`` (default: this machine's files and commands, relative
    names against ``submit_dir``, default the working directory; ``path`` is where the file itself
    is, when ``filename`` does not say, so that including it again is found); ``use`` finds ``templates``
    (default: the built-in ones only; the CLI passes ``TemplateSet.from_config``).  ``append``
    lines (condor_submit's ``-a``) go just before the first queue statement; ``queue``
    (``-queue``) replaces the file's queue statements.  Their errors name ``-append:N`` /
    ``-queue`` instead of the file, and errors in an included file name that file and line.
    ``defines`` are condor_submit's ``name=value`` arguments: read as if they began the file (so
    the file's own settings win), their errors naming ``command line:N``.  ``strict`` makes a line
    that is no command and that nothing uses an error instead of a warning.
    """
    reader = Reader(filename, sources=sources or LocalSources(submit_dir or os.getcwd()),
                    templates=templates or TemplateSet(), env=os.environ if env is None else env, path=path)
    if defines:
        reader.read("\n".join(defines), "command line")
        if any(isinstance(s, QueueStatement) for s in reader.parsed.statements):
            raise SubmitError("a queue statement cannot be given as name=value; use -queue", source="command line")
    reader.read(text, filename)
    parsed = reader.parsed
    if append:
        first = len(parsed.statements)
        reader.read("\n".join(append), "-append")
        moved = parsed.statements[first:]
        del parsed.statements[first:]
        if any(isinstance(s, QueueStatement) for s in moved):
            raise SubmitError("a queue statement cannot be appended; use -queue", source="-append")
        at = next((i for i, s in enumerate(parsed.statements) if isinstance(s, QueueStatement)),
                  len(parsed.statements))
        parsed.statements[at:at] = moved
    if queue is not None:
        stmt = read_queue(reader, queue, "-queue")
        parsed.statements = [s for s in parsed.statements if not isinstance(s, QueueStatement)] + [stmt]
    return SubmitDescription(parsed, strict=strict)


@contextlib.contextmanager
def located(filename: str, origins: Mapping[int, tuple[str, int | None]]) -> Iterator[None]:
    """Point an error on a statement read from elsewhere (an included file, ``-append``...) at
    that source and line instead of the top file."""
    try:
        yield
    except SubmitError as err:
        where = origins.get(err.line) if err.source == filename and err.line is not None else None
        if where is None:
            raise
        raise SubmitError(err.message, source=where[0], line=where[1]) from err
