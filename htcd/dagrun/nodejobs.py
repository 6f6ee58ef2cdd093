"""A node's job ads: its submit description (parsed once per file and cached), the node's VARS,
and what DAGMan adds to every node job.

Nodes that share a submit file and the same VARS (a fan-out of one job type) get the same job
but for its cluster id, node name and submit time: those ads are built once and copied, with
those three filled in, instead of running the submit language again for every node.  A
description whose jobs could differ otherwise (it names ``$(Cluster)``, the submit time, a
random choice, or reads its queue items from files or commands) is built anew for each node."""

from __future__ import annotations

import copy
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from htcd.dagman.model import Dag, Node, NodeKind, Var
from htcd.submit import parse_submit
from htcd.submit.description import MACRO_REF, SubmitDescription
from htcd.submit.parser import QueueStatement, Setting
from htcd.submit.templates import TemplateSet

Ads = tuple[dict[str, str], list[dict[str, str]]]

# stand-ins while a shared job is built: each must come out only where the node's own value goes
_CLUSTER_MARK = 999_999_937
_QDATE_MARK = 1_000_000_007
_NAME_MARK = "htcd-dag-node-7f3e9c1d"
_PER_SUBMIT = {"cluster", "clusterid", "submit_time", "year", "month", "day"}  # macros a shared job cannot hold
_VOLATILE = re.compile(r"\$(RANDOM_CHOICE|RANDOM_INTEGER)\(", re.IGNORECASE)
SHARED_JOBS = 64  # shared jobs kept (by submit file and VARS); the oldest is dropped first


@dataclass
class _Shared:
    """A node job built with the stand-ins, and the warnings its build gave."""

    cluster_ad: dict[str, str]
    procs: list[dict[str, str]]
    warnings: list[str]


def _shareable(desc: SubmitDescription) -> bool:
    """Whether every node of this description gets the same job but for cluster, name and time."""
    for stmt in desc.statements:
        if isinstance(stmt, Setting):
            texts = [stmt.value]
        elif isinstance(stmt, QueueStatement):
            if stmt.source not in ("", "in"):
                return False  # items read from files, globs or a command: read at each submit
            texts = [stmt.count, *stmt.items]
        else:
            continue
        for text in texts:
            if _VOLATILE.search(text) or {m.lower() for m in MACRO_REF.findall(text)} & _PER_SUBMIT:
                return False
    return True


def _marks_only_in_place(cluster_ad: dict[str, str], procs: list[dict[str, str]]) -> bool:
    """The stand-ins are found only where the node's values will be put (a last check that
    nothing else in the job was derived from them)."""
    allowed = {"ClusterId": str(_CLUSTER_MARK), "QDate": str(_QDATE_MARK), "EnteredCurrentStatus": str(_QDATE_MARK),
               "SubmitEventNotes": quoted(f"DAG Node: {_NAME_MARK}")}
    marks = (str(_CLUSTER_MARK), str(_QDATE_MARK), _NAME_MARK)
    for ad in (cluster_ad, *procs):
        for k, v in ad.items():
            if any(m in v for m in marks) and not (ad is cluster_ad and allowed.get(k) == v):
                return False
    return True


