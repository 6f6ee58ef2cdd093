"""``htcd submit FILE``: parse locally, reserve a cluster id, commit every proc in one transaction.

The submit file may ``include`` files and command output (relative to its directory) and
``use template : Name`` for the configuration's ``SUBMIT_TEMPLATE_<Name>``; its ``JOB_DEFAULT_*``
knobs fill in what the file leaves unset.
Flags follow condor_submit: ``name=value`` arguments are read as if they began the file,
``-append`` lines go before the queue statement, ``-queue``
replaces it, ``-dump`` and ``-dry-run`` build the ads without submitting.  ``-spool`` (and
``-remote NAME``, which implies it) commits the jobs held and uploads their input to the
schedd's spool, as condor_submit -spool; ``htcd transfer_data`` fetches their output.
``-interactive`` submits a placeholder job and attaches a shell to it (htcd/cli/submit_interactive.py).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("file", nargs="?", metavar="[name=value ...] [file]",
                   help="submit variables or commands, as if they began the file, and the submit description "
                        "(default: standard input)")
    p.add_argument("-terse", action="store_true", help="print only the job id range")
    p.add_argument("-verbose", action="store_true", help="print the ad of every job submitted")
    p.add_argument("-dump", metavar="FILE", help="write the job ads to FILE instead of submitting")
    p.add_argument("-dry-run", dest="dry_run", metavar="FILE",
                   help="show what would be submitted (ads to FILE, '-' for standard output); no schedd")
    p.add_argument("-batch-name", dest="batch_name", help="the JobBatchName of these jobs")
    p.add_argument("-name", help="the schedd to submit to (default: this host's)")
    p.add_argument("-remote", metavar="NAME", help="the schedd to submit to, with -spool")
    p.add_argument("-spool", action="store_true",
                   help="copy the input files to the schedd now (get the output with htcd transfer_data)")
    from htcd.cli.spooling import add_target_options

    add_target_options(p, name=False)
    p.add_argument("-append", "-a", dest="append", action="append", default=[], metavar="LINE",
                   help="a submit command added just before the queue statement (repeatable)")
    p.add_argument("-queue", dest="queue", metavar="ARGS",
                   help="the queue statement's arguments, replacing the file's queue statements")
    p.add_argument("-interactive", action="store_true",
                   help="a shell on an execute point: submit a placeholder job, wait for it to run and attach to it "
                        "(htcd ssh_to_job); the job ends when the shell exits")
    p.add_argument("-strict", action="store_true",
                   help="refuse a line that is no submit command and that nothing uses (default: a warning)")
    return run


def _plugin_universes(cfg: Any) -> set[str]:
    """The universes the installed plugins register (a job of another universe could never run);
    plugins PLUGINS_BLOCKED names are not counted."""
    from htcd.plugins import get_plugin_manager

    return set(get_plugin_manager(cfg).universe_names())


def _long_ads(cluster_ad: dict[str, str], procs: list[dict[str, str]]) -> str:
    """Old long format, one ad per proc and a blank line after each, as condor_submit -dump."""
    from htcd.classad import ClassAd

    return "".join(ClassAd.from_wire({**cluster_ad, **p}).to_old() + "\n\n" for p in procs)


def _write(path: str, text: str) -> None:
    from htcd.errors import UserError

    if path == "-":
        sys.stdout.write(text)
        return
    try:
        with open(path, "w") as out:
            out.write(text)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        print(f"WARNING: {warning}", file=sys.stderr)


@dataclass
class Prepared:
    """A parsed description and what building its jobs needs (one submit's worth)."""

    desc: Any  # htcd.submit.SubmitDescription
    cfg: Any  # htcd.config.Config of the SUBMIT subsystem
    filename: str  # the submit file as named, or "<stdin>"
    submit_dir: str
    owner: str
    make_jobs: Callable[..., tuple[dict[str, str], list[dict[str, str]]]]


def split_words(args: argparse.Namespace) -> tuple[list[str], str | None]:
    """condor_submit's words: ``name=value`` definitions and at most one submit file."""
    from htcd.errors import UserError

    words = ([args.file] if args.file else []) + list(getattr(args, "extra", []))
    defines = [a for a in words if "=" in a]
    files = [a for a in words if "=" not in a]
    if len(files) > 1:
        raise UserError(f"more than one submit file given: {' '.join(files)} (a submit variable is name=value, "
                        "with no space around '=')")
    return defines, files[0] if files else None


def read_description(path: str | None) -> tuple[str, str, str]:
    """(text, filename, submit directory) of the file ``path``, or of standard input."""
    from htcd.errors import UserError

    if path and path != "-":
        try:
            with open(path) as f:
                text = f.read()
        except OSError as exc:
            raise UserError(f"cannot read submit file {path}: {exc.strerror}") from None
        return text, path, os.path.dirname(os.path.abspath(path))
    return sys.stdin.read(), "<stdin>", os.getcwd()


def prepare(args: argparse.Namespace, text: str, filename: str, submit_dir: str, defines: list[str], *,
            append: Sequence[str] = (), queue: str | None = None, path: str | None = None) -> Prepared:
    """Parse the description with the command line's definitions, ``-append`` lines (then
    ``append``) and ``-queue`` (else ``queue``); ``path`` is the file's own path, if any."""
    import pwd

    from htcd.cli import common
    from htcd.submit import parse_submit
    from htcd.submit.templates import TemplateSet

    lines = list(args.append)
    if args.batch_name:
        lines.append(f"batch_name = {args.batch_name}")
    cfg = common.config("SUBMIT")
    desc = parse_submit(text, filename, append=[*lines, *append], defines=defines,
                        queue=args.queue if args.queue is not None else queue, submit_dir=submit_dir,
                        templates=TemplateSet.from_config(cfg), path=path, strict=args.strict)
    make_jobs = functools.partial(desc.make_jobs, config_get=cfg.get, submit_file=args.file or "",
                                  plugin_universes=_plugin_universes(cfg))
    return Prepared(desc, cfg, filename, submit_dir, pwd.getpwuid(os.geteuid()).pw_name, make_jobs)


def write_ads(args: argparse.Namespace, p: Prepared) -> int:
    """-dump / -dry-run: the ads, built as for cluster 1, written instead of submitted."""
    cluster_ad, procs = p.make_jobs(1, submit_dir=p.submit_dir, owner=p.owner, qdate=int(time.time()))
    _warn(p.desc.warnings)
    _write(args.dump or args.dry_run, _long_ads(cluster_ad, procs))
    if args.dry_run and args.dry_run != "-" and not args.terse:
        print("Dry-Run job(s)" + "." * min(len(procs), 50))
        print(f"{len(procs)} job(s) dry-run to cluster 1.")
    return 0


def schedd_of(args: argparse.Namespace, cfg: Any) -> Any:
    """The address of the schedd to submit to: -addr, -pool, -name or -remote, else this host's."""
    from htcd.cli import spooling
    from htcd.client.schedd import address

    if args.remote:
        args.name = args.remote
    return spooling.schedd_address(args, "SUBMIT") if args.addr or args.pool or args.name else \
        address(cfg, None)[0]


def send(args: argparse.Namespace, p: Prepared, *, late: bool = True) -> tuple[Any, int, int]:
    """Submit to the schedd (with -spool, upload the input too) and say so as condor_submit does;
    (the schedd's address, cluster id, number of procs).  ``late``: a description that asks for
    late materialization goes as a job factory."""
    from htcd.client import spool as spooler
    from htcd.client.schedd import ScheddClient

    spool = bool(args.spool or args.remote)
    addr = schedd_of(args, p.cfg)
    built: list[tuple[dict[str, str], list[dict[str, str]]]] = []

    def build(cid: int) -> tuple[dict[str, str], list[dict[str, str]]]:
        cluster_ad, procs = p.make_jobs(cid, submit_dir=p.submit_dir, owner=p.owner, qdate=int(time.time()))
        if spool:
            spooler.check_inputs(cluster_ad, procs, p.filename)
            spooler.mark_spooled(cluster_ad, procs)
        built.append((cluster_ad, procs))
        return built[-1]

    from htcd.submit.digest import make_factory

    # late materialization (max_idle / max_materialize): the schedd gets a submit digest, not every proc
    factory = None if spool or not late else functools.partial(
        make_factory, p.desc, submit_dir=p.submit_dir, owner=p.owner, qdate=int(time.time()), config_get=p.cfg.get,
        submit_file=args.file or "", plugin_universes=_plugin_universes(p.cfg),
        by_default=p.cfg.get_bool("SUBMIT_FACTORY_JOBS_BY_DEFAULT", False))
    with ScheddClient(addr) as schedd:
        done = schedd.submit(build, factory)
        if spool:
            spooler.upload(schedd.conn, done.cluster_id, *built[-1])
    _warn([*p.desc.warnings, *done.warnings])
    (cluster_ad, procs), cid, n = built[-1] if built else ({}, []), done.cluster_id, done.procs
    if args.terse:
        print(f"{cid}.0 - {cid}.{n - 1}")
    else:
        print("Submitting job(s)" + "." * min(n, 50))
        print(f"{n} job(s) submitted to cluster {cid}.")
    if args.verbose and not built:
        print(f"-verbose: the schedd builds the procs of late-materialization cluster {cid}; see htcd q -l {cid}",
              file=sys.stderr)
    if args.verbose:
        sys.stdout.write(_long_ads(cluster_ad, procs))
    sys.stdout.flush()
    return addr, cid, n


def run(args: argparse.Namespace) -> int:
    if args.interactive:
        from htcd.cli import submit_interactive

        return submit_interactive.run(args)
    defines, args.file = split_words(args)
    text, filename, submit_dir = read_description(args.file)
    p = prepare(args, text, filename, submit_dir, defines,
                path=os.path.abspath(args.file) if filename != "<stdin>" else None)
    if args.dump or args.dry_run:
        return write_ads(args, p)
    send(args, p)
    return 0
