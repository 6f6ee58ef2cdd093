"""``htcd SUBCOMMAND ...``: parse the command line and dispatch to the subcommand's module.

Flags follow HTCondor's tools (single-dash long options such as ``-nobatch``), with HTCondor's
conventions: any unique prefix of an option (``-nob``, ``-const``), ``-`` and ``_`` alike inside
a name (``-better_analyze``), ``--name`` only in full, ``-version`` on every tool, ``-pool`` on
every tool that talks to a daemon.  Run under a ``condor_*`` name (:mod:`htcd.cli.condor_names`)
htcd behaves as ``htcd <tool>`` and names itself as that tool.  A user mistake exits with a
message and no traceback: 2 for a bad command line (1 under a ``condor_*`` name, as HTCondor's
tools do), 1 for everything else.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from htcd.errors import UserError

# subcommand -> (module under htcd.cli, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "master": ("daemons", "run the master, which starts the daemons of DAEMON_LIST"),
    "collector": ("daemons", "run the collector"),
    "negotiator": ("daemons", "run the negotiator"),
    "schedd": ("daemons", "run the schedd"),
    "startd": ("daemons", "run the startd"),
    "defrag": ("daemons", "run the defrag daemon, which drains machines so whole-machine jobs can run"),
    "shared_port": ("daemons", "run the shared-port daemon: this host's daemons reached on one TCP port"),
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
    "job_report": ("job_report", "a day's summary for admins: jobs completed and removed, CPU hours per user, "
                                 "held reasons"),
    "ping": ("ping", "check that a daemon answers and whether you are authorized at each level"),
    "token": ("token", "create, list and revoke the pool's authentication tokens"),
    "ca": ("token", "the pool's signing key, CA and host or client certificates"),
    "userprio": ("userprio", "show and change users' priorities and accumulated usage"),
    "vacate": ("vacate", "vacate the jobs running on a machine (their claims end)"),
    "vacate_job": ("vacate", "vacate running jobs, which go back to idle"),
    "tail": ("tail", "print the last bytes of a running job's stdout, stderr or output file"),
    "chirp": ("chirp", "from inside a running job: get or set its job attributes, write to its user log"),
    "ssh_to_job": ("ssh_to_job", "a shell or a command in a running job's sandbox, as the job's user"),
    "transfer_data": ("transfer_data", "fetch the output of jobs submitted with -spool"),
    "version": ("control", "print the version"),
    "classad_eval": ("classad_eval", "evaluate ClassAd expressions (or a JSON-lines stream of them)"),
    "plugins": ("plugins", "list the plugins, the hooks each implements, and why any is disabled"),
    "gpu_discovery": ("gpu_discovery", "list the GPUs of this machine as the startd's GPU inventory (or simulate some)"),
    "fleet": ("fleet", "run a read-only tool on, or fetch logs from, every host of an Ansible inventory"),
    "dagman": ("dagman", "run a DAG (the DAGMan job; condor_dagman's arguments)"),
    "install-condor-names": ("install_condor_names",
                             "install (or --uninstall) the condor_* command names for scripts written for HTCondor"),
}

# Subcommands that talk to no daemon: no -pool for them.
LOCAL_ONLY = frozenset({"master", "collector", "negotiator", "schedd", "startd", "shared_port", "wait", "version",
                        "classad_eval", "plugins", "fleet", "install-condor-names", "config_val", "ca",
                        "history", "token", "dagman", "submit_dag", "gpu_discovery"})


class Parser(argparse.ArgumentParser):
    """argparse, with HTCondor's option conventions and messages; usage errors exit with
    ``usage_status`` (2 for htcd, 1 under a condor_* name)."""

    usage_status = 2
    chosen: Parser | None = None  # the subcommand's parser, once it is known

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)  # prefixes are resolved by condor_spelling, as HTCondor does
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(self.usage_status, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(self.condor_spelling(argv), namespace)

    def condor_spelling(self, argv: list[str]) -> list[str]:
        """``argv`` with each option as this parser spells it: a unique prefix of a single-dash
        name stands for the name, ``-`` and ``_`` are the same inside it, ``--name`` must be
        whole.  An ambiguous prefix is an error naming the candidates."""
        known = self._option_string_actions
        if not known:
            return argv
        norm: dict[str, list[str]] = {}
        for opt in known:
            norm.setdefault(_norm(opt), []).append(opt)
        # after a subcommand, or a positional that takes all the rest (fleet's tool and its
        # arguments), the words belong to another parser or program: left as they are
        stop_at_positional = self._subparsers is not None or any(
            a.nargs == argparse.REMAINDER for a in self._actions if not a.option_strings)
        out: list[str] = []
        i = 0
        while i < len(argv):
            a = argv[i]
            i += 1
            if a == "--":
                out += argv[i - 1:]
                break
            if not a.startswith("-") or a == "-" or _is_number(a):
                out.append(a)
                if stop_at_positional:
                    out += argv[i:]
                    break
                continue
            opt = a if a in known else self._resolve(a, norm)
            out.append(opt)
            action = known.get(opt)
            if action is not None and opt in known:
                i = self._copy_values(action, argv, i, out)
        return out

    def _resolve(self, a: str, norm: dict[str, list[str]]) -> str:
        key = _norm(a)
        if key in norm:
            return norm[key][0]
        if a.startswith("--"):
            return a  # HTCondor: a double-dash option must be spelled out; argparse refuses it
        actions = self._option_string_actions
        by_action: dict[int, str] = {}  # one spelling per option (-l and -long are one)
        for k, opts in sorted(norm.items()):
            if k.startswith(key) and not opts[0].startswith("--"):
                by_action.setdefault(id(actions[opts[0]]), opts[0])
        hits = [o for o in by_action.values() if actions[o].help != argparse.SUPPRESS] or list(by_action.values())
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            names = ", ".join(sorted(hits))
            self.error(f"ambiguous option {a}: it could be {names}")
        return a

    @staticmethod
    def _copy_values(action: argparse.Action, argv: list[str], i: int, out: list[str]) -> int:
        """Copy the values of an option that takes a fixed number of them (they may start with -)."""
        n = action.nargs
        count = 1 if n is None else n if isinstance(n, int) else 0
        out += argv[i:i + count]
        return i + count


def _norm(opt: str) -> str:
    return opt.lstrip("-").replace("_", "-")


def _is_number(a: str) -> bool:
    try:
        float(a)
    except ValueError:
        return False
    return True


# Subcommands whose positional words may come between options (condor_submit's name=value).
TAKES_WORDS_ANYWHERE = frozenset({"submit"})
# Subcommands that read their own command line (condor_dagman's case-insensitive flags).
OWN_ARGUMENTS = frozenset({"dagman"})


def build_parser(wanted: str | None = None, prog: str | None = None
                 ) -> tuple[Parser, dict[str, Callable[..., int]]]:
    parser = Parser(prog=prog or "htcd", description="htcd: a high-throughput computing system")
    parser.add_argument("-version", "--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND", parser_class=Parser)
    runners: dict[str, Callable[..., int]] = {}
    if wanted is None:
        wanted = _wanted(sys.argv[1:])
    for name, (module, help_text) in SUBCOMMANDS.items():
        extra: dict[str, Any] = {"prog": prog} if prog and wanted == name else {}
        p = sub.add_parser(name, help=help_text, description=help_text, **extra)
        if wanted == name:
            mod = importlib.import_module(f"htcd.cli.{module}")
            runners[name] = mod.configure(name, p)
            parser.chosen = p
            _common_options(name, p)
    return parser, runners


def _common_options(name: str, p: argparse.ArgumentParser) -> None:
    """What every tool takes: -version, and -pool where it talks to a daemon."""
    known = p._option_string_actions
    if "-version" not in known:
        p.add_argument("-version", dest="tool_version", action="store_true", help="print the version and exit")
    if name not in LOCAL_ONLY and "-pool" not in known:
        p.add_argument("-pool", dest="tool_pool", metavar="HOST[:PORT]",
                       help="the pool's central manager (collector) to ask")


def _wanted(argv: list[str]) -> str | None:
    """The subcommand named on the command line, so only its module is imported."""
    for a in argv:
        if not a.startswith("-"):
            return a if a in SUBCOMMANDS else None
    return None


def asks_version(parser: Parser, argv: list[str]) -> bool:
    """Whether the subcommand's options (as HTCondor spells them) include ``-version``."""
    sub = parser.chosen
    words = [a for a in argv if not a.startswith("-")]
    if sub is None or not words or words[0] not in SUBCOMMANDS:
        return False
    rest = argv[argv.index(words[0]) + 1:]
    if not any(a.startswith("-") for a in rest):
        return False
    resolved = sub.condor_spelling(rest)
    return any(sub._option_string_actions.get(a) is not None
               and sub._option_string_actions[a].dest in ("tool_version", "version") for a in resolved)


