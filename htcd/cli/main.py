"""``htcd SUBCOMMAND ...``: parse the command line and dispatch to the subcommand's module.

Flags follow HTCondor's tools (single-dash long options such as ``-nobatch``).  A user mistake
exits with a message and no traceback: 2 for a bad command line, 1 for everything else.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from typing import NoReturn

from htcd.errors import UserError

# subcommand -> (module under htcd.cli, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "master": ("daemons", "run the master, which starts the daemons of DAEMON_LIST"),
    "collector": ("daemons", "run the collector"),
    "negotiator": ("daemons", "run the negotiator"),
    "schedd": ("daemons", "run the schedd"),
    "startd": ("daemons", "run the startd"),
    "defrag": ("daemons", "run the defrag daemon, which drains machines so whole-machine jobs can run"),
    "submit": ("submit", "submit jobs from a submit description file"),
    "submit_dag": ("submit_dag", "check a DAG and submit the DAGMan job that runs it"),
    "q": ("q", "list jobs in the queue"),
    "history": ("history", "list jobs that left the queue, newest first"),
    "qedit": ("act", "set attributes of queued jobs"),
    "rm": ("act", "remove jobs"),
    "hold": ("act", "hold jobs"),
    "release": ("act", "release held jobs"),
    "wait": ("wait", "wait for the jobs of an event log to finish"),
    "status": ("status", "list slots and daemons known to the collector"),
    "config_val": ("config_val", "print configuration values"),
    "on": ("control", "start the daemons of this host (or one of them)"),
    "off": ("control", "shut down the daemons of this host (or one of them)"),
    "restart": ("control", "restart the daemons of this host (or one of them)"),
    "reconfig": ("control", "make this host's daemons re-read their configuration"),
    "drain": ("drain", "drain a machine of its jobs, or cancel a drain"),
    "updates_stats": ("updates_stats", "per-sender update counts and losses seen by the collector"),
    "ping": ("ping", "check that a daemon answers and whether you are authorized at each level"),
    "token": ("token", "create, list and revoke the pool's authentication tokens"),
    "ca": ("token", "the pool's signing key, CA and host or client certificates"),
    "userprio": ("userprio", "show and change users' priorities and accumulated usage"),
    "vacate": ("vacate", "vacate the jobs running on a machine (their claims end)"),
    "vacate_job": ("vacate", "vacate running jobs, which go back to idle"),
    "transfer_data": ("transfer_data", "fetch the output of jobs submitted with -spool"),
    "version": ("control", "print the version"),
    "classad_eval": ("classad_eval", "evaluate ClassAd expressions (or a JSON-lines stream of them)"),
    "plugins": ("plugins", "list the plugins, the hooks each implements, and why any is disabled"),
    "gpu_discovery": ("gpu_discovery", "list the GPUs of this machine as the startd's GPU inventory (or simulate some)"),
    "fleet": ("fleet", "run a read-only tool on, or fetch logs from, every host of an Ansible inventory"),
}


class Parser(argparse.ArgumentParser):
    """argparse, with HTCondor-style messages and exit status 2 for usage errors."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


# Subcommands whose positional words may come between options (condor_submit's name=value).
TAKES_WORDS_ANYWHERE = frozenset({"submit"})


def build_parser() -> tuple[Parser, dict[str, Callable[..., int]]]:
    parser = Parser(prog="htcd", description="htcd: a high-throughput computing system")
    parser.add_argument("-version", "--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND", parser_class=Parser)
    runners: dict[str, Callable[..., int]] = {}
    wanted = _wanted(sys.argv[1:])
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if wanted == name:
            mod = importlib.import_module(f"htcd.cli.{module}")
            runners[name] = mod.configure(name, p)
    return parser, runners


def _wanted(argv: list[str]) -> str | None:
    """The subcommand named on the command line, so only its module is imported."""
    for a in argv:
        if not a.startswith("-"):
            return a if a in SUBCOMMANDS else None
    return None


def _plugin_templates() -> None:
    from htcd.plugins import get_plugin_manager

    get_plugin_manager().register_config_templates()


def main(argv: list[str] | None = None) -> int:
    if argv is not None:
        sys.argv[1:] = argv
    from htcd.config import set_template_provider

    set_template_provider(_plugin_templates)
    if any(a.startswith(("-af:", "-autoformat:")) for a in sys.argv[1:]):
        from htcd.cli.output import split_af_option

        sys.argv[1:] = split_af_option(sys.argv[1:])
    if _wanted(sys.argv[1:]) == "submit_dag":  # condor_submit_dag's flags are case-insensitive
        from htcd.cli.submit_dag import configure, normalize_argv

        configure("submit_dag", Parser())  # (registers the flags normalize_argv knows)
        sys.argv[1:] = normalize_argv(sys.argv[1:])
    parser, runners = build_parser()
    args, extra = parser.parse_known_args()
    if extra and (args.command not in TAKES_WORDS_ANYWHERE or any(e.startswith("-") for e in extra)):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    if args.version and not args.command:
        args.command = "version"
        runners.setdefault("version", importlib.import_module("htcd.cli.control").configure("version", Parser()))
    if not args.command:
        parser.print_usage(sys.stderr)
        print("htcd: error: a subcommand is required (htcd -h lists them)", file=sys.stderr)
        return 2
    try:
        return runners[args.command](args)
    except UserError as exc:
        print(f"htcd {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
