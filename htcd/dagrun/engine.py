"""The DAGMan job: runs one DAG against a schedd, in one asyncio loop.

Ready nodes (every parent done) run their PRE script, then their job is submitted through one
persistent schedd connection (a worker thread does the blocking call); the nodes log, where the
schedd writes every node job's events, is followed at a short interval; when every proc of a
node's cluster has left the queue the POST script runs and decides.  Each step is written to
the journal before its effect can be seen, so a restart after kill -9 recovers exactly
(``recovery.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import os
import pwd
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from htcd import eventlog
from htcd.client.schedd import ScheddClient, Submitted
from htcd.config import Config
from htcd.dagman.condor_sub import SubmitDagOptions, write_condor_sub
from htcd.dagman.dagman_out import status_table
from htcd.dagman.errors import DagError
from htcd.dagman.jobstate import line as jobstate_line
from htcd.dagman.macros import ScriptValues, expand_script_arguments
from htcd.dagman.model import Dag, Node, NodeKind, Script
from htcd.dagman.runstate import DagRun, DagStatus, NodeRun, NodeStatus
from htcd.dagman.settings import DagmanSettings
from htcd.dagman.statusfile import node_status_text
from htcd.dagrun import files
from htcd.dagrun.journal import Journal, JournalState
from htcd.dagrun.nodejobs import JobContext, NodeJobs, jobstate_tag
from htcd.dagrun.outfile import DagmanOut
from htcd.errors import UserError
from htcd.wire.address import Address

T = TypeVar("T")

# $RETURN values DAGMan gives when no job exit code exists (HTCondor's dag.h)
SUBMIT_FAILED, JOB_ABORTED, JOB_SKIPPED = -1001, -1002, -1004
SUBMIT_BATCH = 100  # node clusters per SUBMIT_CLUSTERS call at most
POLL_INTERVAL = 0.05  # seconds between reads of the nodes log (HTCondor scans every 5 s)
AD_UPDATE_INTERVAL = 2.0
PERIODIC_INTERVAL = 0.5  # the status table (when it changed) and the node status file are looked at this often  # the DAG job's own ad is updated at most this often
STATUS_NAMES = {0: "DAG_STATUS_OK", 1: "DAG_STATUS_ERROR", 2: "DAG_STATUS_NODE_FAILED",
                3: "DAG_STATUS_ABORT", 4: "DAG_STATUS_RM", 5: "DAG_STATUS_CYCLE", 6: "DAG_STATUS_HALTED"}
ULOG_NAMES = {0: "ULOG_SUBMIT", 1: "ULOG_EXECUTE", 2: "ULOG_EXECUTABLE_ERROR", 4: "ULOG_JOB_EVICTED",
              5: "ULOG_JOB_TERMINATED", 6: "ULOG_IMAGE_SIZE", 7: "ULOG_SHADOW_EXCEPTION",
              9: "ULOG_JOB_ABORTED", 12: "ULOG_JOB_HELD", 13: "ULOG_JOB_RELEASED",
              22: "ULOG_JOB_DISCONNECTED", 23: "ULOG_JOB_RECONNECTED"}


def _max_jobstate_seq(path: str) -> int:
    """The largest sequence number in an existing jobstate log (0: none, or no file)."""
    from htcd.dagman.jobstate import parse_line

    top = 0
    with contextlib.suppress(OSError), open(path, encoding="utf-8", errors="replace") as f:
        for text in f:
            with contextlib.suppress(ValueError):
                top = max(top, parse_line(text.rstrip("\n")).sequence or 0)
    return top


def _jobstate_node_lines(path: str) -> set[tuple[str, str, str]]:
    """(node, event, condorID) of every node line of an existing jobstate log."""
    from htcd.dagman.jobstate import parse_line

    out: set[tuple[str, str, str]] = set()
    with contextlib.suppress(OSError), open(path, encoding="utf-8", errors="replace") as f:
        for text in f:
            with contextlib.suppress(ValueError):
                entry = parse_line(text.rstrip("\n"))
                if entry.node is not None:
                    out.add((entry.node, entry.event, entry.job_id or "-"))
    return out


def _script_path(exe: str, directory: str) -> str:
    """A script named relative to the node's DIR is found there (else on PATH)."""
    if not os.path.isabs(exe) and os.path.exists(os.path.join(directory, exe)):
        return os.path.join(directory, exe)
    return exe


class ProcStates(dict[int, int]):
    """A node's procs -> JobStatus (1 idle 2 run 5 held, 4/3 gone), keeping the DAG's count of
    idle procs (``idle[0]``, shared by every node) as they change, so that DAGMAN_MAX_JOBS_IDLE
    is checked without counting 10,000 nodes' procs on every pass."""

    __slots__ = ("idle",)

    def __init__(self, idle: list[int]) -> None:
        super().__init__()
        self.idle = idle

    def __setitem__(self, proc: int, status: int) -> None:
        self.idle[0] += (status == 1) - (self.get(proc) == 1)
        super().__setitem__(proc, status)

    def setdefault(self, proc: int, status: int) -> int:
        if proc not in self:
            self[proc] = status
        return self[proc]

    def reset(self, states: dict[int, int]) -> None:
        """Drop every proc (a new try, or a node started again) and take these."""
        self.idle[0] -= sum(1 for v in self.values() if v == 1)
        super().clear()
        for proc, status in states.items():
            self[proc] = status


@dataclass
class Track:
    """The engine's view of one node's current try: its procs and what they returned."""

    procs: ProcStates
    exit_codes: dict[int, int] = field(default_factory=dict)
    first_failure: int | None = None
    aborted: int = 0
    removing: bool = False
    job_ok: bool = True


