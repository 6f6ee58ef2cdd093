"""The steps of ``htcd submit`` (htcd/cli/submit.py) and ``htcd submit -interactive``
(htcd/cli/submit_interactive.py): read the description, parse it, then write its ads (-dump,
-dry-run) or send them to the schedd (with -spool, and the input too)."""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


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
