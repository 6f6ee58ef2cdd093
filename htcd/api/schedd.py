"""``Schedd``: submit, query, act on and edit jobs of one schedd, as htcondor2's ``Schedd`` does,
through :mod:`htcd.client` (the same requests ``htcd submit``, ``htcd q``, ``htcd rm`` send).

Each call opens its own connection, as htcondor2 does: a ``Schedd`` object is only an address."""

from __future__ import annotations

import os
import pwd
import re
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from htcd.classad import ClassAdSyntaxError, parse_expr, unparse
from htcd.client import schedd as schedd_client
from htcd.config import Config
from htcd.errors import UserError
from htcd.wire.address import Address
from htcd.wire.authn import ClientSecurity
from htcd.wire.errors import RemoteError, WireError

from . import history
from .classad import ClassAd, ExprTree, constraint_text, from_wire
from .config import config
from .enums import JobAction, QueryOpt
from .errors import HTCondorException, reported
from .submit import Submit

_DEFAULT_ITEMDATA: Any = object()  # htcondor2's marker for "no itemdata given"
JobSpec = list[str] | str | ExprTree | int
_JOB_ID = re.compile(r"\d+\.\d+")
_CLUSTER = re.compile(r"\d+")

# What htcd's schedd says of each job it acted on -> htcondor2's result counter.
_OUTCOME = (("denied", "TotalPermissionDenied"), ("already", "TotalAlreadyDone"),
            ("not ", "TotalBadStatus"), ("unmaterialized", None))


class SubmitResult:
    """What a submit made: the cluster, its first proc, how many procs, the cluster ad."""

    def __init__(self, clusterID: int, procID: int, num_procs: int, clusterAd: ClassAd,
                 spooled_proc_ads: list[dict[str, str]] | None) -> None:
        self._cluster = clusterID
        self._first_proc = procID
        self._num_procs = num_procs
        self._clusterad = clusterAd
        self._spooled_proc_ads = spooled_proc_ads

    def cluster(self) -> int:
        return self._cluster

    def first_proc(self) -> int:
        return self._first_proc

    def num_procs(self) -> int:
        return self._num_procs

    def clusterad(self) -> ClassAd:
        return self._clusterad

    def __str__(self) -> str:
        return f"Submitted {self._num_procs} job(s) into cluster {self._cluster}."

    def __repr__(self) -> str:
        return f"SubmitResult(cluster={self._cluster}, first_proc={self._first_proc}, num_procs={self._num_procs})"


def _security(cfg: Config) -> ClientSecurity:
    return ClientSecurity.from_config(cfg, "CLIENT")


def job_selection(job_spec: JobSpec) -> tuple[list[str], str | None]:
    """(job ids, constraint) for a job_spec as htcondor2 takes it: a list of ``C`` / ``C.P``
    strings, one such string, a cluster number, or a constraint (text or ExprTree)."""
    if isinstance(job_spec, bool):
        raise TypeError("job_spec must be a list of job ids, a job id, a cluster id or a constraint")
    if isinstance(job_spec, list):
        if not all(isinstance(i, str) for i in job_spec):
            raise TypeError("All elements of the job_spec list must be strings.")
        bad = [i for i in job_spec if not (_JOB_ID.fullmatch(i) or _CLUSTER.fullmatch(i))]
        if bad:
            raise ValueError("All elements of the job_spec list must be strings of the form clusterID[.procID]")
        return list(job_spec), None
    if isinstance(job_spec, int):
        return [str(job_spec)], None
    if isinstance(job_spec, ExprTree):
        return [], str(job_spec)
    if isinstance(job_spec, str):
        if _JOB_ID.fullmatch(job_spec) or _CLUSTER.fullmatch(job_spec):
            return [job_spec], None
        try:
            parse_expr(job_spec)
        except ClassAdSyntaxError:
            raise ValueError("The job_spec string must be a clusterID[.procID] or the string form of an "
                             "ExprTree.") from None
        return [], job_spec
    raise TypeError("job_spec must be a list of job ids, a job id, a cluster id or a constraint")


