"""Several DAG files in one DAGMan job: combined into one DAG with no edges between them.

As condor_dagman does with several ``-Dag`` files: each file is parsed on its own (its
statements name its own nodes only), then the nodes are put together.  With
DAGMAN_MUNGE_NODE_NAMES (the default) every node name gets the file's number and a period in
front (``0.A``, ``1.A``); without it a name used in two files is an error naming both lines.
The first file is the primary: it names the outputs, and the one rescue DAG of the whole run
is ``<primary>_multi.rescueNNN``.  One CONFIG file, one FINAL node in all; for DOT,
NODE_STATUS_FILE and JOBSTATE_LOG the first file that names one wins.
"""

from __future__ import annotations

import os

from htcd.dagman.errors import DagError, DagWarning
from htcd.dagman.model import Dag, Node
from htcd.dagman.parser import parse_dag

MULTI_SUFFIX = "_multi"


def rescue_base(dag_files: list[str]) -> str:
    """The file name rescue DAGs are numbered after: the DAG file, or ``<primary>_multi``."""
    return dag_files[0] if len(dag_files) == 1 else dag_files[0] + MULTI_SUFFIX


def parse_dags(dag_files: list[str], *, cwd: str | None = None, use_dag_dir: bool = False,
               munge: bool = True, check_files: bool = True) -> Dag:
    """Parse each DAG file and combine them; one file is returned as parsed."""
    if not dag_files:
        raise DagError("no DAG file given")
    if use_dag_dir:
        check_one_directory(dag_files)
    dags = [parse_dag(f, cwd=cwd, use_dag_dir=use_dag_dir, check_files=check_files) for f in dag_files]
    return combine_dags(dags, munge=munge)


def check_one_directory(dag_files: list[str]) -> None:
    """-usedagdir: htcd runs every node of one DAGMan job from the primary DAG file's directory."""
    if len({os.path.dirname(f) for f in dag_files}) > 1:
        raise DagError(f"-usedagdir with DAG files in different directories ({' '.join(dag_files)}): "
                       "htcd runs all nodes of one DAGMan job from the primary DAG file's directory")


def combine_dags(dags: list[Dag], *, munge: bool = True) -> Dag:
    """One DAG of all of ``dags`` (parsed DAGs; they are renamed in place when munging)."""
    if len(dags) == 1:
        return dags[0]
    out = Dag(file=dags[0].file)
    out.config = one_config(dags)
    out.config_origin = next((d.config_origin for d in dags if d.config is not None), None)
    for number, dag in enumerate(dags):
        prefix = f"{number}." if munge else ""
        _rename(dag, prefix)
        for name, node in dag.nodes.items():
            if name in out.nodes:  # only without munging
                first = out.nodes[name]
                raise DagError(f"node name {name} is used in two DAG files (first at {first.origin}); "
                               "with DAGMAN_MUNGE_NODE_NAMES = false node names must be unique "
                               "across all DAG files", node.origin)
            out.nodes[name] = node
        _take_final(out, dag)
        _take_max_jobs(out, dag)
        for desc, text in dag.submit_descriptions.items():
            if desc in out.submit_descriptions and out.submit_descriptions[desc] != text:
                raise DagError(f"SUBMIT-DESCRIPTION {desc} is defined differently in {out.file} "
                               f"and {dag.file}")
            out.submit_descriptions[desc] = text
        _take_first(out, dag)
        out.set_job_attrs += dag.set_job_attrs
        out.env_get += dag.env_get
        out.env_set += dag.env_set
        out.splices.update({prefix + name: file for name, file in dag.splices.items()})
        out.warnings += dag.warnings
        out.files += dag.files
    return out


def _rename(dag: Dag, prefix: str) -> None:
    if not prefix:
        return
    renamed: dict[str, Node] = {}
    for node in dag.nodes.values():
        node.name = prefix + node.name
        if node.weak_parents is not None:
            node.weak_parents = {prefix + p for p in node.weak_parents}
        renamed[node.name] = node
    dag.nodes = renamed


def _take_final(out: Dag, dag: Dag) -> None:
    if dag.final is None:
        return
    if out.final is not None:
        raise DagError(f"a second FINAL node {dag.final.name} (the first is {out.final.name} at "
                       f"{out.final.origin}): one FINAL node in all the DAG files", dag.final.origin)
    out.final = dag.final


def _take_first(out: Dag, dag: Dag) -> None:
    """DOT, NODE_STATUS_FILE, JOBSTATE_LOG: the first file naming one wins; a later one is warned about."""
    if out.dot is None:
        out.dot = dag.dot
    elif dag.dot is not None and dag.dot.file != out.dot.file:
        out.warnings.append(DagWarning(f"DOT {dag.dot.file} in {dag.file} does not override the earlier "
                                       f"{out.dot.file}"))
    if out.node_status_file is None:
        out.node_status_file = dag.node_status_file
    elif dag.node_status_file is not None and dag.node_status_file.file != out.node_status_file.file:
        out.warnings.append(DagWarning(f"NODE_STATUS_FILE {dag.node_status_file.file} in {dag.file} does not "
                                       f"override the earlier {out.node_status_file.file}"))
    if out.jobstate_log is None:
        out.jobstate_log = dag.jobstate_log
    elif dag.jobstate_log is not None and dag.jobstate_log != out.jobstate_log:
        out.warnings.append(DagWarning(f"JOBSTATE_LOG {dag.jobstate_log} in {dag.file} does not override "
                                       f"the earlier {out.jobstate_log}"))


def one_config(dags: list[Dag]) -> str | None:
    """The CONFIG file of all the DAG files (read before combining: it may set the munging)."""
    first: Dag | None = None
    for dag in dags:
        if dag.config is None:
            continue
        if first is None:
            first = dag
        elif os.path.normpath(first.config or "") != os.path.normpath(dag.config):
            raise DagError(f"conflicting DAGMan config files {first.config} (at {first.config_origin}) and "
                           f"{dag.config}: one config file per DAGMan", dag.config_origin)
    return first.config if first is not None else None


def _take_max_jobs(out: Dag, dag: Dag) -> None:
    """Categories are shared by all the files; a second, different MAXJOBS wins with a warning."""
    for category, limit in dag.max_jobs.items():
        old = out.max_jobs.get(category)
        if old is not None and old != limit:
            out.warnings.append(DagWarning(f"new maxjobs value {limit} for category {category} "
                                           f"(in {dag.file}) overrides old value {old}"))
        out.max_jobs[category] = limit