class Engine:
    def __init__(self, dag: Dag, dag_file: str, base_dir: str, cfg: Config, settings: DagmanSettings,
                 paths: files.DagPaths, *, recovering: bool, journal_state: JournalState,
                 dagman_id: tuple[int, int], batch_name: str, dag_priority: int,
                 schedd_address: Address | None, always_run_post: bool,
                 submit_attempt_delay: float = 1.0, dag_files: list[str] | None = None) -> None:
        self.dag_files = dag_files or [dag_file]  # several -Dag files: the first is dag_file
        self.dag, self.dag_file, self.base_dir, self.cfg, self.settings = dag, dag_file, base_dir, cfg, settings
        self.paths = paths
        self.recovering = recovering
        self.jstate = journal_state
        self.dagman_id = dagman_id
        self.schedd_address = schedd_address
        self.always_run_post = always_run_post
        self.submit_attempt_delay = submit_attempt_delay
        self.out = DagmanOut(paths.out)
        self.journal = Journal(paths.journal, fresh=not recovering)
        self.run = DagRun(nodes={name: NodeRun() for name in dag.nodes}, dag_files=list(self.dag_files),
                          dagman_job_id=f"{dagman_id[0]}.{dagman_id[1]}", started_at=time.time(),
                          recovering=recovering)
        self.idle_count = [0]  # idle procs of every node (ProcStates keeps it)
        self.in_flight = 0  # nodes whose submit was sent and not answered
        self.track: dict[str, Track] = {name: Track(ProcStates(self.idle_count)) for name in dag.nodes}
        self.cluster_node: dict[int, str] = dict(journal_state.clusters)
        self.unfinished_parents = {name: len(node.parents) for name, node in dag.nodes.items()}
        self.ready: list[tuple[int, int, str]] = []
        self.seq = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.wake = asyncio.Event()
        self.changed = True
        self.pre_running = 0
        self.post_running = 0
        self.post_waiting: list[str] = []
        self.pre_waiting: list[str] = []
        self.jobs_submitted = 0
        self.submit_queue: list[tuple[Callable[[int], tuple[dict[str, str], list[dict[str, str]]]],
                                      asyncio.Future[Submitted]]] = []
        self.submit_drainer: asyncio.Future[None] | None = None
        self.batched_submits = 0  # SUBMIT_CLUSTERS calls made
        self.in_recovery = False
        self.active_hint: str | None = None  # a node _finished found active (checked first next time)
        self.abort: tuple[int, str] | None = None  # (exit code, message) once ABORT-DAG-ON fired
        self.removed = False  # SIGUSR1: the DAG job is being removed
        self.shutdown = False  # SIGTERM: the schedd shuts down; leave the jobs and the lock
        self.final_started = False
        self.follower = eventlog.LogFollower(paths.nodes_log)
        self.client: ScheddClient | None = None
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="schedd-client")
        # HTCondor's numbering: a node's try takes the next number at its first jobstate line
        # and keeps it; a retry takes a new one; a restart continues after the largest logged
        self.jobstate_next_seq = _max_jobstate_seq(dag.jobstate_log) + 1 if recovering and dag.jobstate_log else 1
        self.jobstate_seq: dict[str, int] = {}
        self.job_tags: dict[str, str] = {}  # node -> its jobstate job tag (from its submit file)
        self.jobstate_seen: set[tuple[str, str, str]] | None = None  # during recovery: lines already logged
        self.jobstate_fd = os.open(dag.jobstate_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) \
            if dag.jobstate_log else None
        self.next_status_file = 0.0
        self.next_periodic = 0.0
        self.ending = False  # the end's DAG status is set: the status table no longer derives it
        self.next_ad_update = 0.0
        self.last_table = ""
        self.only_node: str | None = None
        self.scripts: set[asyncio.subprocess.Process] = set()  # PRE/POST/HOLD scripts running
        self._after_start: list[Callable[[], object]] = []
        owner = pwd.getpwuid(os.geteuid()).pw_name
        from htcd.submit.templates import TemplateSet

        self.jobs = NodeJobs(dag, base_dir, JobContext(
            dagman_cluster=dagman_id[0], dagman_proc=dagman_id[1], nodes_log=paths.nodes_log,
            batch_name=batch_name, suppress_notification=settings.suppress_notification,
            dag_priority=dag_priority, owner=owner, set_job_attrs=list(dag.set_job_attrs),
            env_set=list(dag.env_set), env_get=list(dag.env_get)), cfg.get, TemplateSet.from_config(cfg))

    # -- the loop ---------------------------------------------------------------------------

    async def main(self) -> int:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGUSR1, self._on_remove)
        loop.add_signal_handler(signal.SIGTERM, self._on_term)
        try:
            if self.recovering and self.dagman_id[0]:
                self.in_recovery = True  # the DAG job's ad says so while the state is rebuilt
                await self._update_ad()
            self._start()
            self.in_recovery = False
            while not (self.shutdown or self.removed or self.abort):
                self._read_log()
                finished = False
                if self.changed:  # nothing to decide while nothing happened: 10,000 idle nodes cost nothing
                    self.changed = False
                    self._schedule()
                    finished = self._finished()
                self._periodic()
                if finished:
                    if self.dag.final is not None and not self.final_started:
                        self._start_final()
                        continue
                    break
                self.wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), POLL_INTERVAL)
            return await self._end()
        finally:
            loop.remove_signal_handler(signal.SIGUSR1)
            loop.remove_signal_handler(signal.SIGTERM)
            for task in self.tasks:
                task.cancel()
            if self.client is not None:
                self.client.close()
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.out.close()
            self.journal.close()
            if self.jobstate_fd is not None:
                os.close(self.jobstate_fd)

    def _on_remove(self) -> None:
        self.out.line("Received SIGUSR1: the DAGMan job is being removed")
        self.removed = True
        self._poke()

    def _on_term(self) -> None:
        self.out.line("Received SIGTERM: exiting, leaving the node jobs and the lock file for recovery")
        self.shutdown = True
        self._poke()

    def _poke(self) -> None:
        """Something changed: the loop looks at the ready nodes and the end again, at once."""
        self.changed = True
        self.wake.set()

    def _spawn(self, coro: object) -> None:
        task = asyncio.ensure_future(coro)  # type: ignore[call-overload]
        self.tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            self.out.line(f"ERROR: internal error: {exc!r}")
            self.abort = (1, f"internal error: {exc!r}")
        self._poke()

    def _finished(self) -> bool:
        """Nothing runs and nothing more can start."""
        if self.tasks or self.ready or self.post_waiting or self.pre_waiting:
            return False
        active = (NodeStatus.PRERUN, NodeStatus.SUBMITTED, NodeStatus.POSTRUN, NodeStatus.READY)
        hint = self.active_hint  # the node that was still active last time: most often it still is
        if hint is not None and self.run.nodes[hint].status in active:
            return False
        for name, run in self.run.nodes.items():
            node = self.dag.nodes[name]
            if run.status in active and node.kind is not NodeKind.SERVICE:
                self.active_hint = name
                return False
        return True

    # -- start and recovery -----------------------------------------------------------------

    def _start(self) -> None:
        d = self.dag
        self.out.line("******************************************************")
        self.out.line("** htcd dagman (condor_scheduniv_exec."
                      f"{self.run.dagman_job_id} (CONDOR_DAGMAN) STARTING UP")
        self.out.line(f"** PID = {os.getpid()}")
        self.out.line("******************************************************")
        self.out.line(f"DAGMAN_MAX_JOBS_IDLE setting: {self.settings.max_jobs_idle}")
        self.out.line(f"DAGMAN_MAX_JOBS_SUBMITTED setting: {self.settings.max_jobs_submitted}")
        self.out.line(f"DAGMAN_MAX_PRE_SCRIPTS setting: {self.settings.max_pre_scripts}")
        self.out.line(f"DAGMAN_MAX_POST_SCRIPTS setting: {self.settings.max_post_scripts}")
        self.out.line(f"DAGMAN_MAX_SUBMITS_PER_INTERVAL setting: {self.settings.max_submits_per_interval}")
        self.out.line(f"DAGMAN_DEFAULT_NODE_LOG setting: {self.paths.nodes_log}")
        self.out.line(f"Parsing {len(self.dag_files)} dagfiles")
        for name in self.dag_files:
            self.out.line(f"Parsing {name} ...")
        for w in d.warnings:
            self.out.line(str(w))
        for w in self.settings.warnings:
            self.out.line(str(w))
        self.out.line(f"Dag contains {len(d.nodes)} total nodes")
        for name, value in d.env_set:
            os.environ[name] = value
        self.out.line("Bootstrapping...")
        self._jobstate("DAGMAN_STARTED", None, self.run.dagman_job_id)
        for name, node in d.nodes.items():
            if node.done:
                self.run.nodes[name].status = NodeStatus.DONE
        if self.recovering:
            self.out.line("Running in RECOVERY mode... >>>>>>>>>>>>>>>>>>>>")
            self._jobstate("RECOVERY_STARTED", None, None)
            # the events read again from the nodes log are not written to the jobstate log twice
            self.jobstate_seen = _jobstate_node_lines(self.dag.jobstate_log) if self.dag.jobstate_log else set()
            self._recover()
            self.out.line("...done with RECOVERY mode <<<<<<<<<<<<<<<<<<<<<<<")
        # what is DONE frees its children
        for name, node in d.nodes.items():
            if self.run.nodes[name].status is NodeStatus.DONE:
                for child in node.children:
                    self.unfinished_parents[child.name] -= 1
        for name, node in d.nodes.items():
            run = self.run.nodes[name]
            if run.status is NodeStatus.ERROR:
                self._mark_futile(node)
        for name, node in d.nodes.items():
            run = self.run.nodes[name]
            if run.status is NodeStatus.NOT_READY and node.kind is not NodeKind.FINAL \
                    and self.unfinished_parents[name] == 0:
                self._make_ready(node)
        for action in self._after_start:
            action()
        # events of the current tries: procs that finished while DAGMan was down complete here
        self._read_log()
        if self.recovering:
            self.jobstate_seen = None
            self._jobstate("RECOVERY_FINISHED", None, None)
        self.out.line("Registering condor_event_timer...")

    def _recover(self) -> None:
        """Rebuild every node's state from the journal; the nodes log, read from its start, then
        brings the current tries' procs up to date."""
        for name, rec in self.jstate.nodes.items():
            node = self.dag.nodes.get(name)
            if node is None:
                continue
            run = self.run.nodes[name]
            run.retry = rec.try_number
            if rec.outcome == "DONE":
                run.status = NodeStatus.DONE
            elif rec.outcome == "FAILED":
                run.status = NodeStatus.ERROR
            elif node.kind is NodeKind.FINAL:
                continue  # the FINAL node starts again when its time comes
            elif rec.cluster is not None and rec.cluster < 0:  # the submit failed for good
                run.status = NodeStatus.SUBMITTED
                t = self.track[name]
                t.job_ok, t.first_failure = False, SUBMIT_FAILED
                self._after_start.append(functools.partial(self._job_finished, node))
            elif rec.cluster is not None:
                run.status, run.cluster, run.procs_submitted = NodeStatus.SUBMITTED, rec.cluster, rec.procs
                self.track[name].procs.reset({p: 1 for p in range(rec.procs)})
                if rec.post_rc is not None:  # the POST finished; its outcome was not recorded
                    run.status = NodeStatus.POSTRUN
                    self._after_start.append(functools.partial(self._spawn_after_post, node, rec.post_rc))
            elif rec.submitting:
                found = self._find_lost_submit(node)
                if found is not None:
                    cluster, procs = found
                    self.out.line(f"Node {name}: its submit was sent before the restart: job {cluster}")
                    self.journal.write("SUBMITTED", name, run.retry, cluster, procs)
                    self.cluster_node[cluster] = name
                    run.status, run.cluster, run.procs_submitted = NodeStatus.SUBMITTED, cluster, procs
                    self.track[name].procs.reset({p: 1 for p in range(procs)})
                else:
                    run.status = NodeStatus.NOT_READY
                    run.pre_return = rec.pre_rc
            elif rec.pre_rc is not None:
                run.pre_return = rec.pre_rc

    def _find_lost_submit(self, node: Node) -> tuple[int, int] | None:
        """A cluster submitted for this node whose SUBMITTED line never got written: its submit
        event in the nodes log, or a job in the queue with its DAGNodeName."""
        known = set(self.cluster_node)
        clusters: dict[int, int] = {}
        with contextlib.suppress(OSError):
            for ev in eventlog.read_events(self.paths.nodes_log):
                if ev.type == eventlog.SUBMIT and ev.cluster not in known \
                        and any(line.strip() == f"DAG Node: {node.name}" for line in ev.body):
                    clusters[ev.cluster] = max(clusters.get(ev.cluster, 0), ev.proc + 1)
        if not clusters:
            client = self._client()
            constraint = (f'DAGNodeName == "{node.name}" && DAGManNodesLog == "{self.paths.nodes_log}"')
            for chunk in client.query(constraint, ["ClusterId", "ProcId"]):
                for ad in chunk:
                    cluster = int(ad["ClusterId"])
                    if cluster not in known:
                        clusters[cluster] = max(clusters.get(cluster, 0), int(ad["ProcId"]) + 1)
        if not clusters:
            return None
        cluster = max(clusters)
        return cluster, clusters[cluster]

    # -- readiness and throttles ------------------------------------------------------------

    def _make_ready(self, node: Node) -> None:
        run = self.run.nodes[node.name]
        run.status = NodeStatus.READY
        self.seq += 1
        heapq.heappush(self.ready, (-node.priority, self.seq, node.name))

    def _mark_futile(self, node: Node) -> None:
        stack = list(node.children)
        while stack:
            child = stack.pop()
            run = self.run.nodes[child.name]
            if run.status in (NodeStatus.NOT_READY, NodeStatus.READY):
                run.status = NodeStatus.FUTILE
                stack.extend(child.children)

    def _queued_nodes(self) -> int:
        """Nodes whose job is in the queue (or being submitted) or whose PRE script runs."""
        return sum(1 for run in self.run.nodes.values() if run.status in (NodeStatus.SUBMITTED, NodeStatus.PRERUN))

    def _category_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for name, run in self.run.nodes.items():
            category = self.dag.nodes[name].category
            if category is not None and run.status in (NodeStatus.SUBMITTED, NodeStatus.PRERUN):
                counts[category] = counts.get(category, 0) + 1
        return counts

    def _idle_procs(self) -> int:
        """Idle node procs, a node whose submit is on its way counting as one (as the pass that
        started it did): else every pass while a submit is in flight would start as many again."""
        return self.idle_count[0] + self.in_flight

    def _schedule(self) -> None:
        s = self.settings
        started = 0
        held_back: list[tuple[int, int, str]] = []
        by_category: dict[str, int] | None = None
        queued = self._queued_nodes() if self.ready and s.max_jobs_submitted else 0  # scans: only when they count
        idle = self._idle_procs() if self.ready and s.max_jobs_idle else 0
        while self.ready and started < s.max_submits_per_interval:
            if s.max_jobs_submitted and queued >= s.max_jobs_submitted:
                break
            if s.max_jobs_idle and idle >= s.max_jobs_idle:
                break
            item = heapq.heappop(self.ready)
            node = self.dag.nodes[item[2]]
            if self.run.nodes[node.name].status is not NodeStatus.READY:
                continue
            limit = self.dag.max_jobs.get(node.category) if node.category else None
            if limit is not None and node.category is not None:
                if by_category is None:
                    by_category = self._category_counts()
                if by_category.get(node.category, 0) >= limit:
                    held_back.append(item)
                    continue
                by_category[node.category] = by_category.get(node.category, 0) + 1
            started += 1
            queued += 1
            idle += 1
            self._start_node(node)
        for item in held_back:
            heapq.heappush(self.ready, item)
        if self.ready and started >= s.max_submits_per_interval:
            self.changed = True  # more to start on the next pass
        while self.post_waiting and (not s.max_post_scripts or self.post_running < s.max_post_scripts):
            name = self.post_waiting.pop(0)
            self._spawn(self._run_post(self.dag.nodes[name]))
        while self.pre_waiting and (not s.max_pre_scripts or self.pre_running < s.max_pre_scripts):
            name = self.pre_waiting.pop(0)
            self._spawn(self._run_pre(self.dag.nodes[name]))

    def _start_node(self, node: Node) -> None:
        run = self.run.nodes[node.name]
        self.track[node.name].procs.reset({})
        self.track[node.name] = Track(self.track[node.name].procs)
        run.started_at = time.time()
        if node.pre is not None and run.pre_return is None:
            run.status = NodeStatus.PRERUN
            self.pre_waiting.append(node.name)
        else:
            self._submit_node(node)

    def _start_final(self) -> None:
        self.final_started = True
        final = self.dag.final
        assert final is not None
        status = int(self._dag_status())
        self.out.line(f"DAG status: {status} ({STATUS_NAMES[status]})")
        self.out.line(f"Starting final node {final.name}...")
        self._start_node(final)
        self._poke()  # its PRE script waits for the next pass

    # -- scripts ----------------------------------------------------------------------------

    def _values(self, node: Node) -> ScriptValues:
        run = self.run.nodes[node.name]
        t = self.track[node.name]
        c = self.run.count
        return ScriptValues(
            node=node.name, retry=run.retry, max_retries=node.retry, dag_status=int(self._dag_status()),
            failed_count=c(NodeStatus.ERROR), futile_count=c(NodeStatus.FUTILE), done_count=c(NodeStatus.DONE),
            queued_count=c(NodeStatus.SUBMITTED), node_count=len(self.dag.nodes),
            dag_id=str(self.dagman_id[0]), cluster_id=run.cluster if run.cluster is not None else -1,
            proc_id=max(t.procs) if t.procs else 0, job_count=len(t.procs), success=t.job_ok,
            return_value=self._job_return(node), exit_codes=dict(t.exit_codes), job_abort_count=t.aborted,
            pre_script_return=run.pre_return if run.pre_return is not None else -1)

    def _dag_status(self) -> DagStatus:
        if self.removed:
            return DagStatus.RM
        if self.abort is not None:  # ABORT-DAG-ON ... RETURN 0 ends the DAG as a success, as HTCondor's
            return DagStatus.ABORT if self.abort[0] != 0 else DagStatus.OK
        if self.run.count(NodeStatus.ERROR):
            return DagStatus.NODE_FAILED
        return DagStatus.OK

    def _script_debug(self, node: Node, script: Script, directory: str, argv: list[str], rc: int,
                      output: bytes) -> None:
        """SCRIPT DEBUG: the captured output appended to the file in one write, after a banner."""
        assert script.debug_file is not None
        path = os.path.join(directory, script.debug_file)
        banner = (f"*** Node={node.name} Type={script.kind.value} Status={rc} Completion={int(time.time())} "
                  f"Cmd={' '.join(argv)} Stream={script.debug_stream}\n")
        try:
            with open(path, "ab") as f:
                f.write(banner.encode() + output + (b"" if not output or output.endswith(b"\n") else b"\n"))
        except OSError as exc:
            self.out.line(f"ERROR: node {node.name}: cannot write the SCRIPT DEBUG file {path}: {exc.strerror}")

    async def _script(self, node: Node, script: Script) -> int:
        argv, warnings = expand_script_arguments(script.kind, script.executable, script.arguments,
                                                 self._values(node))
        for w in warnings:
            self.out.line(f"Warning: node {node.name}: {w}")
        directory = self.jobs.node_dir(node)
        if argv:
            argv[0] = _script_path(argv[0], directory)
        self.out.line(f"Running {script.kind.value} script of Node {node.name}...")
        while True:
            try:
                pipe, devnull = asyncio.subprocess.PIPE, asyncio.subprocess.DEVNULL
                stream = script.debug_stream if script.debug_file else None  # SCRIPT DEBUG file STDOUT|STDERR|ALL
                proc = await asyncio.create_subprocess_exec(
                    *argv, cwd=directory, stdin=devnull,
                    stdout=pipe if stream in ("STDOUT", "ALL") else devnull,
                    stderr=asyncio.subprocess.STDOUT if stream == "ALL" else pipe if stream == "STDERR" else devnull)
                self.scripts.add(proc)
                try:
                    out, err = await proc.communicate()
                    rc = proc.returncode if proc.returncode is not None else -1
                finally:
                    self.scripts.discard(proc)
                if script.debug_file:
                    self._script_debug(node, script, directory, argv, rc, (out or b"") + (err or b""))
            except OSError as exc:
                self.out.line(f"{script.kind.value} script of node {node.name} could not be run: {exc}")
                return 1
            if rc < 0:
                self.out.line(f"{script.kind.value} Script of node {node.name} died on signal {-rc}")
            if script.defer_status is not None and rc == script.defer_status:
                self.out.line(f"Deferring {script.kind.value} script of node {node.name} for "
                              f"{script.defer_time} seconds (exit status {rc})")
                await asyncio.sleep(script.defer_time)
                continue
            return rc

    async def _run_pre(self, node: Node) -> None:
        run = self.run.nodes[node.name]
        assert node.pre is not None
        self.pre_running += 1
        self._jobstate("PRE_SCRIPT_STARTED", node.name, None)
        try:
            rc = await self._script(node, node.pre)
        finally:
            self.pre_running -= 1
        run.pre_return = rc
        self.journal.write("PRE", node.name, run.retry, rc)
        if rc == 0:
            self.out.line(f"PRE Script of node {node.name} completed successfully.")
            self._jobstate("PRE_SCRIPT_SUCCESS", node.name, None)
        else:
            self.out.line(f"PRE_Script of node {node.name} failed with status {rc}")
            self._jobstate("PRE_SCRIPT_FAILURE", node.name, None)
        if node.pre_skip is not None and rc == node.pre_skip:
            self.out.line(f"PRE_Script of node {node.name} exited with value {rc}, the PRE_SKIP value: "
                          "the node's job and POST script are skipped; the node succeeds")
            self._node_done(node, True, 0)
            return
        if rc != 0:
            run.status_details = "PRE script failed"
            t = self.track[node.name]
            t.job_ok = False
            if node.post is not None and self.always_run_post:
                t.first_failure = JOB_SKIPPED
                self._queue_post(node)
                return
            self._node_done(node, False, rc)
            return
        self._submit_node(node)

    def _queue_post(self, node: Node) -> None:
        self.run.nodes[node.name].status = NodeStatus.POSTRUN
        self.post_waiting.append(node.name)
        self._poke()

    async def _run_post(self, node: Node) -> None:
        run = self.run.nodes[node.name]
        assert node.post is not None
        self.post_running += 1
        self._jobstate("POST_SCRIPT_STARTED", node.name, self._job_text(node))
        try:
            rc = await self._script(node, node.post)
        finally:
            self.post_running -= 1
        self._jobstate("POST_SCRIPT_TERMINATED", node.name, self._job_text(node))
        self.journal.write("POST", node.name, run.retry, rc)
        await self._after_post(node, rc, self._job_return(node))

    def _spawn_after_post(self, node: Node, rc: int) -> None:
        self._spawn(self._after_post(node, rc, rc))

    async def _after_post(self, node: Node, rc: int, job_rc: int) -> None:
        if rc == 0:
            self.out.line(f"POST Script of node {node.name} completed successfully.")
            self._jobstate("POST_SCRIPT_SUCCESS", node.name, self._job_text(node))
        else:
            self.out.line(f"POST Script of node {node.name} failed with status {rc}")
            self._jobstate("POST_SCRIPT_FAILURE", node.name, self._job_text(node))
            self.run.nodes[node.name].status_details = "POST script failed"
        self._node_done(node, rc == 0, rc)

    # -- submitting -------------------------------------------------------------------------

    def _submit_node(self, node: Node) -> None:
        run = self.run.nodes[node.name]
        run.status = NodeStatus.SUBMITTED
        run.status_details = ""
        if node.noop:
            self.out.line(f"Node {node.name} is a NOOP node: its job is not submitted")
            self.track[node.name].procs.reset({})
            self._job_finished(node)
            return
        self._spawn(self._submit(node))

    async def _call(self, fn: Callable[[], T]) -> T:
        """A blocking client call, on the one thread that owns the schedd connection."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn)

    def _client(self) -> ScheddClient:
        if self.client is None:
            if self.schedd_address is None:
                from htcd.client.schedd import address

                self.schedd_address = address(self.cfg)[0]
            self.client = ScheddClient(self.schedd_address, timeout=60)
        return self.client

    async def _submit(self, node: Node) -> None:
        run = self.run.nodes[node.name]
        submit_file: str | None = None
        if node.kind is NodeKind.SUBDAG and node.dag_file is not None:
            dag_path = os.path.join(self.jobs.node_dir(node), node.dag_file)
            if self.settings.generate_subdag_submits:
                # the sub-DAG is read now, not when the DAG was parsed (a PRE or a parent's POST
                # script may write it): a bad or missing one fails the node's submit
                try:
                    submit_file = os.path.basename(write_condor_sub(
                        os.path.basename(dag_path), SubmitDagOptions(cwd=os.path.dirname(dag_path))))
                except (DagError, OSError) as exc:
                    self.out.line(f"ERROR: node {node.name}: cannot make the submit file of SUBDAG "
                                  f"{node.dag_file}: {exc}")
                    self._submit_failed(node)
                    return
        if node.kind is NodeKind.FINAL:
            node_vars_backup = list(node.vars)
            from htcd.dagman.model import Var

            node.vars = [Var("DAG_STATUS", str(int(self._dag_status()))),
                         Var("FAILED_COUNT", str(self.run.count(NodeStatus.ERROR))), *node.vars]
        else:
            node_vars_backup = None
        self.out.line(f"Submitting HTCondor Node {node.name} job(s)...")
        self.journal.write("SUBMITTING", node.name, run.retry)
        attempts = max(1, self.settings.max_submit_attempts)
        delay = self.submit_attempt_delay
        error = ""
        try:
            for attempt in range(attempts):
                warnings: list[str] = []

                def build(cid: int, warnings: list[str] = warnings) -> tuple[dict[str, str], list[dict[str, str]]]:
                    ads, w = self.jobs.build(node, cid, submit_file, run.retry)
                    warnings.extend(w)
                    return ads

                done: Submitted | None = None
                self.in_flight += 1  # idle as far as DAGMAN_MAX_JOBS_IDLE goes, until its procs are known
                try:
                    done = await self._submit_batched(build)
                except UserError as exc:
                    error = str(exc)
                except Exception as exc:  # a submit description error: no point in retrying
                    error = f"{type(exc).__name__}: {exc}"
                    if not isinstance(exc, (OSError, ConnectionError)):
                        self.out.line(f"ERROR: submit of node {node.name} failed: {error}")
                        break
                finally:
                    self.in_flight -= 1
                if done is not None:
                    for w in warnings:
                        self.out.line(f"Warning: node {node.name}: {w}")
                    self.journal.write("SUBMITTED", node.name, run.retry, done.cluster_id, done.procs)
                    self.cluster_node[done.cluster_id] = node.name
                    run.cluster, run.procs_submitted = done.cluster_id, done.procs
                    t = self.track[node.name]
                    for p in range(done.procs):
                        t.procs.setdefault(p, 1)
                    self.jobs_submitted += done.procs
                    self.out.line(f"\tassigned HTCondor ID ({done.cluster_id}.0.0)")
                    self._jobstate("SUBMIT", node.name, f"{done.cluster_id}.0")
                    return
                if self.client is not None:
                    self.client.close()
                    self.client = None
                self.out.line(f"ERROR: submit attempt {attempt + 1} of node {node.name} failed: {error}")
                if attempt + 1 < attempts:
                    await asyncio.sleep(delay)
                    delay *= 2
        finally:
            if node_vars_backup is not None:
                node.vars = node_vars_backup
        self.out.line(f"Job submit failed after {attempts} tries.")
        self._submit_failed(node)

    async def _submit_batched(self, build: Callable[[int], tuple[dict[str, str], list[dict[str, str]]]]) -> Submitted:
        """Submit one node's cluster; the nodes that reach here while a submit is in flight go
        together in the next call, committed in one transaction (SUBMIT_CLUSTERS)."""
        fut: asyncio.Future[Submitted] = asyncio.get_running_loop().create_future()
        self.submit_queue.append((build, fut))
        if self.submit_drainer is None or self.submit_drainer.done():
            self.submit_drainer = asyncio.ensure_future(self._drain_submits())
        return await fut

    async def _drain_submits(self) -> None:
        while self.submit_queue:
            batch = self.submit_queue[:SUBMIT_BATCH]
            del self.submit_queue[:SUBMIT_BATCH]
            builds = [b for b, _ in batch]
            results: list[Submitted | Exception]
            try:
                if len(builds) == 1:
                    results = [await self._call(functools.partial(self._submit_one, builds[0]))]
                else:
                    results = await self._call(functools.partial(self._submit_many, builds))
                    self.batched_submits += 1
            except Exception as exc:  # the connection, or the one cluster's description: each node decides
                results = [exc] * len(batch)
            for (_, fut), result in zip(batch, results, strict=True):
                if fut.done():
                    continue
                if isinstance(result, Exception):
                    fut.set_exception(result)
                else:
                    fut.set_result(result)

    def _submit_one(self, build: Callable[[int], tuple[dict[str, str], list[dict[str, str]]]]) -> Submitted:
        return self._client().submit(build)

    def _submit_many(self, builds: list[Callable[[int], tuple[dict[str, str], list[dict[str, str]]]]],
                     ) -> list[Submitted | Exception]:
        return self._client().submit_clusters(builds)

    def _submit_failed(self, node: Node) -> None:
        run = self.run.nodes[node.name]
        self._jobstate("SUBMIT_FAILURE", node.name, None)
        run.status_details = "submit failed"
        t = self.track[node.name]
        t.job_ok, t.first_failure = False, SUBMIT_FAILED
        self.journal.write("SUBMITTED", node.name, run.retry, -1, 0)
        self._job_finished(node)

    # -- events -----------------------------------------------------------------------------

    def _read_log(self) -> None:
        for ev in self.follower.poll():
            name = self.cluster_node.get(ev.cluster)
            if name is None:
                continue
            run = self.run.nodes[name]
            if self.only_node is not None and name != self.only_node:
                continue  # after an abort only the FINAL node counts; the rest are being removed
            if run.cluster != ev.cluster or run.status is not NodeStatus.SUBMITTED:
                continue  # an earlier try's job, or a node already decided
            self._event(self.dag.nodes[name], ev)
            self.changed = True

    def _event(self, node: Node, ev: eventlog.Event) -> None:
        t = self.track[node.name]
        run = self.run.nodes[node.name]
        job = f"{ev.cluster}.{ev.proc}.0"
        jid = f"{ev.cluster}.{ev.proc}"  # the jobstate log's condorID
        label = ULOG_NAMES.get(ev.type, f"ULOG_{ev.type:03d}")
        self.out.line(f"Event: {label} for HTCondor Node {node.name} ({job}) "
                      f"{{{time.strftime('%m/%d/%y %H:%M:%S', time.localtime(ev.timestamp))}}}")
        before = t.procs.get(ev.proc)
        if before in (3, 4):
            return
        attrs = ev.attrs()
        if ev.type == eventlog.SUBMIT:
            t.procs[ev.proc] = 1
            self._jobstate("SUBMIT", node.name, jid) if ev.proc > 0 else None
        elif ev.type == eventlog.EXECUTE:
            t.procs[ev.proc] = 2
            self._jobstate("EXECUTE", node.name, jid)
        elif ev.type in (eventlog.EVICTED, eventlog.SHADOW_EXCEPTION, eventlog.RECONNECT_FAILED):
            t.procs[ev.proc] = 1
        elif ev.type == eventlog.HELD:
            t.procs[ev.proc] = 5
            run.hold_reason = str(attrs.get("HoldReason", ""))
            self.out.line(f"Node {node.name} job proc ({job}) held: {run.hold_reason}")
            self._jobstate("JOB_HELD", node.name, jid)
            if node.hold is not None:
                self._spawn(self._script(node, node.hold))
        elif ev.type == eventlog.RELEASED:
            t.procs[ev.proc] = 1
            self._jobstate("JOB_RELEASED", node.name, jid)
        elif ev.type == eventlog.TERMINATED:
            t.procs[ev.proc] = 4
            if "TerminatedBySignal" in attrs:
                code = -int(str(attrs["TerminatedBySignal"]))
                self.out.line(f"Node {node.name} job proc ({job}) failed with signal {-code}.")
            else:
                code = int(str(attrs.get("ReturnValue", 0)))
                t.exit_codes[ev.proc] = code
                if code == 0:
                    self.out.line(f"Node {node.name} job proc ({job}) completed successfully.")
                else:
                    self.out.line(f"Node {node.name} job proc ({job}) failed with status {code}.")
            self._jobstate("JOB_TERMINATED", node.name, jid)
            self._jobstate("JOB_SUCCESS" if code == 0 else "JOB_FAILURE", node.name, str(code))
            if code != 0:
                self._proc_failed(node, code)
        elif ev.type == eventlog.ABORTED:
            t.procs[ev.proc] = 3
            t.aborted += 1
            self.out.line(f"Node {node.name} job proc ({job}) was removed")
            self._jobstate("JOB_ABORTED", node.name, jid)
            self._proc_failed(node, JOB_ABORTED)
        self._update_counts(node)
        if t.procs and all(s in (3, 4) for s in t.procs.values()) and len(t.procs) >= run.procs_submitted:
            self._job_finished(node)

    def _update_counts(self, node: Node) -> None:
        run, t = self.run.nodes[node.name], self.track[node.name]
        states = list(t.procs.values())
        run.procs_idle, run.procs_running = states.count(1), states.count(2)
        run.procs_held, run.procs_done = states.count(5), states.count(3) + states.count(4)
        run.procs_failed = t.aborted + sum(1 for c in t.exit_codes.values() if c != 0)
        run.status_details = "held" if run.procs_held else ("not_idle" if run.procs_running else "idle")

    def _proc_failed(self, node: Node, code: int) -> None:
        t = self.track[node.name]
        if t.first_failure is None:
            t.first_failure = code
        t.job_ok = False
        run = self.run.nodes[node.name]
        if not t.removing and run.cluster is not None and any(s in (1, 2, 5) for s in t.procs.values()):
            t.removing = True
            self.out.line(f"Node {node.name}: a job proc failed; removing the node's remaining procs")
            self._spawn(self._remove_ids([str(run.cluster)], f"DAG node {node.name} failed"))

    async def _remove_ids(self, ids: list[str], reason: str, constraint: str | None = None) -> None:
        try:
            await self._call(lambda: self._client().act("remove", ids, constraint, reason))
        except UserError as exc:
            self.out.line(f"ERROR: could not remove jobs: {exc}")

    def _job_return(self, node: Node) -> int:
        t = self.track[node.name]
        return 0 if t.job_ok else (t.first_failure if t.first_failure is not None else 1)

    def _job_text(self, node: Node) -> str | None:
        cluster = self.run.nodes[node.name].cluster
        return f"{cluster}.0" if cluster is not None and cluster >= 0 else None

    def _job_finished(self, node: Node) -> None:
        """Every proc of the node's cluster has left the queue (or the node had no job)."""
        run, t = self.run.nodes[node.name], self.track[node.name]
        run.return_value = self._job_return(node)
        run.finished_at = time.time()
        if node.post is not None:
            self._queue_post(node)
            return
        self._node_done(node, t.job_ok, run.return_value)

    def _node_done(self, node: Node, ok: bool, rc: int) -> None:
        """The node's try is over: success, a retry, or failure; ABORT-DAG-ON is checked first."""
        run = self.run.nodes[node.name]
        if node.abort_status is not None and rc == node.abort_status and node.kind is not NodeKind.FINAL:
            code = node.abort_return if node.abort_return is not None else rc
            self.out.line(f"Aborting DAG because we got the ABORT exit value from a node: node {node.name} "
                          f"returned {rc}; DAG exit value {code}")
            self.journal.write("DONE" if ok else "FAILED", node.name)
            run.status = NodeStatus.DONE if ok else NodeStatus.ERROR
            self.abort = (code, f"node {node.name} returned {rc}")
            return
        if ok:
            self.journal.write("DONE", node.name)
            run.status, run.status_details = NodeStatus.DONE, ""
            self.out.line(f"Node {node.name} succeeded.")
            for child in node.children:
                self.unfinished_parents[child.name] -= 1
                if self.unfinished_parents[child.name] == 0 and \
                        self.run.nodes[child.name].status is NodeStatus.NOT_READY:
                    self._make_ready(child)
            self._poke()
            return
        unless = node.retry_unless_exit
        if run.retry < node.retry and not (unless is not None and rc == unless):
            run.retry += 1
            self.journal.write("RETRY", node.name, run.retry)
            self.out.line(f"Retrying node {node.name} (retry #{run.retry} of {node.retry})...")
            self.jobstate_seq.pop(node.name, None)
            run.cluster, run.procs_submitted, run.pre_return = None, 0, None
            run.status = NodeStatus.NOT_READY
            self._make_ready(node)
            self._poke()
            return
        if unless is not None and rc == unless:
            self.out.line(f"Node {node.name} exited with the UNLESS-EXIT value {rc}: not retried")
        self.journal.write("FAILED", node.name)
        run.status = NodeStatus.ERROR
        if not run.status_details:
            run.status_details = f"Job failed with exit value {rc}" if rc >= 0 else f"Job failed ({rc})"
        self.out.line(f"Node {node.name} failed (return value {rc}).")
        self._mark_futile(node)
        self._poke()

    # -- files and the DAG job's ad ---------------------------------------------------------

    def _jobstate(self, event: str, node: str | None, job_id: str | None, extra: str = "") -> None:
        if self.jobstate_fd is None:
            return
        seq = 0
        if node is not None and self.jobstate_seen is not None and (node, event, job_id or "-") in self.jobstate_seen:
            return
        if node is not None:
            seq = self.jobstate_seq.get(node, 0)
            if not seq:
                seq = self.jobstate_seq[node] = self.jobstate_next_seq
                self.jobstate_next_seq += 1
        if node is not None:
            extra = self._job_tag(node)
        os.write(self.jobstate_fd, (jobstate_line(event, node, job_id, now=time.time(),
                                                  sequence=seq, extra=extra) + "\n").encode())

    def _job_tag(self, name: str) -> str:
        tag = self.job_tags.get(name)
        if tag is None:
            node = self.dag.nodes[name]
            tag = "-" if node.noop or node.inline is not None or node.dag_file is not None else \
                jobstate_tag(os.path.join(self.jobs.node_dir(node), node.submit))
            self.job_tags[name] = tag
        return tag

    def _periodic(self, force: bool = False) -> None:
        now = time.time()
        if not force and now < self.next_periodic:
            return
        self.next_periodic = now + PERIODIC_INTERVAL
        if not self.ending:
            self.run.dag_status = self._dag_status()
        table = status_table(self.run, self.dag)
        if table != self.last_table or force:
            self.last_table = table
            self.out.line(table.rstrip("\n"))
        sf = self.dag.node_status_file
        if sf is not None and (force or now >= self.next_status_file):
            self.next_status_file = now + max(1, sf.min_update_time)
            files.write_atomic(os.path.join(self.base_dir, sf.file),  # the last write: NextUpdate = 0
                               node_status_text(self.dag, self.run, now, 0 if self.ending else self.next_status_file))
        if self.dagman_id[0] and (force or now >= self.next_ad_update):
            self.next_ad_update = now + AD_UPDATE_INTERVAL
            self._spawn(self._update_ad())

    def ad_attrs(self) -> dict[str, str]:
        c = self.run.count
        procs = [s for t in self.track.values() for s in t.procs.values()]
        return {
            "DAG_NodesTotal": str(len(self.dag.nodes)), "DAG_NodesDone": str(c(NodeStatus.DONE)),
            "DAG_NodesFailed": str(c(NodeStatus.ERROR)), "DAG_NodesPre": str(c(NodeStatus.PRERUN)),
            "DAG_NodesPost": str(c(NodeStatus.POSTRUN)), "DAG_NodesQueued": str(c(NodeStatus.SUBMITTED)),
            "DAG_NodesReady": str(c(NodeStatus.READY)), "DAG_NodesUnready": str(c(NodeStatus.NOT_READY)),
            "DAG_NodesFutile": str(c(NodeStatus.FUTILE)),
            "DAG_Status": str(int(self._dag_status())), "DAG_InRecovery": "1" if self.in_recovery else "0",
            "DAG_JobsSubmitted": str(self.jobs_submitted), "DAG_JobsIdle": str(procs.count(1)),
            "DAG_JobsHeld": str(procs.count(5)), "DAG_JobsRunning": str(procs.count(2)),
            "DAG_JobsCompleted": str(procs.count(4)),
        }

    async def _update_ad(self) -> None:
        attrs = self.ad_attrs()
        job = f"{self.dagman_id[0]}.{self.dagman_id[1]}"
        try:
            await self._call(lambda: self._client().set_attributes([job], None, attrs))
        except UserError as exc:
            self.out.line(f"Warning: could not update the DAGMan job's ad: {exc}")

    # -- the end ----------------------------------------------------------------------------

    def _remove_constraint(self) -> str:
        if self.dagman_id[0]:
            return f"DAGManJobId == {self.dagman_id[0]}"
        return f'DAGManNodesLog == "{self.paths.nodes_log}"'

    async def _end(self) -> int:
        if self.shutdown:
            self.out.line("**** htcd dagman EXITING (schedd shutdown): recovery on restart")
            return 0
        if self.removed or self.abort:
            for task in list(self.tasks):
                task.cancel()
            for script in list(self.scripts):  # the scripts of nodes that will not finish now
                with contextlib.suppress(ProcessLookupError):
                    script.kill()
        services = [str(r.cluster) for n, r in self.run.nodes.items()
                    if self.dag.nodes[n].kind is NodeKind.SERVICE and r.cluster is not None and r.cluster >= 0
                    and r.status is NodeStatus.SUBMITTED]
        if services:
            self.out.line("Removing the SERVICE nodes' jobs...")
            await self._remove_ids(services, "the DAG has finished")
        if self.removed or self.abort:
            why = "DAG removed" if self.removed else f"DAG aborted: {self.abort[1] if self.abort else ''}"
            self.out.line("Removing any/all submitted HTCondor jobs...")
            await self._remove_ids([], why, self._remove_constraint())
            if self.dag.final is not None and not self.final_started:
                await self._run_final_alone(DagStatus.RM if self.removed else self._dag_status())
        status = self._dag_status()
        final_ok: bool | None = None
        if self.dag.final is not None and self.final_started:
            final_ok = self.run.nodes[self.dag.final.name].status is NodeStatus.DONE
        failed = [n for n, r in self.run.nodes.items() if r.status is NodeStatus.ERROR]
        if final_ok is True and not self.removed:
            code, status = 0, DagStatus.OK
        elif self.removed:
            code = 2
        elif self.abort:
            code = self.abort[0]
        elif failed or final_ok is False:
            code = 1
        else:
            code = 0
        self.run.dag_status = status
        self.ending = True
        self._periodic(force=True)
        if self.dagman_id[0]:
            await self._update_ad()
        self.out.line(f"{self.jobs_submitted} node job proc(s) submitted; {self.batched_submits} submit call(s) "
                      f"carried several nodes' clusters (SUBMIT_CLUSTERS); {self.jobs.shared_builds} node job(s) "
                      "copied from another node's build of the same submit file and VARS")
        if code != 0 or self.removed:
            self._write_rescue(failed)
        else:
            self.out.line("All jobs Completed!")
        self.out.line(f"DAG status: {int(status)} ({STATUS_NAMES[int(status)]})")
        self._jobstate("DAGMAN_FINISHED", None, None, extra=str(code))
        self.out.line(f"**** condor_scheduniv_exec.{self.run.dagman_job_id} (condor_DAGMAN) pid {os.getpid()} "
                      f"EXITING WITH STATUS {code}")
        return code

    async def _run_final_alone(self, status: DagStatus) -> None:
        """After an abort or a removal the FINAL node still runs, with DAG_STATUS 3 or 4."""
        final = self.dag.final
        assert final is not None
        saved, self.abort = self.abort, None
        saved_removed, self.removed = self.removed, False
        aborted_status = self._dag_status
        self._dag_status = lambda: status  # type: ignore[method-assign]
        self.only_node = final.name
        try:
            self._start_final()
            while not self.removed and not self.shutdown:
                self._read_log()
                self._schedule()
                if self.run.nodes[final.name].status in (NodeStatus.DONE, NodeStatus.ERROR) and not self.tasks:
                    break
                self.wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), POLL_INTERVAL)
        finally:
            self._dag_status = aborted_status  # type: ignore[method-assign]
            self.abort = saved
            self.removed = saved_removed or self.removed

    def _write_rescue(self, failed: list[str]) -> None:
        if not self.settings.write_partial_rescue and not failed:
            return
        from htcd.dagman.multi import rescue_base
        from htcd.dagman.rescue import rescue_name, rescue_text

        base = rescue_base(self.dag_files)

        done = [n for n, r in self.run.nodes.items()
                if r.status is NodeStatus.DONE and self.dag.nodes[n].kind not in (NodeKind.FINAL, NodeKind.SERVICE)]
        number = 1
        while os.path.exists(rescue_name(base, number)):
            number += 1
        if number > self.settings.max_rescue_num:
            self.out.line(f"ERROR: not writing a rescue DAG: DAGMAN_MAX_RESCUE_NUM ({self.settings.max_rescue_num}) "
                          "reached")
            return
        path = rescue_name(base, number)
        retries = {n: r.retry for n, r in self.run.nodes.items()}
        files.write_atomic(path, rescue_text(self.dag, os.path.basename(self.dag_file), done=done, failed=failed,
                                             retries_used=retries,
                                             reset_retries=self.settings.reset_retries_upon_rescue))
        self.out.line(f"Writing Rescue DAG file {path}")
