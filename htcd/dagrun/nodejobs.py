"""A node's job ads: its submit description (parsed once per file and cached), the node's VARS,
and what DAGMan adds to every node job."""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from htcd.dagman.model import Dag, Node, NodeKind
from htcd.submit import parse_submit
from htcd.submit.description import SubmitDescription
from htcd.submit.parser import QueueStatement, Setting
from htcd.submit.templates import TemplateSet

Ads = tuple[dict[str, str], list[dict[str, str]]]


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

    def node_dir(self, node: Node) -> str:
        return os.path.normpath(os.path.join(self.base_dir, node.directory))

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
        desc = copy.copy(self.description(node, submit_file))
        ctx = self.ctx
        before: list[Setting] = []
        priority = node.priority + ctx.dag_priority
        if priority:
            before.append(Setting("priority", str(priority), 0))
        # VARS go before the submit description (DAGMAN_DEFAULT_APPEND_VARS = False) unless APPEND
        # $(JOB) and $(RETRY) in a VARS value are the node's name and try (as DAGMan replaces them)
        values = [(v, v.value.replace("$(JOB)", node.name).replace("$(RETRY)", str(retry))) for v in node.vars]
        before += [Setting(v.name, value, 0) for v, value in values if v.position != "APPEND"]
        after = [Setting(v.name, value, 0) for v, value in values if v.position == "APPEND"]
        after.append(Setting("batch_name", ctx.batch_name, 0))
        after.append(Setting("submit_event_notes", f"DAG Node: {node.name}", 0))
        if ctx.suppress_notification:
            after.append(Setting("notification", "never", 0))
        statements = list(desc.statements)
        at = next((i for i, s in enumerate(statements) if isinstance(s, QueueStatement)), len(statements))
        desc.statements = before + statements[:at] + after + statements[at:]
        env = dict(os.environ)
        cluster_ad, procs = desc.make_jobs(cluster_id, submit_dir=self.node_dir(node), owner=ctx.owner,
                                           qdate=int(time.time()), config_get=self.config_get, env=env,
                                           submit_file=submit_file or node.submit)
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
        return (cluster_ad, procs), list(desc.warnings)


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
