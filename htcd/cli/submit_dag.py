"""``htcd submit_dag DAG...``: check the DAG, write ``<dag>.condor.sub`` and submit it as a
scheduler universe job that runs htcd's DAGMan (``htcd dagman ...``), as condor_submit_dag does.

The DAG is parsed and checked (cycles, unknown nodes, missing submit files, bad splices) before
anything is written or submitted: a bad DAG is refused with its file and line.  Flags are
condor_submit_dag's, in any case (``-MaxIdle`` or ``-maxidle``).  Files a previous run left
(``.condor.sub``, ``.lib.out``, ``.lib.err``, ``.dagman.log``) are not overwritten without
``-f``; ``-update_submit`` rewrites only the ``.condor.sub``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from htcd.errors import UserError

if TYPE_CHECKING:
    from htcd.dagman import Dag
    from htcd.dagman.condor_sub import SubmitDagOptions

# flags condor_submit_dag knows that htcd refuses, with the reason
REFUSED_FLAGS = {
    "-valgrind": "htcd's DAGMan is a Python program; there is no condor_dagman binary to run under valgrind",
    "-remote": "htcd submit_dag submits to this host's schedd (the DAGMan job reads the DAG's files where it "
               "runs); use -schedd-address-file for another schedd of this host",
    "-r": "htcd submit_dag submits to this host's schedd (the DAGMan job reads the DAG's files where it runs)",
    "-schedd-daemon-ad-file": "htcd's tools find a schedd through its address file: use -schedd-address-file",
    "-maxhold": "condor_submit_dag does not pass -MaxHold on to condor_dagman either; set "
                "DAGMAN_MAX_HOLD_SCRIPTS in the DAG's configuration instead",
}
# condor_submit_dag's mutually exclusive flags
EXCLUSIVE = {"-DoRecovery": ("-load_save",), "-DoRescueFrom": ("-load_save", "-RescueFile"),
             "-RescueFile": ("-load_save", "-DoRescueFrom"), "-load_save": ("-DoRecovery", "-DoRescueFrom", "-RescueFile")}
# every flag, lower case, as argparse knows it: the command line is matched without regard to case
_FLAGS: set[str] = set()


def normalize_argv(argv: list[str]) -> list[str]:
    """condor_submit_dag's flags are case-insensitive: ``-MaxIdle`` is ``-maxidle``."""
    out = []
    after_sub = False
    for a in argv:
        if after_sub and a.startswith("-") and a.lower() in _FLAGS:
            a = a.lower()
        if a == "submit_dag":
            after_sub = True
        out.append(a)
    return out


def _flag(p: argparse.ArgumentParser, *names: str, **kw: object) -> None:
    _FLAGS.update(n.lower() for n in names)
    p.add_argument(*names, **kw)  # type: ignore[arg-type]


