"""SubmitDescription: a parsed submit file that turns into job ads on demand."""

from __future__ import annotations

import difflib
import glob
import os
import re
from collections.abc import Callable, Mapping

from htcd.submit.commands import KNOWN_COMMANDS, JobContext, Translator
from htcd.submit.errors import SubmitError
from htcd.submit.macros import Expander, expand_or_raise
from htcd.submit.parser import ParsedFile, QueueStatement, Setting, parse_file, split_row

_REF = re.compile(r"\$(?:INT|REAL|F[a-zA-Z]*|)\(\s*([A-Za-z_][A-Za-z0-9_.]*)", re.IGNORECASE)
_BUILTINS = {"cluster", "clusterid", "process", "procid", "step", "item", "itemindex", "row",
             "node", "dollar"}


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

    def __init__(self, parsed: ParsedFile) -> None:
        self.filename = parsed.filename
        self.statements = parsed.statements
        if not any(isinstance(s, QueueStatement) for s in self.statements):
            # condor_submit needs a queue statement; a description without one queues one job.
            last = max((s.line for s in self.statements), default=0)
            self.statements.append(QueueStatement(line=last))
        self._check_names()

    @property
    def queue_statements(self) -> list[QueueStatement]:
        return [s for s in self.statements if isinstance(s, QueueStatement)]

    def _check_names(self) -> None:
        """Reject a name that is neither a command, a used variable, nor far from a command: a typo."""
        referenced: set[str] = set()
        for s in self.statements:
            if isinstance(s, Setting):
                referenced.update(m.lower() for m in _REF.findall(s.value))
            else:
                referenced.update(v.lower() for v in s.variables)
                referenced.update(m.lower() for m in _REF.findall(s.count))
                for item in s.items:
                    referenced.update(m.lower() for m in _REF.findall(item))
                referenced.update(m.lower() for m in _REF.findall(s.filename))
        for s in self.statements:
            if not isinstance(s, Setting) or s.name.startswith("+"):
                continue
            key = s.key
            if key in KNOWN_COMMANDS or key in referenced or key.startswith("request_"):
                continue
            close = difflib.get_close_matches(key, sorted(KNOWN_COMMANDS), n=1, cutoff=0.8)
            if close:
                raise SubmitError(f"unknown command {s.name!r}; did you mean {close[0]!r}?",
                                  source=self.filename, line=s.line)

    def make_jobs(self, cluster_id: int, *, submit_dir: str, owner: str, qdate: int,
                  config_get: Callable[[str], str | None] = lambda k: None,
                  env: Mapping[str, str] | None = None) -> tuple[dict[str, str], list[dict[str, str]]]:
        """Build every job; return (attributes shared by all procs, per-proc differences).

        Every proc is built and validated before anything is returned, so a bad job
        anywhere means no jobs at all.
        """
        environ: Mapping[str, str] = dict(os.environ) if env is None else env
        submit_dir = os.path.abspath(submit_dir)
        table: dict[str, Setting] = {}
        ads: list[dict[str, str]] = []
        proc_id = 0
        for stmt in self.statements:
            if isinstance(stmt, Setting):
                table[stmt.key] = stmt
                continue
            snapshot = dict(table)
            base_vars = {"cluster": str(cluster_id), "clusterid": str(cluster_id)}
            expander = Expander(self._lookup(snapshot, base_vars), environ)
            count_text = expand_or_raise(expander, stmt.count, source=self.filename, line=stmt.line).strip()
            if not re.fullmatch(r"\d+", count_text):
                raise SubmitError(f"queue statement: job count {count_text!r} is not a whole number",
                                  source=self.filename, line=stmt.line)
            count = int(count_text)
            for index, row in enumerate(self._items(stmt, expander, submit_dir)):
                for step in range(count):
                    vars_ = dict(base_vars)
                    vars_.update({"process": str(proc_id), "procid": str(proc_id), "step": str(step),
                                  "itemindex": str(index), "row": str(index), "node": "#pArAlLeLnOdE#"})
                    vars_.update(row)
                    ads.append(self._build_one(snapshot, vars_, JobContext(
                        cluster_id, proc_id, submit_dir, owner, qdate, config_get, environ)))
                    proc_id += 1
        return _split(ads)

    def _lookup(self, table: Mapping[str, Setting], vars_: Mapping[str, str]) -> Callable[[str], str | None]:
        def lookup(name: str) -> str | None:
            key = name.lower()
            if key in vars_:
                return vars_[key]
            s = table.get(key)
            return s.value if s is not None else None
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
            found: list[str] = []
            for pattern in stmt.items:
                pat = expand_or_raise(expander, pattern, source=src, line=stmt.line)
                for path in sorted(glob.glob(os.path.join(submit_dir, pat))):
                    rel = os.path.relpath(path, submit_dir)
                    is_dir = os.path.isdir(path)
                    if (stmt.match_kind == "files" and is_dir) or (stmt.match_kind == "dirs" and not is_dir):
                        continue
                    name = rel + "/" if is_dir and not stmt.match_kind else rel
                    if name not in found:
                        found.append(name)
            found = _apply_slice(found, stmt.slice_text, stmt.line, src)
            rows = [split_row(v, len(names)) for v in found]
        else:
            if stmt.filename:
                fname = expand_or_raise(expander, stmt.filename, source=src, line=stmt.line)
                path = os.path.join(submit_dir, fname)
                try:
                    with open(path, encoding="utf-8") as fh:
                        lines = [ln.strip() for ln in fh.read().splitlines()]
                except OSError as err:
                    raise SubmitError(f"queue from {fname!r}: cannot read the file: {err.strerror}",
                                      source=src, line=stmt.line) from err
                raw_rows = [ln for ln in lines if ln and not ln.startswith("#")]
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

    def _build_one(self, table: Mapping[str, Setting], vars_: Mapping[str, str], ctx: JobContext) -> dict[str, str]:
        expander = Expander(self._lookup(table, vars_), ctx.env)
        src = self.filename

        def get(name: str) -> tuple[str, int] | None:
            s = table.get(name)
            if s is None:
                return None
            return expand_or_raise(expander, s.value, source=src, line=s.line), s.line

        custom: list[tuple[str, str, int]] = []
        extra: list[tuple[str, str, int]] = []
        for s in table.values():
            if s.name.startswith("+"):
                custom.append((s.name[1:], expand_or_raise(expander, s.value, source=src, line=s.line), s.line))
            elif s.key.startswith("request_") and s.key not in KNOWN_COMMANDS:
                value = expand_or_raise(expander, s.value, source=src, line=s.line)
                extra.append((s.name[len("request_"):], value, s.line))
        return Translator(get, ctx, src, custom, extra).build()


def _split(ads: list[dict[str, str]]) -> tuple[dict[str, str], list[dict[str, str]]]:
    """Factor attributes identical across every proc into the cluster ad."""
    if not ads:
        return {}, []
    common = {k: v for k, v in ads[0].items()
              if k != "ProcId" and all(ad.get(k) == v for ad in ads[1:])}
    procs = [{k: v for k, v in ad.items() if k == "ProcId" or k not in common} for ad in ads]
    return common, procs


def parse_submit(text: str, filename: str = "<submit>") -> SubmitDescription:
    """Parse submit-file text; raise SubmitError naming the line of the first problem."""
    return SubmitDescription(parse_file(text, filename))
