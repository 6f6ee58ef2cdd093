"""Late materialization: a submit description sent to the schedd as a *submit digest* and its
item data instead of one ad per proc (condor_submit's job factory).

The client builds proc 0 (and the last proc, as a check) and sends the cluster ad, the settings
the queue statement sees, the statement's count, variables and item rows, and every fact of the
client the build read: the predefined macros, the configuration values and environment variables
looked up, the submit directory, owner and QDate.  The schedd rebuilds proc N from that with the
same code a plain submit runs (``QueueJobs``), so a materialized proc is the proc a plain submit
would have made.  As in HTCondor, ``$RANDOM_INTEGER`` and ``$RANDOM_CHOICE`` in a setting that
names no per-proc macro are expanded once, at submit: every proc gets the same value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from htcd.submit.commands import JobContext
from htcd.submit.description import MACRO_REF, PER_PROC, QueueJobs, SubmitDescription, located, split_common
from htcd.submit.errors import SubmitError
from htcd.submit.macros import Expander, expand_or_raise
from htcd.submit.parser import QueueStatement, Setting
from htcd.submit.predefined import predefined

_RANDOM = re.compile(r"\$(RANDOM_CHOICE|RANDOM_INTEGER)\(", re.IGNORECASE)
# what makes a description a factory: the commands that set JobMaterializeMaxIdle / JobMaterializeLimit
FACTORY_ATTRS = ("JobMaterializeMaxIdle", "JobMaterializeLimit")


class _Env(Mapping[str, str]):
    """The client's environment, remembering what the build read (iterating reads it all)."""

    def __init__(self, base: Mapping[str, str]) -> None:
        self.base = base
        self.seen: dict[str, str] = {}

    def __getitem__(self, key: str) -> str:
        value = self.base[key]
        self.seen[key] = value
        return value

    def __iter__(self) -> Iterator[str]:
        self.seen.update(self.base)
        return iter(self.base)

    def __len__(self) -> int:
        return len(self.base)


class _Config:
    """The client's configuration lookups, remembered (absent ones too)."""

    def __init__(self, get: Callable[[str], str | None]) -> None:
        self.get = get
        self.seen: dict[str, str | None] = {}

    def __call__(self, name: str) -> str | None:
        value = self.get(name)
        self.seen[name] = value
        return value


@dataclass
class Factory:
    """What a submit sends for a late-materialized cluster."""

    cluster_ad: dict[str, str]
    digest: dict[str, Any]  # wire form: lists, maps and text
    items: list[dict[str, str]]
    total: int


def single_queue(desc: SubmitDescription) -> bool:
    """Whether the description has one queue statement (HTCondor's factories have no more)."""
    return sum(isinstance(s, QueueStatement) for s in desc.statements) == 1


def make_factory(desc: SubmitDescription, cluster_id: int, *, submit_dir: str, owner: str, qdate: int,
                 config_get: Callable[[str], str | None] = lambda k: None, env: Mapping[str, str] | None = None,
                 submit_file: str = "", plugin_universes: Collection[str] | None = None,
                 by_default: bool = False) -> Factory | None:
    """The factory of a description with one queue statement that sets ``max_idle`` or
    ``max_materialize`` (or, ``by_default``, of more than one proc: condor_submit's
    SUBMIT_FACTORY_JOBS_BY_DEFAULT); None for any other (it is submitted whole)."""
    if not single_queue(desc):
        return None
    environ = _Env(dict(os.environ) if env is None else env)
    config = _Config(config_get)
    submit_dir = os.path.abspath(submit_dir)
    desc.build_warnings = []
    with located(desc.filename, desc.origins):
        desc.defaults = predefined(submit_file, qdate, config)
        (jobs,) = list(desc.queue_jobs(cluster_id, 0, submit_dir=submit_dir, owner=owner, qdate=qdate,
                                    config_get=config, env=environ, plugin_universes=plugin_universes))
        if jobs.total == 0:
            return None
        jobs = QueueJobs(desc, _pin_random(desc, jobs), jobs.variables, jobs.rows, jobs.count, jobs.line, 0,
                         jobs.ctx)
        first = jobs.build(0)
        if not any(a in first for a in FACTORY_ATTRS) and not (by_default and jobs.total > 1):
            return None
        sample = [first] + ([jobs.build(jobs.total - 1)] if jobs.total > 1 else [])
    cluster_ad, _ = split_common(sample)
    digest = {
        "filename": desc.filename,
        "settings": [[s.name, s.value, s.line] for s in jobs.snapshot.values()],
        "variables": list(jobs.variables), "count": jobs.count, "line": jobs.line,
        "defaults": dict(desc.defaults), "config": dict(config.seen), "env": dict(environ.seen),
        "submit_dir": submit_dir, "owner": owner, "qdate": qdate,
        "plugin_universes": None if plugin_universes is None else sorted(plugin_universes),
    }
    return Factory(cluster_ad, digest, jobs.rows, jobs.total)


def _pin_random(desc: SubmitDescription, jobs: QueueJobs) -> dict[str, Setting]:
    """The settings with their ``$RANDOM_...`` expanded once (when they name no per-proc macro)."""
    varying = set(PER_PROC) | {v.lower() for v in jobs.variables}
    out = dict(jobs.snapshot)
    expander = Expander(desc.macro_lookup(jobs.snapshot, jobs.proc_vars(0)), jobs.ctx.env, jobs.ctx.submit_dir)
    for key, s in jobs.snapshot.items():
        if not _RANDOM.search(s.value):
            continue
        refs = {m.lower() for m in MACRO_REF.findall(s.value)}
        if refs & varying or any(r in jobs.dynamic and r != key for r in refs):
            continue
        out[key] = Setting(s.name, expand_or_raise(expander, s.value, source=desc.filename, line=s.line), s.line)
    return out


class DigestError(SubmitError):
    """A digest the schedd cannot rebuild procs from."""


def proc_builder(digest: Mapping[str, Any], items: list[dict[str, str]], cluster_id: int) -> QueueJobs:
    """At the schedd: the builder of a factory's procs (``build(n)`` is proc n's full ad)."""
    try:
        settings = {str(n).lower(): Setting(str(n), str(v), int(line)) for n, v, line in digest["settings"]}
        config = {str(k): (None if v is None else str(v)) for k, v in dict(digest["config"]).items()}
        env = {str(k): str(v) for k, v in dict(digest["env"]).items()}
        desc = SubmitDescription.bare(str(digest["filename"]), {str(k): str(v) for k, v in
                                                                 dict(digest["defaults"]).items()})
        universes = digest.get("plugin_universes")
        ctx = JobContext(cluster_id, 0, str(digest["submit_dir"]), str(digest["owner"]), int(digest["qdate"]),
                         config.get, env, None if universes is None else [str(u) for u in universes])
        rows = [{str(k): str(v) for k, v in dict(r).items()} for r in items]
        return QueueJobs(desc, settings, [str(v) for v in digest["variables"]], rows, int(digest["count"]),
                         int(digest["line"]), 0, ctx)
    except (KeyError, TypeError, ValueError) as exc:
        raise DigestError(f"a malformed submit digest: {exc!r}") from None