def quoted(text: str) -> str:
    """A ClassAd string literal (the wire form of a string attribute)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class JobContext:
    """What every node job of this DAGMan run gets."""

    dagman_cluster: int
    dagman_proc: int
    nodes_log: str
    batch_name: str
    suppress_notification: bool
    dag_priority: int
    owner: str
    set_job_attrs: list[tuple[str, str]]
    env_set: list[tuple[str, str]]
    env_get: list[str]


class NodeJobs:
    """Builds node jobs; a submit file is read and parsed once, whatever the number of nodes."""

    def __init__(self, dag: Dag, base_dir: str, ctx: JobContext,
                 config_get: Callable[[str], str | None], templates: TemplateSet) -> None:
        self.dag = dag
        self.base_dir = base_dir
        self.ctx = ctx
        self.config_get = config_get
        self.templates = templates
        self._cache: dict[tuple[str, str], SubmitDescription] = {}
        self._shareable: dict[tuple[str, str], bool] = {}
        self._shared: dict[tuple[object, ...], _Shared] = {}
        self.shared_builds = 0  # node jobs copied from a shared build (dagman.out says how many at the end)

    def node_dir(self, node: Node) -> str:
        return os.path.normpath(os.path.join(self.base_dir, node.directory))

    def _key(self, node: Node, submit_file: str | None) -> tuple[str, str]:
        directory = self.node_dir(node)
        if node.inline is not None and submit_file is None:
            return ("inline:" + node.submit, directory)
        return (os.path.abspath(os.path.join(directory, submit_file or node.submit)), directory)

    def description(self, node: Node, submit_file: str | None = None) -> SubmitDescription:
        directory = self.node_dir(node)
        if node.inline is not None and submit_file is None:
            key = ("inline:" + node.submit, directory)
            text, filename, path = node.inline, f"{self.dag.file} (node {node.name})", None
        else:
            path = os.path.join(directory, submit_file or node.submit)
            key = (os.path.abspath(path), directory)
            text, filename = "", path
        desc = self._cache.get(key)
        if desc is None:
            if path is not None:
                with open(path) as f:
                    text = f.read()
            desc = parse_submit(text, filename, submit_dir=directory, templates=self.templates,
                                path=os.path.abspath(path) if path else None)
            self._cache[key] = desc
        return desc

    def build(self, node: Node, cluster_id: int, submit_file: str | None = None,
              retry: int = 0) -> tuple[Ads, list[str]]:
        """(cluster ad, proc ads) of the node's job for this cluster id, and the warnings."""
        ctx = self.ctx
        priority = node.priority + ctx.dag_priority
        # $(JOB) and $(RETRY) in a VARS value are the node's name and try (as DAGMan replaces them)
        values = [(v, v.value.replace("$(JOB)", node.name).replace("$(RETRY)", str(retry))) for v in node.vars]
        desc_key = self._key(node, submit_file)
        shareable = node.kind is not NodeKind.SUBDAG and self._shareable.get(desc_key)
        if shareable is None:
            shareable = self._shareable[desc_key] = _shareable(self.description(node, submit_file))
        if not shareable:
            (cluster_ad, procs), warnings = self._make(node, cluster_id, submit_file, priority, values,
                                                       node.name, int(time.time()))
        else:
            key = (desc_key, submit_file, priority, tuple((v.name, v.position, value) for v, value in values))
            shared = self._shared.get(key)
            if shared is None:
                (c_ad, p_ads), warnings = self._make(node, _CLUSTER_MARK, submit_file, priority, values,
                                                     _NAME_MARK, _QDATE_MARK)
                if not _marks_only_in_place(c_ad, p_ads):
                    self._shareable[desc_key] = False
                    return self.build(node, cluster_id, submit_file, retry)
                shared = _Shared(c_ad, p_ads, warnings)
                if len(self._shared) >= SHARED_JOBS:
                    del self._shared[next(iter(self._shared))]
                self._shared[key] = shared
            else:
                self.shared_builds += 1
            now = str(int(time.time()))
            cluster_ad, procs, warnings = dict(shared.cluster_ad), [dict(p) for p in shared.procs], shared.warnings
            for k, v in (("ClusterId", str(cluster_id)), ("QDate", now), ("EnteredCurrentStatus", now),
                         ("SubmitEventNotes", quoted(f"DAG Node: {node.name}"))):
                if k in cluster_ad:
                    cluster_ad[k] = v
        parents = ",".join(p.name for p in node.parents)
        cluster_ad.update({
            "DAGManJobId": str(ctx.dagman_cluster), "DAGNodeName": quoted(node.name),
            "DAGManNodesLog": quoted(ctx.nodes_log),
        })
        if parents:
            cluster_ad["DAGParentNodeNames"] = quoted(parents)
        for name, value in ctx.set_job_attrs:
            cluster_ad[name] = value
        if node.kind is NodeKind.SUBDAG:
            cluster_ad["DAG_NodePriority"] = str(priority)
        return (cluster_ad, procs), list(warnings)

    def _make(self, node: Node, cluster_id: int, submit_file: str | None, priority: int,
              values: list[tuple[Var, str]], name: str, qdate: int) -> tuple[Ads, list[str]]:
        """The submit language run on the node's description with its VARS and DAGMan's settings."""
        desc = copy.copy(self.description(node, submit_file))
        ctx = self.ctx
        before: list[Setting] = []
        if priority:
            before.append(Setting("priority", str(priority), 0))
        # VARS go before the submit description (DAGMAN_DEFAULT_APPEND_VARS = False) unless APPEND
        before += [Setting(v.name, value, 0) for v, value in values if v.position != "APPEND"]
        after = [Setting(v.name, value, 0) for v, value in values if v.position == "APPEND"]
        after.append(Setting("batch_name", ctx.batch_name, 0))
        after.append(Setting("submit_event_notes", f"DAG Node: {name}", 0))
        if ctx.suppress_notification:
            after.append(Setting("notification", "never", 0))
        statements = list(desc.statements)
        at = next((i for i, s in enumerate(statements) if isinstance(s, QueueStatement)), len(statements))
        desc.statements = before + statements[:at] + after + statements[at:]
        env = dict(os.environ)
        ads = desc.make_jobs(cluster_id, submit_dir=self.node_dir(node), owner=ctx.owner, qdate=qdate,
                             config_get=self.config_get, env=env, submit_file=submit_file or node.submit)
        return ads, list(desc.warnings)


def submit_file_value(path: str, keyword: str) -> str:
    """The value a submit file gives ``keyword`` as condor_dagman reads it for the jobstate log:
    the last logical line ``keyword = value`` (name compared without case), quotes stripped;
    "" when none, when the value holds a macro, or when the file cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read().replace("\\\n", "")
    except OSError:
        return ""
    value = ""
    for line in text.splitlines():
        words = [w.strip() for w in line.split("=") if w.strip()]
        if len(words) >= 2 and words[0].lower() == keyword.lower():
            value = words[1]
    if "$" in value:
        return ""
    if value.startswith('"'):
        value = value[1:]
    if value.endswith('"'):
        value = value[:-1]
    return value


def jobstate_tag(path: str) -> str:
    """The node's job tag in the jobstate log: the value of the attribute ``+job_tag_name``
    names (default ``+pegasus_site``) in its submit file, or ``-``."""
    name = submit_file_value(path, "+job_tag_name") or "+pegasus_site"
    return submit_file_value(path, name) or "-"
