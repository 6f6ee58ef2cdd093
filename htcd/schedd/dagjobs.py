"""A DAG job's node jobs leave with it: when a removed job that names other jobs to remove
(``OtherJobRemoveRequirements``, which condor_submit_dag sets to ``DAGManJobId =?= <cluster>``)
leaves the queue, the schedd removes every job that expression selects, and every job whose
``DAGManJobId`` is its cluster.  So the nodes of a DAGMan that was killed (-9) or could not
remove them itself never linger; a DAGMan that removed them already leaves nothing to do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcd.classad import ClassAdSyntaxError, is_true, parse_expr
from htcd.schedd.jobs import REMOVED, Job
from htcd.schedd.query import public_ad

if TYPE_CHECKING:
    from htcd.schedd.daemon import Schedd

OTHER = "OtherJobRemoveRequirements"


def has_node_jobs(job: Job) -> bool:
    """A job that may have node jobs: a DAG job (its OtherJobRemoveRequirements) or a scheduler
    universe job (a DAGMan that was submitted without one)."""
    return job.text(OTHER) is not None or job.text("JobUniverse") == "7"


def node_jobs(schedd: Schedd, job: Job) -> list[Job]:
    """The queued jobs ``job``'s removal takes with it."""
    text = job.get(OTHER)
    expr = None
    if isinstance(text, str) and text.strip():
        try:
            expr = parse_expr(text)
        except ClassAdSyntaxError as exc:
            schedd.log.error("job %s: %s = %r does not parse (%s); removing only the jobs whose DAGManJobId is %d",
                             job.id_text, OTHER, text, exc, job.cluster_id)
    out = []
    for other in list(schedd.jobs.values()):
        if other is job or other.cluster_id == job.cluster_id or (other.status == REMOVED and not other.removing):
            continue
        dag_id = other.get("DAGManJobId")
        if dag_id == job.cluster_id or (expr is not None and is_true(expr.eval(public_ad(other)))):
            out.append(other)
    return out


def remove_node_jobs(schedd: Schedd, job: Job) -> int:
    """Remove the node jobs of ``job``, a removed job leaving the queue; how many."""
    if job.status != REMOVED or not has_node_jobs(job):
        return 0
    chosen = node_jobs(schedd, job)
    if not chosen:
        return 0
    text = job.get(OTHER)
    reason = (f"removed because <{OTHER} = {text}> fired when job {job.id_text} was removed"
              if isinstance(text, str) else f"removed because its DAG job {job.id_text} was removed")
    for other in chosen:
        if other.removing:
            continue
        schedd.actions.remove(other, reason)
    schedd.log.info("job %s removed: removing its %d node job(s)", job.id_text, len(chosen))
    return len(chosen)