def _unrecognized(command: str | None, extra: list[str], argv: list[str]) -> str:
    """The message for options htcd does not know: an option of the HTCondor tool (its man page's,
    in condor_options.tsv) is named as such, so that it is not mistaken for a typo."""
    from htcd.cli.condor_names import condor_options, condor_tool

    tool = condor_tool(command, argv)
    theirs = condor_options(tool) if tool else {}
    keys = {_norm(o): o for o in theirs}
    lines = []
    for e in extra:
        k = _norm(e)
        hit = keys.get(k) or next((o for kk, o in sorted(keys.items()) if kk.startswith(k) and e[:2] != "--"), None)
        if e.startswith("-") and hit:
            lines.append(f"{e}: {tool}'s option {hit} is not implemented by htcd (docs/dropin.md lists what is)")
    rest = [e for e in extra if not any(line.startswith(f"{e}:") for line in lines)]
    if rest:
        lines.append(f"unrecognized arguments: {' '.join(rest)}")
    return "\n".join(lines)


def _plugin_templates() -> None:
    from htcd.plugins import get_plugin_manager

    get_plugin_manager().register_config_templates()


def _print_version() -> int:
    from htcd.version import platform_string, version_string

    try:
        print(version_string())
        print(platform_string(), flush=True)
    except BrokenPipeError:  # `condor_version | head -1`
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    if argv is not None:
        sys.argv[1:] = argv
    from htcd.cli.condor_names import NOT_IN_HTCD, words_for

    program = os.path.basename(sys.argv[0])
    words = words_for(program)
    label = "htcd"
    if words is not None:
        if program in NOT_IN_HTCD:
            print(f"{program}: {NOT_IN_HTCD[program]}", file=sys.stderr)
            return 1
        sys.argv[1:1] = list(words)
        label = program
    from htcd.config import set_template_provider

    set_template_provider(_plugin_templates)
    if any(a.startswith(("-af:", "-autoformat:")) for a in sys.argv[1:]):
        from htcd.cli.output import split_af_option

        sys.argv[1:] = split_af_option(sys.argv[1:])
    if _wanted(sys.argv[1:]) == "submit_dag":  # condor_submit_dag's flags are case-insensitive
        from htcd.cli.submit_dag import configure, normalize_argv

        configure("submit_dag", Parser())  # (registers the flags normalize_argv knows)
        sys.argv[1:] = normalize_argv(sys.argv[1:])
    parser, runners = build_parser(words[0] if words else None, label if words else None)
    if words is not None:  # HTCondor's tools exit 1 on a bad command line
        parser.usage_status = 1
        if parser.chosen is not None:
            parser.chosen.usage_status = 1
    if asks_version(parser, sys.argv[1:]):
        return _print_version()  # before the parse: `condor_drain -version` needs no machine
    args, extra = parser.parse_known_args()
    if args.command in OWN_ARGUMENTS:
        extra = sys.argv[sys.argv.index(args.command) + 1:]
    elif extra and (args.command not in TAKES_WORDS_ANYWHERE or any(e.startswith("-") for e in extra)):
        (parser.chosen or parser).error(_unrecognized(args.command, extra, sys.argv[1:]))
    args.extra = extra
    if (args.version and not args.command) or getattr(args, "tool_version", False):
        return _print_version()
    if not args.command:
        parser.print_usage(sys.stderr)
        print("htcd: error: a subcommand is required (htcd -h lists them)", file=sys.stderr)
        return 2
    if getattr(args, "tool_pool", None):
        os.environ["_CONDOR_COLLECTOR_HOST"] = args.tool_pool
    who = label if words else f"htcd {args.command}"
    try:
        return runners[args.command](args)
    except UserError as exc:
        print(f"{who}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
