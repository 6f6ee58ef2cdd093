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
The steps themselves are in htcd/cli/submit_steps.py.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable


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


def run(args: argparse.Namespace) -> int:
    if args.interactive:
        from htcd.cli import submit_interactive

        return submit_interactive.run(args)
    from htcd.cli.submit_steps import prepare, read_description, send, split_words, write_ads

    defines, args.file = split_words(args)
    text, filename, submit_dir = read_description(args.file)
    p = prepare(args, text, filename, submit_dir, defines,
                path=os.path.abspath(args.file) if filename != "<stdin>" else None)
    if args.dump or args.dry_run:
        return write_ads(args, p)
    send(args, p)
    return 0