def configure(name: str, p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    p.add_argument("dag_files", nargs="+", metavar="DAG_FILE", help="the DAG file(s); the first names the outputs")
    f = lambda *n, **kw: _flag(p, *n, **kw)  # noqa: E731
    f("-no_submit", action="store_true", help="write the .condor.sub file but do not submit it")
    f("-verbose", "-v", action="store_true", help="verbose messages (passed to DAGMan)")
    f("-force", "-f", action="store_true", help="overwrite the files of a previous run; rename old rescue DAGs")
    f("-dagman", metavar="PATH", help="the program the DAG job runs (default: this installation's htcd)")
    f("-notification", metavar="VALUE", help="e-mail notification of the DAG job (Never, Always, Complete, Error)")
    f("-debug", type=int, metavar="LEVEL", help="DAGMan's debug level (0-7)")
    f("-maxidle", type=int, metavar="N", help="at most N idle node jobs")
    f("-maxjobs", type=int, metavar="N", help="at most N nodes with jobs in the queue")
    f("-maxpre", type=int, metavar="N", help="at most N PRE scripts at once")
    f("-maxpost", type=int, metavar="N", help="at most N POST scripts at once")
    f("-maxhold", type=int, metavar="N", help=argparse.SUPPRESS)
    f("-suppress_notification", dest="suppress_notification", action="store_const", const=True, default=None,
      help="no e-mail for the node jobs")
    f("-dont_suppress_notification", dest="suppress_notification", action="store_const", const=False,
      help="node jobs keep their notification (default)")
    f("-submitmethod", type=int, metavar="VALUE", help="1: DAGMan submits node jobs to the schedd itself")
    f("-usedagdir", action="store_true", help="run each DAG in its file's directory")
    f("-outfile_dir", metavar="DIR", help="the directory of the .dagman.out file")
    f("-config", metavar="FILE", help="DAGMan's configuration file")
    f("-lockfile", metavar="FILE", help="DAGMan's lock file (default <dag>.lock)")
    f("-insert_sub_file", metavar="FILE", help="submit commands inserted into the .condor.sub file")
    f("-append", "-a", dest="append", action="append", default=[], metavar="COMMAND",
      help="a submit command added to the .condor.sub file (repeatable)")
    f("-batch-name", dest="batch_name", metavar="NAME", help="the JobBatchName of the DAG job and its nodes")
    f("-autorescue", type=int, choices=(0, 1), metavar="0|1", help="run the newest rescue DAG (default 1)")
    f("-dorescuefrom", type=int, default=0, metavar="N", help="run from rescue DAG number N")
    f("-rescuefile", metavar="FILE", help="run from this rescue file")
    f("-load_save", metavar="FILE", help="run from this save point file")
    f("-dorecovery", "-dorecov", dest="dorecovery", action="store_true",
      help="start in recovery mode (state from the nodes log)")
    f("-allowversionmismatch", action="store_true", help="allow a .condor.sub of another version")
    f("-no_recurse", dest="do_recurse", action="store_false", default=False,
      help="do not write the SUBDAGs' .condor.sub files now (default)")
    f("-do_recurse", dest="do_recurse", action="store_true", help="write the SUBDAGs' .condor.sub files now")
    f("-update_submit", action="store_true", help="rewrite an existing .condor.sub (keeping its -max* values)")
    f("-import_env", action="store_true", help="put this environment into the DAG job's environment")
    f("-include_env", action="append", default=[], metavar="VARS",
      help="comma-separated variables added to the DAG job's getenv")
    f("-insert_env", action="append", default=[], metavar="K=V;...", help="set in the DAG job's environment")
    f("-valgrind", action="store_true", help=argparse.SUPPRESS)
    f("-alwaysrunpost", dest="always_run_post", action="store_const", const=True, default=None,
      help="run POST scripts even when the PRE script fails")
    f("-dontalwaysrunpost", dest="always_run_post", action="store_const", const=False,
      help="no POST script after a failed PRE script")
    f("-priority", type=int, default=0, metavar="N", help="the minimum JobPrio of the node jobs")
    f("-remote", "-r", dest="remote", metavar="SCHEDD", help=argparse.SUPPRESS)
    f("-schedd-daemon-ad-file", dest="schedd_daemon_ad_file", metavar="FILE", help=argparse.SUPPRESS)
    f("-schedd-address-file", dest="schedd_address_file", metavar="FILE",
      help="submit to the schedd of this address file (DAGMan uses it too)")
    return run


def _refuse_flags(args: argparse.Namespace) -> None:
    given = {"-valgrind": args.valgrind, "-remote": args.remote, "-schedd-daemon-ad-file": args.schedd_daemon_ad_file,
             "-maxhold": args.maxhold is not None}
    for flag, on in given.items():
        if on:
            raise UserError(f"{flag}: htcd cannot honour this option: {REFUSED_FLAGS[flag]}")
    if args.submitmethod is not None and args.submitmethod != 1:
        raise UserError(f"-SubmitMethod {args.submitmethod}: htcd's DAGMan submits node jobs to the schedd itself "
                        "(method 1); it does not run a submit tool")
    given_opts = {"-DoRecovery": args.dorecovery, "-DoRescueFrom": bool(args.dorescuefrom),
                  "-RescueFile": bool(args.rescuefile), "-load_save": bool(args.load_save)}
    for flag, others in EXCLUSIVE.items():
        clash = [o for o in others if given_opts[o]]
        if given_opts[flag] and clash:
            raise UserError(f"{flag} can not be used with the following flag{'s' if len(clash) > 1 else ''}: "
                            f"{','.join(clash)}")
    if args.dorescuefrom < 0:
        raise UserError("-DoRescueFrom value must be non-negative; aborting.")
    if args.notification is not None and args.notification.lower() not in ("never", "always", "complete", "error"):
        raise UserError(f"-notification must be Never, Always, Complete or Error, not {args.notification!r}")
    if args.debug is not None and not 0 <= args.debug <= 7:
        raise UserError(f"-debug must be a level from 0 to 7, not {args.debug}")
    for flag in ("maxidle", "maxjobs", "maxpre", "maxpost"):
        value = getattr(args, flag)
        if value is not None and value < 0:
            raise UserError(f"-{flag} must be 0 or more, not {value}")


def options_from(args: argparse.Namespace, cfg_get: Callable[[str], str | None]) -> SubmitDagOptions:
    """The writer's options from the command line and the DAGMAN_* configuration."""
    from htcd.dagman.condor_sub import DEFAULT_ON_EXIT_REMOVE
    from htcd.dagman.condor_sub import SubmitDagOptions as Options

    def knob_bool(name: str, default: bool) -> bool:
        text = (cfg_get(name) or "").strip().lower()
        return default if not text else text in ("true", "1", "yes", "t", "y")

    insert = args.insert_sub_file or (cfg_get("DAGMAN_INSERT_SUB_FILE") or "").strip()
    if args.insert_sub_file and (cfg_get("DAGMAN_INSERT_SUB_FILE") or "").strip():
        print(f"Note: -insert_sub_file value ({args.insert_sub_file}) overriding DAGMAN_INSERT_SUB_FILE setting "
              f"({cfg_get('DAGMAN_INSERT_SUB_FILE')})")
    autorescue = args.autorescue if args.autorescue is not None else int(knob_bool("DAGMAN_AUTO_RESCUE", True))
    return Options(
        maxidle=args.maxidle, maxjobs=args.maxjobs, maxpre=args.maxpre, maxpost=args.maxpost, force=args.force,
        no_submit=args.no_submit, update_submit=args.update_submit, do_rescue_from=args.dorescuefrom,
        rescue_file=args.rescuefile or "", load_save=args.load_save or "", autorescue=autorescue,
        dorecovery=args.dorecovery, batch_name=(args.batch_name or "").strip().strip('"'), notification=args.notification or "",
        suppress_notification=args.suppress_notification, append=list(args.append), insert_sub_file=insert,
        usedagdir=args.usedagdir, outfile_dir=args.outfile_dir or "", config=args.config or "",
        priority=args.priority, debug=args.debug, verbose=args.verbose,
        allow_version_mismatch=args.allowversionmismatch, import_env=args.import_env,
        include_env=list(args.include_env), insert_env=list(args.insert_env), dagman=args.dagman or "",
        lockfile=args.lockfile or "", always_run_post=args.always_run_post, do_recurse=args.do_recurse,
        submit_method=args.submitmethod,
        schedd_address_file=args.schedd_address_file or (cfg_get("SCHEDD_ADDRESS_FILE") or ""),
        on_exit_remove=(cfg_get("DAGMAN_ON_EXIT_REMOVE") or "").strip() or DEFAULT_ON_EXIT_REMOVE,
        append_getenv=(cfg_get("DAGMAN_MANAGER_JOB_APPEND_GETENV") or "").strip(), cwd=os.getcwd())


_OLD_MAX = re.compile(r"^-(MaxIdle|MaxJobs|MaxPre|MaxPost)$", re.IGNORECASE)


def keep_old_limits(options: SubmitDagOptions, submit_file: str) -> None:
    """``-update_submit``: the -MaxIdle, -MaxJobs, -MaxPre and -MaxPost of the .condor.sub being
    replaced stay, unless given again."""
    try:
        with open(submit_file, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserError(f"Error reading submit file: {submit_file}: {exc.strerror}") from None
    for line in lines:
        key, eq, value = line.partition("=")
        if not eq or key.strip().lower() != "arguments":
            continue
        text = value.strip()
        if not (text.startswith('"') and text.endswith('"')):
            raise UserError(f"Missing quotes in arguments line: <{line.strip()}>")
        try:
            words = shlex.split(text[1:-1].replace('""', '"'))
        except ValueError as exc:
            raise UserError(f"Error parsing arguments: {exc}") from None
        for flag, val in itertools.pairwise(words):
            m = _OLD_MAX.match(flag)
            if m and val.isdigit():
                attr = m.group(1).lower()
                if getattr(options, attr) is None:
                    setattr(options, attr, int(val))


def check_outputs(primary: str, options: SubmitDagOptions, max_rescue: int,
                  rescues: str | None = None) -> list[str]:
    """What condor_submit_dag checks of a previous run's files (``-f`` deletes them first);
    the messages of the files in the way (empty: go ahead); informative lines are printed.
    ``rescues``: the name rescue DAGs are numbered after (``<primary>_multi`` for several DAGs)."""
    from htcd.dagman.condor_sub import DagFiles
    from htcd.dagman.rescue import last_rescue, rescue_name

    files = DagFiles.of(primary, options)
    rescues = rescues or primary
    if options.do_rescue_from > 0:
        name = rescue_name(rescues, options.do_rescue_from)
        if not os.path.exists(name):
            return [f"ERROR: -dorescuefrom {options.do_rescue_from} specified, but rescue DAG file {name} "
                    "does not exist!"]
    if options.force:
        for path in (files.submit, files.sched_log, files.lib_out, files.lib_err):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                print(f"ERROR: Failed to unlink file {path} ({exc.errno}): {exc.strerror}", file=sys.stderr)
        rename_rescues(rescues, max_rescue)
    auto_rescue = False
    if options.autorescue:
        found = last_rescue(rescues, max_rescue)
        if found is not None:
            print(f"Running rescue DAG {int(found.rsplit('rescue', 1)[1])}")
            auto_rescue = True
    errors = []
    if not auto_rescue and options.do_rescue_from < 1 and not options.rescue_file and not options.update_submit \
            and not options.load_save:
        for path in (files.submit, files.lib_out, files.lib_err, files.sched_log):
            if os.path.exists(path):
                errors.append(f'ERROR: "{path}" already exists.')
    old = primary + ".rescue"
    if not options.autorescue and options.do_rescue_from < 1 and os.path.exists(old):
        errors += [f'ERROR: "{old}" already exists.',
                   f'\tYou may want to resubmit your DAG using that file, instead of "{primary}"',
                   "\tLook at the HTCondor manual for details about DAG rescue files.",
                   f'\tPlease investigate and either remove "{old}",', "\tor use it as the input to htcd submit_dag."]
    if errors:
        errors += ["", "Some file(s) needed by htcd dagman already exist. Either:", "- Rename them",
                   '- Use the "-f" option to force them to be overwritten',
                   '\tor', '- Use the "-update_submit" option to update the submit file and continue.']
    return errors


def rename_rescues(primary: str, max_rescue: int) -> None:
    """``-f``: every rescue DAG of a previous run becomes ``<name>.old``, as condor_submit_dag does."""
    from htcd.dagman.rescue import rescue_name

    for n in range(1, max_rescue + 1):
        name = rescue_name(primary, n)
        if os.path.exists(name):
            os.replace(name, name + ".old")


def _recurse(dags: list[Dag], options: SubmitDagOptions, cwd: str) -> None:
    """``-do_recurse``: write the .condor.sub of every SUBDAG EXTERNAL node first (depth first)."""
    from htcd.dagman import NodeKind, parse_dag
    from htcd.dagman.condor_sub import nested_options, write_condor_sub

    for dag in dags:
        for node in dag.nodes.values():
            if node.kind != NodeKind.SUBDAG or not node.dag_file:
                continue
            where = os.path.join(cwd, node.directory or "")
            sub = nested_options(options, where)
            inner = parse_dag(node.dag_file, cwd=where)
            _recurse([inner], sub, where)
            path = write_condor_sub(node.dag_file, sub, [inner])
            print(f"Wrote {path} for SUBDAG EXTERNAL node {node.name}")


def run(args: argparse.Namespace) -> int:
    from htcd.cli import common
    from htcd.dagman import DagError
    from htcd.dagman.condor_sub import DagFiles, read_dags, write_condor_sub
    from htcd.dagman.multi import check_one_directory, combine_dags, rescue_base

    _refuse_flags(args)
    cfg = common.config("SUBMIT")
    options = options_from(args, cfg.get)
    dag_files = list(args.dag_files)
    primary = dag_files[0]  # names the outputs; several DAG files are combined by the DAGMan job
    files = DagFiles.of(primary, options)
    try:
        if options.usedagdir:
            check_one_directory(dag_files)
        dags = read_dags(dag_files, options)
        if len(dags) > 1:  # refuse what the DAGMan job would (two FINALs, CONFIGs, clashing names)
            combine_dags(list(dags), munge=cfg.get_bool("DAGMAN_MUNGE_NODE_NAMES", True))
    except DagError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        print("ERROR: the DAG is not submitted", file=sys.stderr)
        return 1
    for dag in dags:
        for warning in dag.warnings:
            print(warning, file=sys.stderr)
    try:
        if options.do_recurse:
            _recurse(list(dags), options, options.cwd)
        max_rescue = max(0, min(cfg.get_int("DAGMAN_MAX_RESCUE_NUM", 100), 999))
        problems = check_outputs(primary, options, max_rescue, rescue_base(dag_files))
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        if options.update_submit:
            keep_old_limits(options, files.submit)
        write_condor_sub(dag_files, options, dags)
    except DagError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 1
    line = "-" * 71
    print(line)
    for label, path in (("File for submitting this DAG to HTCondor", files.submit),
                        ("Log of DAGMan debugging messages", files.debug_log),
                        ("Log of HTCondor library output", files.lib_out),
                        ("Log of HTCondor library error messages", files.lib_err),
                        ("Log of the life of condor_dagman itself", files.sched_log)):
        print(f"{label:<51}: {path}")
    print()
    sys.stdout.flush()
    if options.no_submit:
        print("-no_submit given, not submitting DAG to HTCondor. You can do this with:")
        print(f'"htcd submit {files.submit}"')
    else:
        status = _submit(files.submit, options)
        if status != 0:
            print("ERROR: htcd submit failed; aborting.", file=sys.stderr)
            return status
    print(line)
    return 0


def _submit(submit_file: str, options: SubmitDagOptions) -> int:
    """Submit the .condor.sub exactly as ``htcd submit FILE`` would."""
    from htcd.cli import submit

    if options.schedd_address_file:
        os.environ["_CONDOR_SCHEDD_ADDRESS_FILE"] = options.schedd_address_file
    p = argparse.ArgumentParser(prog="htcd submit")
    runner = submit.configure("submit", p)
    ns = p.parse_args([submit_file])
    ns.extra = []
    try:
        return runner(ns)
    except UserError as exc:
        print(f"htcd submit: {exc}", file=sys.stderr)
        return exc.exit_code
