"""``htcd submit -interactive [FILE]``: a shell on an execute point, as condor_submit -interactive.

A placeholder job keeps a slot; once it runs, this tool attaches a shell to it as ``htcd
ssh_to_job`` does, and the job ends when the last shell into it exits.  Without a file the job is
the configuration's ``INTERACTIVE_SUBMIT_FILE``, else the built-in equivalent of HTCondor's
``interactive.sub``.  With one, its requirements, request_* and the rest apply, but, as in
HTCondor, its executable, arguments and transfer_executable are replaced by the placeholder
(``INTERACTIVE_SUBMIT_CMD_OVERRIDE``, ``INTERACTIVE_SUBMIT_ARGS_OVERRIDE``), its universe by
vanilla and its queue count by one job (each replacement is warned about).  What cannot become
one vanilla job -- item lists, several queue statements, a container, late materialization -- is
refused with the file and line.  The job has ``InteractiveJob = true``.

The placeholder sleeps 180 s (HTCondor's wait for the shell), then as long as a session is open;
when the last session into an interactive job ends the startd ends the job (htcd/starter/shell.py),
where HTCondor's starter ends the placeholder as a session starts and keeps the job until its sshd
exits: either way the job completes, killed by SIGTERM, once its shells are gone.  An interrupt
(SIGINT, SIGHUP, SIGTERM, SIGQUIT) removes the job, as condor_ssh_to_job -remove-on-interrupt,
which condor_submit -interactive runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from typing import Any

from htcd.errors import UserError

POLL = 2.0  # how often the schedd is asked whether the job runs (a user's wait, not a test's timing)
PLACEHOLDER_CMD = "/bin/sh"
#: INTERACTIVE_SUBMIT_ARGS_OVERRIDE's default, HTCondor's: wait 180 s for a shell, then as long as the first is
#: open (the startd ends the job after the last session, htcd/starter/shell.py).
PLACEHOLDER_ARGS = ("\"-c 'sleep 180 && while test -d ${_CONDOR_SCRATCH_DIR}/.condor_ssh_to_job_1; "
                    "do /bin/sleep 3; done'\"")
#: The description without a file and without INTERACTIVE_SUBMIT_FILE: the settings of HTCondor's
#: interactive.sub (TMOUT logs an idle shell out after two hours).
BUILT_IN = f"""\
universe = vanilla
executable = {PLACEHOLDER_CMD}
arguments = {PLACEHOLDER_ARGS}
environment = "TMOUT=7200"
transfer_executable = false
notification = never
priority = 1000
request_memory = 512m
queue
"""
REPLACED = ("executable", "arguments", "args", "transfer_executable")
CONTAINERS = ("docker", "container")
LATE = ("max_materialize", "max_idle")
RUNNING, HELD = 2, 5
ENDED = {3: "removed", 4: "completed", 6: "transferring its output"}
INTERRUPTS = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT)


class Interrupted(Exception):
    def __init__(self, sig: int) -> None:
        self.sig = sig
        super().__init__(sig)


def _where(desc: Any, line: int) -> tuple[str, int | None]:
    """(source, line) of a statement of ``desc`` (an included file's, -append's...)."""
    origin: tuple[str, int | None] = desc.origins.get(line, (desc.filename, line))
    return origin


def _refuse(message: str, where: tuple[str, int | None]) -> Exception:
    from htcd.submit import SubmitError

    return SubmitError(message, source=where[0], line=where[1])


def _text(where: tuple[str, int | None]) -> str:
    return where[0] if where[1] is None else f"{where[0]}:{where[1]}"


def _description(path: str | None, cfg: Any) -> tuple[str, str, str, bool]:
    """(text, name, submit directory, whether the placeholder replaces the job's program): the
    user's file (or standard input, ``-``), else INTERACTIVE_SUBMIT_FILE, else the built-in one."""
    from htcd.cli.submit_steps import read_description

    if path:
        text, name, submit_dir = read_description(path)
        return text, name, submit_dir, True
    knob = (cfg.get("INTERACTIVE_SUBMIT_FILE") or "").strip()
    if not knob:
        return BUILT_IN, "<interactive>", os.getcwd(), False
    try:
        with open(knob) as f:
            return f.read(), knob, os.getcwd(), False
    except OSError as exc:
        raise UserError(f"INTERACTIVE_SUBMIT_FILE = {knob}: cannot read it: {exc.strerror}") from None


def check(desc: Any, replace: bool) -> tuple[list[str], bool]:
    """Refuse what one vanilla placeholder job cannot honour; (warnings about what is replaced,
    whether the queue statement must become ``queue 1``)."""
    from htcd.submit.parser import QueueStatement, Setting

    queues = [s for s in desc.statements if isinstance(s, QueueStatement)]
    if len(queues) > 1:
        raise _refuse(f"-interactive submits exactly one job, and this is a second queue statement (the "
                      f"first is at {_text(_where(desc, queues[0].line))})", _where(desc, queues[1].line))
    queue = queues[0]
    if queue.source:
        raise _refuse(f"-interactive submits exactly one job: a queue statement with items ({queue.source} ...) "
                      "makes one per item; remove the items", _where(desc, queue.line))
    warnings: list[str] = []
    one = queue.count.strip() in ("", "1")
    if not one:
        warnings.append(f"{_text(_where(desc, queue.line))}: queue {queue.count.strip()}: -interactive submits "
                        "exactly one job; the count is ignored")
    for s in desc.statements:
        if not isinstance(s, Setting):
            continue
        where = _where(desc, s.line)
        if s.key in LATE and s.value.strip():
            raise _refuse(f"{s.name} = {s.value}: interactive jobs cannot be materialized late", where)
        if s.key in ("container_image", "docker_image") and s.value.strip():
            raise _refuse(f"{s.name} = {s.value}: an interactive job is a vanilla universe job and htcd's shell "
                          "runs on the execute point, not in a container; remove this line", where)
        if s.key == "universe" and s.value.strip().lower() in CONTAINERS:
            raise _refuse(f"universe = {s.value.strip()}: an interactive job is a vanilla universe job and htcd's "
                          "shell runs on the execute point, not in a container", where)
        if not replace:
            continue
        if s.key == "universe" and s.value.strip().lower() != "vanilla":
            warnings.append(f"{_text(where)}: universe = {s.value.strip()} is replaced by vanilla: an interactive "
                            "job is a vanilla universe job")
        elif s.key in REPLACED and s.value.strip():
            warnings.append(f"{_text(where)}: {s.name} = {s.value.strip()} is replaced by the placeholder that "
                            "keeps the slot for the shell (-interactive)")
    return warnings, not one


def _overrides(cfg: Any, replace: bool) -> list[str]:
    """The lines added before the queue statement, as condor_submit adds MY.InteractiveJob."""
    lines = ["MY.InteractiveJob = true"]
    if replace:
        lines = [f"executable = {cfg.get('INTERACTIVE_SUBMIT_CMD_OVERRIDE') or PLACEHOLDER_CMD}",
                 f"arguments = {cfg.get('INTERACTIVE_SUBMIT_ARGS_OVERRIDE') or PLACEHOLDER_ARGS}",
                 "transfer_executable = false", "universe = vanilla", *lines]
    return lines


def run(args: argparse.Namespace) -> int:
    import functools

    from htcd.cli import common
    from htcd.cli.submit_steps import prepare, send, split_words, write_ads

    defines, args.file = split_words(args)
    cfg = common.config("SUBMIT")
    text, name, submit_dir, replace = _description(args.file, cfg)
    path = os.path.abspath(name) if name not in ("<stdin>", "<interactive>") else None
    as_given = prepare(args, text, name, submit_dir, defines, path=path)
    warnings, requeue = check(as_given.desc, replace)
    if requeue:
        args.queue = None
    p = prepare(args, text, name, submit_dir, defines, append=_overrides(cfg, replace),
                queue="1" if requeue else None, path=path)
    p.desc.read_warnings[:0] = warnings
    p.make_jobs = functools.partial(_one_job, p.make_jobs)
    if args.dump or args.dry_run:
        return write_ads(args, p)
    address, cid, _ = send(args, p, late=False)
    job = f"{cid}.0"
    for sig in INTERRUPTS:
        signal.signal(sig, _interrupt)
    try:
        return _attach(address, cid)
    except Interrupted as stop:
        print(f"Interrupted by signal {stop.sig} ({signal.Signals(stop.sig).name}), removing job {job}...",
              file=sys.stderr, flush=True)
        _remove(address, job)
        return 1


def _one_job(make_jobs: Any, cid: int, **kw: Any) -> tuple[dict[str, str], list[dict[str, str]]]:
    """The job's ads, with HTCondor's description of an interactive job that names none."""
    cluster_ad, procs = make_jobs(cid, **kw)
    if len(procs) != 1:  # check() and the forced queue 1 make this one job
        raise UserError(f"-interactive built {len(procs)} jobs instead of one")
    if "JobDescription" not in cluster_ad and "JobDescription" not in procs[0]:
        cluster_ad["JobDescription"] = '"interactive job"'
    return cluster_ad, procs


def _interrupt(sig: int, _frame: Any) -> None:
    raise Interrupted(sig)


def _remove(address: Any, job: str) -> None:
    from htcd.client.schedd import ScheddClient

    try:
        with ScheddClient(address, timeout=30.0) as schedd:
            outcome = schedd.act("remove", [job], None, "htcd submit -interactive was interrupted").get(job, "")
    except UserError as exc:
        print(f"cannot remove job {job}: {exc}", file=sys.stderr)
        return
    if outcome not in ("removed", "removing"):
        print(f"job {job} not removed: {outcome or 'not found'}", file=sys.stderr)


def _job(address: Any, cid: int) -> dict[str, str] | None:
    from htcd.client.schedd import ScheddClient

    with ScheddClient(address, timeout=30.0) as client:
        ads = [ad for chunk in client.query(f"ClusterId == {cid} && ProcId == 0",
                                            ["JobStatus", "StartdIpAddr", "RemoteHost", "HoldReason"])
               for ad in chunk]
    if not ads:
        return None
    return {k: v[1:-1] if v.startswith('"') and v.endswith('"') else v for k, v in ads[0].items()}


def wait_to_run(address: Any, cid: int) -> Any:
    """Where job ``cid``.0 runs, once it does (asking the schedd every POLL seconds); refuse a job
    that is held or has ended, as condor_ssh_to_job -auto-retry stops at a held job."""
    from htcd.client.inside import Where

    said = False
    while True:
        ad = _job(address, cid)
        if ad is None:
            raise UserError(f"job {cid}.0 has left the queue: the interactive job ended before a shell was attached")
        status = int(ad.get("JobStatus") or 0)
        if status == RUNNING and ad.get("StartdIpAddr"):
            return Where(cid, 0, status, ad["StartdIpAddr"], ad.get("RemoteHost", ""))
        if status == HELD:
            raise UserError(f"job {cid}.0 is held: \"{ad.get('HoldReason', '')}\"; it stays in the queue "
                            f"(htcd rm {cid}.0 removes it)")
        if status in ENDED:
            raise UserError(f"job {cid}.0 is {ENDED[status]}: the interactive job ended before a shell was attached")
        if not said:
            print("Waiting for job to start...", file=sys.stderr, flush=True)
            said = True
        time.sleep(POLL)


def _attach(address: Any, cid: int) -> int:
    """Wait for the job to run and attach a shell to it; the shell's exit status."""
    from htcd.cli.ssh_to_job import attach
    from htcd.client.inside import NotStartedThere

    welcomed = not os.isatty(0)  # HTCondor's greeting, for a shell on a terminal
    while True:
        where = wait_to_run(address, cid)
        if not welcomed:
            print(f"Welcome to {where.host}!", flush=True)
            welcomed = True
        try:
            return attach(where, "")
        except NotStartedThere:  # the schedd's ad ran ahead of the starter: ask again
            time.sleep(1.0)