class Schedd:
    """A schedd: this host's (the default), or the one a location ad from
    :meth:`Collector.locate` names."""

    def __init__(self, location: ClassAd | None = None) -> None:
        location_ad = location
        cfg = config()
        if location_ad is None:
            with reported():
                self._addr, self._name = schedd_client.address(cfg, None)
        else:
            addr = location_ad.get("MyAddress")
            if not isinstance(addr, str):
                raise HTCondorException("the location ad has no MyAddress string")
            try:
                self._addr = Address.parse(addr)
            except ValueError as exc:
                raise HTCondorException(f"bad MyAddress {addr!r}: {exc}") from None
            self._name = str(location_ad.get("Name", ""))

    def __repr__(self) -> str:
        return f"<Schedd {self._name or self._addr}>"

    def _client(self, timeout: float = schedd_client.SUBMIT_TIMEOUT) -> schedd_client.ScheddClient:
        with reported():
            return schedd_client.ScheddClient(self._addr, timeout=timeout, security=_security(config()))

    # -- submit
    def submit(self, description: Submit, count: int = 0, spool: bool = False,
               itemdata: Iterator[str] | Iterator[dict[str, str]] | None = _DEFAULT_ITEMDATA,
               queue: str | None = None) -> SubmitResult:
        """Submit the jobs ``description`` makes: its own queue statement, or ``count`` jobs per
        item of ``itemdata`` (strings or dicts of variable -> value), or the ``queue`` statement
        given.  ``spool``: the input files go with the jobs (:meth:`spool` sends them)."""
        if not isinstance(description, Submit):
            raise TypeError("description must be an htcd.api.Submit object")
        given_items = itemdata is not _DEFAULT_ITEMDATA and itemdata is not None
        if queue is not None and (given_items or count != 0):
            raise ValueError("queue and count/itemdata are mutually exclusive")
        items: Iterable[Any] | None = itemdata if given_items else None
        queue_line = description.queue_line(count, items, queue)
        desc = description._description(queue_line)
        cfg = config()
        submit_dir = os.getcwd()
        owner = pwd.getpwuid(os.geteuid()).pw_name
        built: list[tuple[dict[str, str], list[dict[str, str]]]] = []

        if spool:
            from htcd.client import spool as spooler  # file transfer code: loaded by spooling scripts only

        def build(cid: int) -> tuple[dict[str, str], list[dict[str, str]]]:
            cluster_ad, procs = desc.make_jobs(cid, submit_dir=submit_dir, owner=owner, qdate=int(time.time()),
                                               config_get=cfg.get)
            if spool:
                spooler.check_inputs(cluster_ad, procs, "<htcd.api.Submit>")
                spooler.mark_spooled(cluster_ad, procs)
            built.append((cluster_ad, procs))
            return cluster_ad, procs

        try:
            with self._client() as client:
                done = client.submit(build)
        except UserError as exc:
            raise HTCondorException(str(exc)) from None
        for warning in [*desc.warnings, *done.warnings]:
            warnings.warn(warning, stacklevel=2)  # what htcd submit prints as WARNING: lines
        cluster_ad, procs = built[-1]
        result_ad = from_wire(cluster_ad)
        first = int(procs[0]["ProcId"]) if procs else 0
        return SubmitResult(done.cluster_id, first, done.procs, result_ad,
                            [{**cluster_ad, **p} for p in procs] if spool else None)

    def spool(self, result: SubmitResult) -> None:
        """Send the input files of jobs submitted with ``spool=True``; they start once they have them."""
        from htcd.client import spool as spooler

        ads = result._spooled_proc_ads
        if ads is None:
            raise HTCondorException("these jobs were not submitted with spool=True")
        cluster_ad = result.clusterad().to_wire()
        procs = [{k: v for k, v in ad.items() if k not in cluster_ad or k == "ProcId"} for ad in ads]
        with self._client() as client, reported():
            spooler.upload(client.conn, result.cluster(), cluster_ad, procs)

    def retrieve(self, job_spec: JobSpec) -> None:
        """Fetch the output of completed spooled jobs into the places their descriptions named."""
        from htcd.client import spool as spooler

        ids, constraint = job_selection(job_spec)
        with self._client() as client, reported():
            done, skipped, _, _ = spooler.fetch(client.conn, ids, constraint)
        if not done:
            why = "; ".join(f"{j}: {w}" for j, w in skipped.items())
            raise HTCondorException("no spooled output was fetched" + (f" ({why})" if why else
                                    ": no completed spooled job matched"))

    # -- query
    def query(self, constraint: str | ExprTree = "True", projection: list[str] | None = None,
              callback: Callable[[ClassAd], Any] | None = None, limit: int = -1,
              opts: QueryOpt = QueryOpt.Default) -> list[ClassAd]:
        """The job ads matching ``constraint`` (only the ``projection`` attributes, when given),
        in (cluster, proc) order, at most ``limit``; ``callback`` replaces each ad by what it
        returns (None drops it)."""
        import gc

        collecting = gc.isenabled()
        gc.disable()  # 100,000 new ads, none of them garbage: no collection passes over them meanwhile
        try:
            return list(self.xquery(constraint, projection, callback, limit, opts))
        finally:
            if collecting:
                gc.enable()

    def xquery(self, constraint: str | ExprTree = "True", projection: list[str] | None = None,
               callback: Callable[[ClassAd], Any] | None = None, limit: int = -1,
               opts: QueryOpt = QueryOpt.Default) -> Iterator[Any]:
        """:meth:`query` as an iterator: ads arrive as the schedd streams its chunks."""
        if int(opts) not in (QueryOpt.Default, QueryOpt.DefaultMyJobsOnly):
            raise HTCondorException(f"htcd's schedd does not answer queries with {QueryOpt(opts)!r}: "
                                    "only QueryOpt.Default")
        text = constraint_text(constraint)
        if int(opts) & QueryOpt.DefaultMyJobsOnly and text is None:
            text = f'Owner == "{pwd.getpwuid(os.geteuid()).pw_name}"'
        wanted = list(projection or [])
        n = 0
        client = self._client(timeout=120)
        try:
            for chunk in client.query(text, wanted or None, limit if limit > 0 else 0):
                for wire in chunk:
                    ad = from_wire(wire)
                    out = ad if callback is None else callback(ad)
                    if out is None:
                        continue
                    yield out
                    n += 1
                    if 0 < limit <= n:
                        return
        except UserError as exc:
            raise HTCondorException(str(exc)) from None
        finally:
            client.close()

    # -- act and edit
    def act(self, action: JobAction, job_spec: JobSpec, reason: str | None = None) -> ClassAd:
        """Remove, hold, release or vacate jobs; a ClassAd counting what happened
        (TotalSuccess, TotalNotFound, TotalAlreadyDone, TotalBadStatus, TotalPermissionDenied...)."""
        if not isinstance(action, JobAction):
            raise TypeError("action must be a JobAction")
        ids, constraint = job_selection(job_spec)
        why = reason if reason is not None else "Python-initiated action"
        if action in (JobAction.Vacate, JobAction.VacateFast):
            with reported():
                try:
                    results = schedd_client.vacate_jobs(self._addr, ids, constraint, action == JobAction.VacateFast,
                                                        " ".join(ids) or str(constraint))
                except UserError as exc:
                    if "Couldn't find" not in str(exc):
                        raise
                    results = {}
        elif action in (JobAction.Remove, JobAction.Hold, JobAction.Release):
            results = self._act(action.name.lower(), ids, constraint, why)
        else:
            raise HTCondorException(f"htcd cannot {action.name} jobs: its schedd offers remove, hold, release, "
                                    "vacate and fast vacate (no forced removal, suspend or continue)")
        out = _act_result(results)
        missing = [i for i in ids if "." in i and i not in results]
        if missing:
            out["TotalNotFound"] = len(missing)
        return out

    def _act(self, action: str, ids: list[str], constraint: str | None, reason: str) -> dict[str, str]:
        with self._client(timeout=120) as client:
            try:
                reply = client.conn.call("ACT_ON_JOBS", action=action, ids=ids, constraint=constraint, reason=reason)
            except RemoteError as exc:
                if exc.code == "NO_MATCH":
                    return {}
                raise HTCondorException(f"the schedd refused to {action} jobs: {exc}") from None
            except WireError as exc:
                raise HTCondorException(f"cannot reach the schedd: {exc}") from None
        return dict(reply["results"])

    def edit(self, job_spec: JobSpec, attr: str, value: str | ExprTree | int | float | bool, flags: int = 0) -> int:
        """Set ``attr`` to ``value`` (ClassAd expression text, or an ExprTree or Python value) in
        the selected jobs; how many jobs were changed.  Every edit is one transaction, and
        always logged: ``flags`` (htcondor2's TransactionFlag) other than 0 are refused."""
        if int(flags) != 0:
            raise HTCondorException(f"htcd's schedd takes no transaction flags (got {int(flags)}): "
                                    "every edit is logged, as with TransactionFlag.Default")
        ids, constraint = job_selection(job_spec)
        if isinstance(value, str):
            text = value
        elif isinstance(value, ExprTree):
            text = str(value)
        else:
            text = unparse(value)
        try:
            parse_expr(text)
        except ClassAdSyntaxError as exc:
            raise HTCondorException(f"the value for {attr} is not a ClassAd expression: {exc}") from None
        with self._client(timeout=120) as client:
            try:
                reply = client.conn.call("SET_ATTRIBUTES", ids=ids, constraint=constraint, attrs={attr: text})
            except RemoteError as exc:
                if exc.code == "NO_MATCH":
                    return 0
                raise HTCondorException(f"the schedd refused to edit jobs: {exc}") from None
            except WireError as exc:
                raise HTCondorException(f"cannot reach the schedd: {exc}") from None
        return int(reply["jobs"])

    # -- history
    def history(self, constraint: str | ExprTree | None = None, projection: list[str] | None = None,
                match: int = -1, since: int | str | ExprTree | None = None) -> list[ClassAd]:
        """Jobs that left the queue, newest first, as the schedd reads them from its HISTORY
        file (the constraint is evaluated there); ``since``: stop before the cluster (int), job
        (``"C.P"``) or first ad matching this expression; ``match``: at most this many (-1: all)."""
        text, stop = history.constraint(constraint), history.since_expression(since)
        out: list[ClassAd] = []
        client = self._client(timeout=300)
        try:
            for chunk in client.history(text, list(projection or []) or None, max(match, 0), stop):
                out += (from_wire(wire) for wire in chunk)
        except UserError as exc:
            raise HTCondorException(str(exc)) from None
        finally:
            client.close()
        return out


def _act_result(results: Mapping[str, str]) -> ClassAd:
    """htcondor2's act() answer from htcd's per-job outcomes."""
    counts = dict.fromkeys(("TotalError", "TotalSuccess", "TotalNotFound", "TotalBadStatus", "TotalAlreadyDone",
                            "TotalPermissionDenied"), 0)
    jobs = 0
    for job, outcome in results.items():
        if job.endswith(".*"):
            continue
        jobs += 1
        key = next((name for word, name in _OUTCOME if outcome.startswith(word)), "TotalSuccess")
        if key is not None:
            counts[key] += 1
    out = ClassAd()
    for k, v in counts.items():
        out[k] = v
    out["TotalJobAds"] = jobs
    out["TotalChangedAds"] = counts["TotalSuccess"]
    return out
