"""Submit commands -> job ClassAd attributes (as expression text), following condor_submit."""

from __future__ import annotations

import fnmatch
import math
import os
import re
import signal
import socket
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from htcd.submit import jobpolicy
from htcd.submit.errors import SubmitError
from htcd.submit.exprcheck import check_expr
from htcd.submit.names import spellings
from htcd.submit.predefined import default_arch, default_opsys
from htcd.submit.quoting import is_new_syntax, join_canonical, parse_environment, quote, split_new_syntax
from htcd.submit.unsupported import (
    AP_ONLY,
    CONTAINER_URL,
    REFUSED_UNIVERSES,
    REFUSED_WHEN_TRUE,
    WARNED_WHEN_TRUE,
)

UNIVERSES: dict[str, int] = {
    "vanilla": 5, "scheduler": 7, "grid": 9, "java": 10, "parallel": 11, "local": 12,
    "vm": 13, "docker": 5, "container": 5,
}
# Universes HTCondor has retired: refused by name.  Any other unknown name is taken for a
# universe a plugin registers on the execute points (``htcd_register_universes``).
RETIRED_UNIVERSES = frozenset({"standard", "pvm", "mpi", "globus"})
_PLUGIN_UNIVERSE = re.compile(r"[a-z][a-z0-9_]*")
# The slot attribute that says an execute point offers a universe, as condor_submit requires it.
UNIVERSE_CLAUSE = {"docker": "TARGET.HasDocker", "java": "TARGET.HasJava"}
DOCKER_PULL_POLICIES = ("always", "missing", "never")


def plugin_universe_clause(name: str) -> str:
    """What a job of a plugin's universe requires: a slot whose starter lists the universe."""
    return f'stringListIMember("{name}", TARGET.StarterAbilityList)'

NOTIFICATION = {"never": 0, "always": 1, "complete": 2, "error": 3}

# Commands this module understands (lower case).  Anything else is a user variable.
KNOWN_COMMANDS: frozenset[str] = frozenset({
    "universe", "executable", "arguments", "args", "environment", "env", "input", "output", "error",
    "log", "initialdir", "initial_dir", "iwd", "request_cpus", "request_memory", "request_disk",
    "request_gpus", "checkpoint_exit_code", "transfer_checkpoint_files", "transfer_input_files",
    "transfer_output_files", "should_transfer_files",
    "when_to_transfer_output", "transfer_executable", "requirements", "rank", "priority",
    "accounting_group", "accounting_group_user", "concurrency_limits", "getenv", "notification",
    "notify_user", "batch_name", "periodic_hold", "periodic_release", "periodic_remove",
    "on_exit_hold", "on_exit_remove", "max_retries", "max_idle", "max_materialize",
    "docker_image", "docker_network_type", "docker_pull_policy", "container_image", "transfer_output_remaps", "stream_output", "stream_error",
    "stream_input", "job_lease_duration", "hold", "leave_in_queue", "kill_sig", "description",
    "job_ad_information_attrs", "periodic_hold_reason", "periodic_hold_subcode", "on_exit_hold_reason", "on_exit_hold_subcode",
    # accepted but, as in HTCondor 24, without an attribute of their own
    "periodic_remove_reason", "periodic_remove_subcode", "periodic_release_reason", "periodic_release_subcode",
    "on_exit_remove_reason", "on_exit_remove_subcode",
    # set by ``use STRICT : ...``; read by queue ... matching
    "submitwarnemptymatches", "submitfailemptymatches", "submitwarnduplicatematches",
    "submitfailemptyfields", "submitwarnemptyfields",
    # htcd/submit/jobpolicy.py
    *jobpolicy.COMMANDS,
    "shell", "skip_filechecks", "concurrency_limits_expr", "transfer_input", "transfer_output", "transfer_error",
    "batch_id", "project_name", "cluster", "process", "image_size", "disk_usage",
    # a DAG's node jobs (written by the DAGMan job) and the DAG job itself
    "dagman_job_id", "dag_node_name", "dagman_log", "remove_kill_sig", "hold_kill_sig",
    # refused only when true (htcd/submit/unsupported.py)
    "encrypt_execute_directory",
    # read only by the parallel universe, which htcd refuses: elsewhere condor_submit ignores it
    "machine_count",
})

# What a job gets for a command the submit file leaves unset: the configuration's JOB_DEFAULT_<X>
# when it is set, else condor_submit's own default (the param table holds the same values).
JOB_DEFAULTS = {
    "request_cpus": ("JOB_DEFAULT_REQUESTCPUS", "1"),
    "request_memory": ("JOB_DEFAULT_REQUESTMEMORY",
                       "ifthenelse(MemoryUsage isnt undefined,MemoryUsage,(ImageSize + 1023) / 1024)"),
    "request_disk": ("JOB_DEFAULT_REQUESTDISK", "DiskUsage"),
    "notification": ("JOB_DEFAULT_NOTIFICATION", "NEVER"),
    "job_lease_duration": ("JOB_DEFAULT_LEASE_DURATION", "2400"),
}


@dataclass
class JobContext:
    """Per-job inputs that do not come from the submit file."""

    cluster_id: int
    proc_id: int
    submit_dir: str
    owner: str
    qdate: int
    config_get: Callable[[str], str | None]
    env: Mapping[str, str]
    plugin_universes: Collection[str] | None = None  # None: not known, any plausible name passes


Getter = Callable[[str], tuple[str, int] | None]

_MEM_UNITS = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 ** 2}
_DISK_UNITS = {"": 1.0, "K": 1.0, "M": 1024.0, "G": 1024.0 ** 2, "T": 1024.0 ** 3}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*$")


def convert_size(value: str, units: Mapping[str, float]) -> str | None:
    """Number with optional K/M/G/T[B] suffix -> integer text in the command's base unit.

    Returns None when ``value`` is not a number at all (it is then an expression);
    raises ValueError for a number with an unknown unit.
    """
    m = _SIZE.match(value)
    if not m:
        return None
    unit = m.group(2).upper()
    if unit.endswith("B") and len(unit) == 2:
        unit = unit[0]
    if unit not in units:
        raise ValueError(f"bad unit {m.group(2)!r} in {value.strip()!r}: use K, M, G or T")
    return str(math.ceil(float(m.group(1)) * units[unit]))


def _kib(path: str) -> int | None:
    """Size of a regular file in KiB, rounded up as condor_submit does; None if it is not one."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return math.ceil(st.st_size / 1024) if os.path.isfile(path) else None


def bool_value(value: str) -> bool | None:
    """A submit file's true/false (true/yes/t/y/1, false/no/f/n/0), else None."""
    v = value.strip().lower()
    if v in ("true", "yes", "t", "y", "1"):
        return True
    if v in ("false", "no", "f", "n", "0"):
        return False
    return None


def _at_most(value: str, limit: float) -> bool:
    """Whether attribute text is a plain number no bigger than ``limit``."""
    try:
        return float(value) <= limit
    except ValueError:
        return False


def _mentions(expr: str, attr: str) -> bool:
    return re.search(rf"(?<![\w.])(?:TARGET\.)?{attr}\b", expr, re.IGNORECASE) is not None


Settings = Callable[[], list[tuple[str, str, int]]]
# What the custom (+Attr) and extra request_<x> sections read, for Plan.dirty.
CUSTOM_MARK, REQUEST_MARK = "+", "request_*"

# The build runs in sections, in this order.  A section reads commands (recorded while it
# runs) and the state that the sections named here left on the translator.
SECTIONS = ("universe", "iwd", "executable", "arguments", "environment", "files", "transfer", "resources",
            "policy", "misc", "config_attrs", "custom", "checkpoint", "requirements")
_USES = {"executable": ("universe",), "files": ("iwd",), "transfer": ("universe", "iwd", "executable"),
         "misc": ("universe",), "checkpoint": ("universe", "transfer", "custom"),
         "requirements": ("universe", "resources", "transfer", "checkpoint")}


@dataclass
class Plan:
    """A built job, section by section, so another proc re-runs only what its own values change.

    ``steps`` holds per section the commands it read, and the attributes it set and removed.
    """

    ad: dict[str, str]
    steps: list[tuple[str, frozenset[str], dict[str, str], tuple[str, ...]]]
    state: dict[str, object]

    def dirty(self, dynamic: set[str]) -> set[str]:
        """Sections whose result can change when the commands in ``dynamic`` change."""
        out: set[str] = set()
        for name, reads, _, _ in self.steps:
            if reads & dynamic or any(u in out for u in _USES.get(name, ())):
                out.add(name)
        return out


class Translator:
    """Builds one job ad from expanded command values."""

    def __init__(self, get: Getter, ctx: JobContext, source: str, custom: Settings,
                 request_extra: Settings) -> None:
        self.get = get
        self.ctx = ctx
        self.source = source
        self.custom_settings = custom
        self.request_settings = request_extra
        self.ad: dict[str, str] = {}
        self.universe = "vanilla"
        self.container_clauses: list[str] = []
        self.container_image_input = ""
        self.reads: set[str] = set()
        #: What the user should be told about this job (condor_submit's warnings).
        self.warnings: list[str] = []

    def fail(self, message: str, line: int | None) -> SubmitError:
        return SubmitError(message, source=self.source, line=line)

    def expr(self, attr: str, value: str, line: int | None) -> str:
        """Validate expression text for ``attr``; the one place expressions are checked."""
        try:
            check_expr(value)
        except ValueError as err:
            raise self.fail(f"{attr}: invalid ClassAd expression {value!r}: {err}", line) from err
        return value.strip()

    def bool_of(self, command: str, got: tuple[str, int]) -> bool:
        """A true/false command's value; anything else is an error naming the command."""
        b = bool_value(got[0])
        if b is None:
            raise self.fail(f"{command} must be true or false, not {got[0]!r}", got[1])
        return b

    def first(self, *names: str) -> tuple[str, int] | None:
        """The first of ``names`` (each under every spelling condor_submit reads) that has a value."""
        for command in names:
            for name in spellings(command):
                self.reads.add(name)
                got = self.get(name)
                if got is not None and got[0].strip() != "":
                    return got[0].strip(), got[1]
        return None

    def or_default(self, command: str) -> tuple[str, int | None]:
        """The command's value, else its JOB_DEFAULT_<X> from the configuration (line None), else
        condor_submit's default."""
        got = self.first(command)
        if got is not None:
            return got
        knob, builtin = JOB_DEFAULTS[command]
        value = (self.ctx.config_get(knob) or "").strip()
        return (value or builtin), None

    def what(self, attr: str, command: str, line: int | None) -> str:
        """How an error names a value: the attribute, or the knob when the value came from it."""
        return attr if line is not None else f"{attr} (from {JOB_DEFAULTS[command][0]} in the configuration)"

    def _base(self) -> None:
        ctx = self.ctx
        self.ad.update({
            "MyType": quote("Job"), "TargetType": quote("Machine"),
            "ClusterId": str(ctx.cluster_id), "ProcId": str(ctx.proc_id),
            "Owner": quote(ctx.owner),
            "QDate": str(ctx.qdate), "EnteredCurrentStatus": str(ctx.qdate),
            "JobStatus": "1", "JobPrio": "0", "JobSubmitMethod": "0",
            "NumJobStarts": "0", "NumJobCompletions": "0", "NumRestarts": "0",
            "NumCkpts": "0", "NumSystemHolds": "0", "CurrentHosts": "0", "MaxHosts": "1", "MinHosts": "1",
            "ExitBySignal": "false", "ExitStatus": "0", "LeaveJobInQueue": "false",
            "TransferInputSizeMB": "0", "Rank": "0.0",
            "CommittedTime": "0", "CommittedSlotTime": "0", "CommittedSuspensionTime": "0",
            "CumulativeSlotTime": "0", "CumulativeSuspensionTime": "0", "LastSuspensionTime": "0",
            "TotalSuspensions": "0", "RemoteSysCpu": "0.0", "RemoteUserCpu": "0.0",
            "CumulativeRemoteSysCpu": "0.0", "CumulativeRemoteUserCpu": "0.0",
            "RemoteWallClockTime": "0.0",
        })

    def build(self) -> dict[str, str]:
        """Build the whole ad; ``plan()`` then describes it for ``rebuild``."""
        self._base()
        self.steps: list[tuple[str, frozenset[str], dict[str, str], tuple[str, ...]]] = []
        for name in SECTIONS:
            before = dict(self.ad)
            self.reads = set()
            getattr(self, "_" + name)()
            set_ = {k: v for k, v in self.ad.items() if before.get(k) != v}
            removed = tuple(k for k in before if k not in self.ad)
            self.steps.append((name, frozenset(self.reads), set_, removed))
        return self.ad

    def plan(self) -> Plan:
        state = {k: v for k, v in vars(self).items()
                 if k not in ("get", "ctx", "source", "custom_settings", "request_settings", "ad", "reads", "steps",
                              "warnings")}
        return Plan(dict(self.ad), self.steps, state)

    def rebuild(self, plan: Plan, dirty: set[str]) -> dict[str, str]:
        """This proc's ad from ``plan``, re-running only the ``dirty`` sections."""
        if not dirty:
            ad = dict(plan.ad)
            ad["ProcId"] = str(self.ctx.proc_id)
            return ad
        vars(self).update(plan.state)
        self._base()
        ad = self.ad
        for name, _, set_, removed in plan.steps:
            if name in dirty:
                getattr(self, "_" + name)()
            else:
                ad.update(set_)
                for k in removed:
                    ad.pop(k, None)
        return ad

    def _universe(self) -> None:
        self.container_clauses, self.container_image_input = [], ""
        got = self.first("universe")
        name = got[0].lower() if got else "vanilla"
        if name == "vanilla" and self.first("container_image") is not None:
            name = "container"  # a container image makes a vanilla job a container job, as in condor_submit
        self._check_universe(name, got[1] if got else None)
        self.refuse_when_true()
        self.ad["JobUniverse"] = str(UNIVERSES.get(name, UNIVERSES["vanilla"]))
        if name not in UNIVERSES:
            self.ad["PluginUniverse"] = quote(name)  # the startd runs the job through that plugin
        if name in ("scheduler", "local"):
            self.ad["KillSig"] = quote("SIGTERM")
        if name == "docker":
            self.ad["WantDocker"] = "true"
            img = self.first("docker_image")
            if img is None:
                raise self.fail("universe docker needs docker_image", got[1] if got else None)
        if name == "container":
            self.ad["WantContainer"] = "true"
            img = self.first("container_image")
            if img is None:
                raise self.fail("universe container needs container_image", got[1] if got else None)
            self._container_image(img[0])
        img = self.first("docker_image")
        if img is not None:
            self.ad["DockerImage"] = quote(img[0])
        self._docker_options()
        self.universe = name

    def _check_universe(self, name: str, line: int | None) -> None:
        """Refuse a universe htcd cannot run, and one nothing offers (it would stay idle for ever)."""
        plugins = self.ctx.plugin_universes
        offered = plugins is not None and name in plugins
        if name in REFUSED_UNIVERSES and not offered:
            raise self.fail(f"universe = {name}: htcd cannot run it: {REFUSED_UNIVERSES[name]}", line)
        if name in UNIVERSES:
            return
        if name in RETIRED_UNIVERSES or not _PLUGIN_UNIVERSE.fullmatch(name):
            raise self.fail(f"unknown universe {name!r}; known: {', '.join(sorted(set(UNIVERSES) - set(REFUSED_UNIVERSES)))}, "
                            "or the name of a universe a plugin registers", line)
        if plugins is not None and not offered:
            raise self.fail(f"unknown universe {name!r}: neither HTCondor nor an installed plugin offers it "
                            f"(plugins offer: {', '.join(sorted(plugins)) or 'none'})", line)

    def refuse_when_true(self) -> None:
        """The commands htcd refuses when they are true (htcd/submit/unsupported.py)."""
        for command, reason in REFUSED_WHEN_TRUE.items():
            got = self.first(command)
            if got is not None and bool_value(got[0]) is not False:
                raise self.fail(f"{command} = {got[0]}: htcd cannot honour this command: {reason}", got[1])
        for command, instead in WARNED_WHEN_TRUE.items():
            got = self.first(command)
            if got is not None and bool_value(got[0]) is not False:
                self.warnings.append(f"{command} = {got[0]}: {instead}")

    def _docker_options(self) -> None:
        """docker_network_type (none, host, or a network the slot lists in DockerNetworks) and
        docker_pull_policy; an unknown pull policy is refused here rather than held later."""
        net = self.first("docker_network_type")
        if net is not None:
            self.ad["DockerNetworkType"] = quote(net[0])
        pull = self.first("docker_pull_policy")
        if pull is not None:
            if pull[0].lower() not in DOCKER_PULL_POLICIES:
                raise self.fail(f"docker_pull_policy must be one of {', '.join(DOCKER_PULL_POLICIES)}, "
                                f"not {pull[0]!r}", pull[1])
            self.ad["DockerPullPolicy"] = quote(pull[0])

    def _container_image(self, image: str) -> None:
        """Where the image comes from decides the attributes and the slot feature to require."""
        self.container_clauses = ["TARGET.HasContainer"]
        if "://" in image:
            scheme = image.split("://", 1)[0].lower()
            if scheme != "docker":
                raise self.fail(f"container_image = {image}: htcd cannot honour this command: {CONTAINER_URL}",
                                self.first("container_image")[1])  # type: ignore[index]  # it is set
            self.ad["ContainerImage"] = quote(image)
            self.ad["ContainerImageSource"] = quote(scheme)
            if scheme == "docker":
                self.ad["WantDockerImage"] = "true"
                self.container_clauses.append("TARGET.HasDockerURL")
            return
        if image.endswith(".sif"):
            # A local SIF file is sent with the job like any input file.
            self.ad["ContainerImage"] = quote(os.path.basename(image))
            self.ad["ContainerImageFullPath"] = quote(image)
            self.ad["ContainerImageSource"] = quote("cedar")
            self.ad["WantSIF"] = "true"
            self.container_clauses.append("TARGET.HasSIF")
            self.container_image_input = image
            return
        self.ad["ContainerImage"] = quote(image)

    def _iwd(self) -> None:
        got = self.first("initialdir", "initial_dir", "iwd")
        iwd = full_path(self.ctx.submit_dir, got[0]) if got else self.ctx.submit_dir
        if got is not None and not os.path.isdir(iwd) and not self._skip_filechecks():
            raise self.fail(f"initialdir: no such directory: {iwd}", got[1])
        self.iwd = iwd
        self.ad["Iwd"] = quote(iwd)

    def _executable(self) -> None:
        universe = self.universe
        shell = self.first("shell")
        if shell is not None:
            self._shell(shell[0])
            return
        got = self.first("executable")
        if got is None and universe in ("docker", "container"):  # the image's own entrypoint and command
            self.ad["Cmd"] = quote("")
            self.ad["TransferExecutable"] = "false"
            self.exe_kib = 0
            self.ad["ExecutableSize"] = self.ad["ImageSize"] = "0"
            return
        if got is None:
            raise self.fail("no executable given: add 'executable = /path/to/program'", None)
        path, line = got
        transfer = True
        te = self.first("transfer_executable")
        if te is not None:
            b = bool_value(te[0])
            if b is None:
                raise self.fail(f"transfer_executable must be true or false, not {te[0]!r}", te[1])
            transfer = b
            self.ad["TransferExecutable"] = "true" if b else "false"
        container = universe in ("docker", "container")
        # An executable that is not transferred names a path on the execution point: kept as written.
        full = path if not transfer and not container else full_path(self.ctx.submit_dir, path)
        self.ad["Cmd"] = quote(full)
        size = _kib(full)
        if size is None:
            # $$(...) is filled in at match time: the file cannot be looked for now
            if transfer and not container and "$$(" not in full and not self._skip_filechecks():
                raise self.fail(f"executable {full!r} does not exist or cannot be read", line)
            size = 0
        self.exe_kib = size
        for attr in ("ExecutableSize", "ImageSize"):
            self.ad[attr] = str(size)

    def _skip_filechecks(self) -> bool:
        got = self.first("skip_filechecks")
        return got is not None and bool_value(got[0]) is True

    def _shell(self, command: str) -> None:
        """``shell = <command>`` (HTCondor 24): /bin/sh -c <command>, run where the job lands."""
        self.shell_command = command
        self.ad["Cmd"] = quote("/bin/sh")
        self.ad["TransferExecutable"] = "false"
        self.exe_kib = _kib(os.path.realpath("/bin/sh")) or 0
        self.ad["ExecutableSize"] = self.ad["ImageSize"] = str(self.exe_kib)

    def _arguments(self) -> None:
        if self.first("shell") is not None:  # the shell command is the job's whole command line
            self.ad["Arguments"] = quote(join_canonical(["-c", self.shell_command]))
            return
        got = self.first("arguments", "args")
        if got is None:
            # a value that expands to blanks still makes (empty) old-syntax arguments, as in condor_submit
            raw = next((v for n in ("arguments", "args") for name in spellings(n) if (v := self.get(name))), None)
            if raw is not None and raw[0]:
                self.ad["Args"] = quote("")
                return
            self.ad["Arguments"] = quote("")
            return
        value, line = got
        if is_new_syntax(value):
            try:
                words = split_new_syntax(value[1:-1])
            except ValueError as err:
                raise self.fail(f"arguments: {err}", line) from err
            self.ad["Arguments"] = quote(join_canonical(words))
        else:
            if re.search(r'(?<!\\)"', value):
                raise self.fail("arguments: a double quote in old-style arguments; write it \\\" or wrap the "
                                'whole value in double quotes to use the new syntax', line)
            # spaces and tabs separate old-syntax arguments (other control characters are kept)
            self.ad["Args"] = quote(" ".join(w for w in re.split(r"[ \t\r\n]+", value.replace('\\"', '"')) if w))

    def _environment(self) -> None:
        merged: dict[str, str] = {}
        ge = self.first("getenv")
        if ge is not None:
            b = bool_value(ge[0])
            if b is True:
                merged.update(self.ctx.env)
            elif b is None:
                pats = [p for p in re.split(r"[\s,]+", ge[0]) if p]
                for k, v in self.ctx.env.items():
                    if any(fnmatch.fnmatchcase(k, p) for p in pats):
                        merged[k] = v
        got = self.first("environment", "env")
        if got is not None:
            try:
                merged.update(parse_environment(got[0]))
            except ValueError as err:
                raise self.fail(f"environment: {err}", got[1]) from err
        text = join_canonical_env(merged)
        self.ad["Environment"] = quote(text)

    def _files(self) -> None:
        for cmd, attr, stream in (("input", "In", "StreamIn"), ("output", "Out", "StreamOut"),
                                  ("error", "Err", "StreamErr")):
            got = self.first(cmd)
            value = got[0] if got else "/dev/null"
            self.ad[attr] = quote(value)
            transfer = self.first("transfer_" + cmd)
            if value == "/dev/null" or (transfer is not None and bool_value(transfer[0]) is False):
                self.ad["Transfer" + attr] = "false"  # the job's own path on the execute point
            else:
                # stream_input = true is refused, stream_output/_error = true warned about
                # (htcd/submit/unsupported.py): the attribute says what the job asked for
                asked = self.first("stream_" + cmd)
                self.ad[stream] = "true" if asked is not None and bool_value(asked[0]) is True else "false"
        log = self.first("log")
        if log is not None:
            self.ad["UserLog"] = quote(full_path(self.iwd, log[0]))

    def _transfer(self) -> None:
        stf_text, stf_line = self.first("should_transfer_files") or ("IF_NEEDED", None)
        value = stf_text.upper()
        if value in ("TRUE", "T", "ALWAYS"):
            value = "YES"
        if value in ("FALSE", "F"):
            value = "NO"
        if value not in ("YES", "NO", "IF_NEEDED"):
            raise self.fail(f"should_transfer_files must be YES, NO or IF_NEEDED, not {stf_text!r}", stf_line)
        self.stf = value
        self.ad["ShouldTransferFiles"] = quote(value)
        stdin = self.first("input")
        sent = self.ad.get("TransferIn") != "false"  # transfer_input = false: the path is the execute point's
        self.input_files: list[str] = [stdin[0]] if stdin and stdin[0] != "/dev/null" and sent else []
        wto = self.first("when_to_transfer_output")
        wto_text, wto_line = wto or ("ON_EXIT", None)
        wvalue = wto_text.upper()
        if wvalue not in ("ON_EXIT", "ON_EXIT_OR_EVICT", "ON_SUCCESS"):
            raise self.fail("when_to_transfer_output must be ON_EXIT, ON_EXIT_OR_EVICT or ON_SUCCESS, "
                            f"not {wto_text!r}", wto_line)
        if value == "NO" and wto is not None and wvalue != "ON_EXIT":
            raise self.fail("when_to_transfer_output needs should_transfer_files = YES or IF_NEEDED",
                            wto[1] if wto else None)
        if value != "NO":
            self.ad["WhenToTransferOutput"] = quote(wvalue)
        elif (tif := self.first("transfer_input_files")) is not None:
            raise self.fail("transfer_input_files needs should_transfer_files = YES or IF_NEEDED, not NO", tif[1])
        if value != "YES":  # only needed when a shared filesystem may stand in for transfer
            fsd = self.ctx.config_get("FILESYSTEM_DOMAIN") or socket.getfqdn()
            self.ad["FileSystemDomain"] = quote(fsd)
        for cmd, attr in (("transfer_input_files", "TransferInput"),
                          ("transfer_output_files", "TransferOutput"),
                          ("transfer_output_remaps", "TransferOutputRemaps")):
            got = self.first(cmd)
            if cmd == "transfer_input_files" and self.container_image_input:
                files = [got[0]] if got else []
                got = (",".join([*files, self.container_image_input]), got[1] if got else 0)
            if got is None:
                continue
            if cmd == "transfer_output_remaps":
                self.ad[attr] = quote(got[0].strip('"'))
                continue
            files = [f.strip() for f in got[0].split(",") if f.strip()]
            self.ad[attr] = quote(",".join(files))
            if cmd == "transfer_input_files":
                self.input_files.extend(files)
        # DiskUsage: the executable plus every input file, each rounded up to a KiB.
        disk = self.exe_kib + sum(_kib(os.path.join(self.iwd, f)) or 0 for f in self.input_files)
        self.ad["DiskUsage"] = str(disk)
        self.ad["TransferInputSizeMB"] = str(disk // 1024)
        # The user's own estimates (KiB, or K/M/G/T): what the default requests are computed from.
        for command, attr in (("image_size", "ImageSize"), ("disk_usage", "DiskUsage")):
            got = self.first(command)
            if got is not None:
                self.ad[attr] = self._sized(attr, got, _DISK_UNITS, "")
                if command == "disk_usage":
                    self.ad.pop("TransferInputSizeMB", None)  # as condor_submit does

    def _resources(self) -> None:
        count = self.first("machine_count")
        if count is not None and count[0] != "1":
            # condor_submit reads it in the parallel universe only (which htcd refuses) and ignores
            # it elsewhere, as htcd does: said aloud, since a job asking for more gets one slot
            self.warnings.append(f"machine_count = {count[0]} is ignored outside the parallel universe "
                                 "(as condor_submit does): the job runs on one slot")
        value, line = self.or_default("request_cpus")
        self.ad["RequestCpus"] = self._number_or_expr(self.what("RequestCpus", "request_cpus", line),
                                                      (value, line), "1")
        value, line = self.or_default("request_memory")
        self.ad["RequestMemory"] = self._sized(self.what("RequestMemory", "request_memory", line),
                                               (value, line), _MEM_UNITS, "")
        value, line = self.or_default("request_disk")
        self.ad["RequestDisk"] = self._sized(self.what("RequestDisk", "request_disk", line),
                                             (value, line), _DISK_UNITS, "")
        self.extra_requests: list[str] = []
        gpus = self.first("request_gpus")
        if gpus is not None:
            self.ad["RequestGPUs"] = self._number_or_expr("RequestGPUs", gpus, "0")
            self.extra_requests.append("GPUs")
        self.reads.add(REQUEST_MARK)
        for name, value, line in self.request_settings():
            attr = "Request" + name  # spelled as written, like condor_submit
            self.ad[attr] = self._number_or_expr(attr, (value, line), "0")
            self.extra_requests.append(name)

    def _number_or_expr(self, attr: str, got: tuple[str, int | None] | None, default: str) -> str:
        if got is None:
            return default
        value, line = got
        if re.fullmatch(r"\d+", value):
            return str(int(value))
        return self.expr(attr, value, line)

    def _sized(self, attr: str, got: tuple[str, int | None] | None, units: Mapping[str, float],
               default: str) -> str:
        if got is None:
            return default
        value, line = got
        try:
            converted = convert_size(value, units)
        except ValueError as err:
            raise self.fail(f"{attr}: {err}", line) from err
        return converted if converted is not None else self.expr(attr, value, line)

    def _policy(self) -> None:
        for cmd, attr in (("periodic_hold", "PeriodicHold"), ("periodic_release", "PeriodicRelease"),
                          ("periodic_remove", "PeriodicRemove"), ("on_exit_hold", "OnExitHold")):
            got = self.first(cmd)
            if got is not None:
                self.ad[attr] = self.expr(attr, got[0], got[1])
        # The reason and subcode a policy hold records (expressions, evaluated when it fires).
        for cmd, attr in (("periodic_hold", "PeriodicHold"), ("on_exit_hold", "OnExitHold")):
            for suffix, name in (("_reason", "Reason"), ("_subcode", "SubCode")):
                got = self.first(cmd + suffix)
                if got is not None:
                    self.ad[attr + name] = self.expr(attr + name, got[0], got[1])
        oer = self.first("on_exit_remove")
        oer_text = self.expr("OnExitRemove", oer[0], oer[1]) if oer else None
        oer_text = jobpolicy.retries(self, oer_text)
        if oer_text is not None:
            self.ad["OnExitRemove"] = oer_text
        jobpolicy.simple_attributes(self)

    def _misc(self) -> None:
        got = self.first("priority")
        if got is not None:
            if not re.fullmatch(r"[-+]?\d+", got[0]):
                raise self.fail(f"priority must be a whole number, not {got[0]!r}", got[1])
            self.ad["JobPrio"] = str(int(got[0]))
        value, line = self.or_default("notification")
        if value.lower() not in NOTIFICATION:
            raise self.fail(f"{self.what('notification', 'notification', line)} must be one of Never, Always, "
                            f"Complete, Error, not {value!r}", line)
        self.ad["JobNotification"] = str(NOTIFICATION[value.lower()])
        if NOTIFICATION[value.lower()] != 0 and self.first("notification") is not None:
            self.warnings.append(f"notification = {value} is recorded in the job, but htcd sends no email: "
                                 "no mail will be sent when the job ends")
        got = self.first("notify_user")
        if got is not None:
            self.ad["NotifyUser"] = quote(got[0])
        group = self.first("accounting_group")
        nice = jobpolicy.nice_user(self, group is not None)
        if group is None and nice:
            group = ("nice-user", nice[1])
        if group is not None:
            user = self.first("accounting_group_user")
            uname = user[0] if user else self.ctx.owner
            self.ad["AcctGroup"] = quote(group[0])
            self.ad["AcctGroupUser"] = quote(uname)
            self.ad["AccountingGroup"] = quote(f"{group[0]}.{uname}")
        got = self.first("concurrency_limits")
        expr = self.first("concurrency_limits_expr")
        if got is not None:
            limits = sorted({x.strip().lower() for x in got[0].split(",") if x.strip()})
            self.ad["ConcurrencyLimits"] = quote(",".join(limits))
        elif expr is not None:  # the negotiator evaluates it against the job
            self.ad["ConcurrencyLimits"] = self.expr("ConcurrencyLimits", expr[0], expr[1])
        got = self.first("batch_name")
        if got is not None:
            self.ad["JobBatchName"] = quote(got[0].strip('"'))
        got = self.first("batch_id")
        if got is not None:
            self.ad["JobBatchId"] = quote(got[0].strip('"'))
        for cmd, attr in (("max_idle", "JobMaterializeMaxIdle"), ("max_materialize", "JobMaterializeLimit"),
                          ("job_lease_duration", "JobLeaseDuration")):
            got = self.first(cmd)
            if got is not None:
                if not re.fullmatch(r"\d+", got[0]):
                    raise self.fail(f"{cmd} must be a whole number, not {got[0]!r}", got[1])
                self.ad[attr] = str(int(got[0]))
        if "JobLeaseDuration" not in self.ad and self.universe not in ("scheduler", "local"):
            # no lease for a job without a remote starter; JOB_DEFAULT_LEASE_DURATION may be an expression
            value, line = self.or_default("job_lease_duration")
            self.ad["JobLeaseDuration"] = self._number_or_expr(
                self.what("JobLeaseDuration", "job_lease_duration", line), (value, line), "2400")
        got = self.first("hold")
        if got is not None and bool_value(got[0]):
            self.ad["JobStatus"] = "5"
            self.ad["HoldReason"] = quote("submitted on hold at user's request")
            self.ad["HoldReasonCode"] = "15"
        got = self.first("leave_in_queue")
        if got is not None:
            self.ad["LeaveJobInQueue"] = self.expr("LeaveJobInQueue", got[0], got[1])
        got = self.first("kill_sig")
        if got is not None:
            self.ad["KillSig"] = quote(signal_name(got[0], self.fail, got[1]))
        for cmd, attr in (("remove_kill_sig", "RemoveKillSig"), ("hold_kill_sig", "HoldKillSig")):
            got = self.first(cmd)
            if got is None:
                continue
            if self.universe not in ("scheduler", "local"):
                raise self.fail(f"{cmd}: htcd cannot honour this command in the {self.universe} universe: "
                                f"{AP_ONLY[cmd]} (only scheduler and local universe jobs get it)", got[1])
            self._set_signal(attr, cmd, got)
        self._dag_node()
        got = self.first("job_ad_information_attrs")
        if got is not None:
            self.ad["JobAdInformationAttrs"] = quote(got[0])
        got = self.first("description")
        if got is not None:
            self.ad["JobDescription"] = quote(got[0])
        got = self.first("rank")
        if got is not None:
            self.ad["Rank"] = self.expr("Rank", got[0], got[1])

    def _set_signal(self, attr: str, cmd: str, got: tuple[str, int]) -> None:
        try:
            self.ad[attr] = quote(signal_name(got[0], self.fail, got[1]))
        except SubmitError:
            raise self.fail(f"{cmd}: invalid signal {got[0]!r}", got[1]) from None

    def _dag_node(self) -> None:
        """The attributes that make a job a DAG's node: its DAG job, its node, the nodes log."""
        got = self.first("dagman_job_id")
        if got is not None:
            if not re.fullmatch(r"\d+", got[0].strip()):
                raise self.fail(f"dagman_job_id must be a cluster id (a whole number), not {got[0]!r}", got[1])
            self.ad["DAGManJobId"] = str(int(got[0]))
        got = self.first("dag_node_name")
        if got is not None:
            self.ad["DAGNodeName"] = quote(got[0])
        got = self.first("dagman_log")
        if got is not None:
            self.ad["DAGManNodesLog"] = quote(full_path(self.iwd, got[0]))

    def _config_attrs(self) -> None:
        """SUBMIT_ATTRS / SUBMIT_EXPRS: configuration values every job gets (the submit file wins)."""
        get = self.ctx.config_get
        names = [n for knob in ("SUBMIT_ATTRS", "SUBMIT_EXPRS") for n in re.split(r"[\s,]+", get(knob) or "") if n]
        for name in names:
            value = get(name)
            if value is None or not value.strip():
                continue
            try:
                check_expr(value)
            except ValueError as err:
                raise self.fail(f"configuration {name} (named in SUBMIT_ATTRS): invalid ClassAd expression "
                                f"{value!r}: {err}", None) from err
            self.ad[name] = value.strip()

    def _custom(self) -> None:
        self.reads.add(CUSTOM_MARK)
        for attr, value, line in self.custom_settings():
            if not value.strip():
                self.ad[attr] = "undefined"  # condor_submit's value for an empty +Attr / MY.Attr
                continue
            self.ad[attr] = self.expr(attr, value, line)

    def _checkpoint(self) -> None:
        """Self-checkpointing (docs/checkpoint.md): checkpoint_exit_code sets
        SuccessCheckpointExitCode and WantFTOnCheckpoint, as condor_submit does;
        transfer_checkpoint_files names the checkpoint (else the output is).  A job that asks for
        checkpoint transfers (either way) needs slots with HasSelfCheckpointTransfers."""
        self.reads.add(CUSTOM_MARK)
        got = self.first("checkpoint_exit_code")
        if got is not None:
            if not re.fullmatch(r"[-+]?\d+", got[0]):
                raise self.fail(f"checkpoint_exit_code must be a whole number, not {got[0]!r}", got[1])
            self.ad["SuccessCheckpointExitCode"] = str(int(got[0]))
            self.ad["WantFTOnCheckpoint"] = "true"
        files = self.first("transfer_checkpoint_files")
        if files is not None:
            self.ad["TransferCheckpoint"] = quote(files[0])
        self.wants_checkpoint = self.ad.get("WantFTOnCheckpoint", "").strip().lower() == "true"
        if not self.wants_checkpoint:
            return
        where = got or files
        if self.universe in ("scheduler", "local"):
            raise self.fail(f"checkpoint transfers need a job that runs on an execute point, not the "
                            f"{self.universe} universe", where[1] if where else None)
        if self.stf == "NO":
            raise self.fail("checkpoint_exit_code (WantFTOnCheckpoint) needs file transfer: htcd keeps checkpoints "
                            "in the access point's spool, so should_transfer_files must be YES or IF_NEEDED, not NO",
                            where[1] if where else None)

    def _requirements(self) -> None:
        universe = self.universe
        got = self.first("requirements")
        user = self.expr("Requirements", got[0], got[1]) if got else ""
        clauses: list[str] = []
        if user:
            clauses.append(f"({user})")
        if not _mentions(user, "Arch"):
            clauses.append(f'(TARGET.Arch == "{default_arch(self.ctx.config_get)}")')
        if universe in UNIVERSE_CLAUSE:
            has = UNIVERSE_CLAUSE[universe]
            if not _mentions(user, has.split(".")[1]):
                clauses.append(has)
        net = self.first("docker_network_type") if universe == "docker" else None
        if net is not None and net[0].lower() not in ("none", "host"):  # a named network the slot must offer
            clauses.append("StringListMember(My.DockerNetworkType,TARGET.DockerNetworks)")
        if universe not in UNIVERSES and not _mentions(user, "StarterAbilityList"):
            clauses.append(plugin_universe_clause(universe))
        if universe == "container":
            clauses.extend(c for c in self.container_clauses if not _mentions(user, c.split(".")[1]))
        elif universe != "docker" and not _mentions(user, r"OpSys\w*"):  # OpSysAndVer, OpSysName... too
            clauses.append(f'(TARGET.OpSys == "{default_opsys(self.ctx.config_get)}")')
        # As condor_submit: Disk and Memory are checked against the request whatever the user wrote,
        # unless the request is a number too small to matter (Disk 0, Memory 1 MiB or less); Cpus
        # unless it is at most 1 or the user's expression tests Cpus.
        disk, mem, cpus = (self.ad.get(a) for a in ("RequestDisk", "RequestMemory", "RequestCpus"))
        if disk and not _at_most(disk, 0):
            clauses.append("(TARGET.Disk >= RequestDisk)")
        if mem and not _at_most(mem, 1):
            clauses.append("(TARGET.Memory >= RequestMemory)")
        if cpus and not _at_most(cpus, 1) and not _mentions(user, "Cpus"):
            clauses.append("(TARGET.Cpus >= RequestCpus)")
        for res in self.extra_requests:
            if not _mentions(user, res):
                clauses.append(f"(TARGET.{res} >= Request{res})")
        if universe not in ("scheduler", "local") and not _mentions(user, "HasFileTransfer"):
            own_fsd = _mentions(user, "FileSystemDomain")  # the user's own domain test replaces ours
            if self.stf == "YES" or (self.stf == "IF_NEEDED" and own_fsd):
                clauses.append("(TARGET.HasFileTransfer)")
            elif self.stf == "IF_NEEDED":
                clauses.append("((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))")
            elif not own_fsd:
                clauses.append("(TARGET.FileSystemDomain == MY.FileSystemDomain)")
        clauses.extend(jobpolicy.deferral(self))
        if getattr(self, "wants_checkpoint", False) and not _mentions(user, "HasSelfCheckpointTransfers"):
            clauses.append("TARGET.HasSelfCheckpointTransfers")
        self.ad["Requirements"] = " && ".join(clauses)


def signal_name(value: str, fail: Callable[[str, int | None], SubmitError], line: int | None) -> str:
    """``SIGQUIT`` for ``3``, ``quit`` or ``sigquit``, as condor_submit names a signal; unknown is an error."""
    text = value.strip().upper()
    try:
        sig = signal.Signals(int(text)) if text.isdigit() else signal.Signals[text if text.startswith("SIG") else "SIG" + text]
    except (ValueError, KeyError):
        raise fail(f"kill_sig: invalid signal {value!r}", line) from None
    return sig.name


def full_path(base: str, path: str) -> str:
    """``path`` against ``base`` as condor_submit joins them: not normalized (``/d/./x`` stays)."""
    return path if os.path.isabs(path) else base.rstrip("/") + "/" + path


def join_canonical_env(env: Mapping[str, str]) -> str:
    """Environment attribute text: NAME=value entries sorted by name, new-syntax quoting."""
    return " ".join(
        f"{name}={join_canonical([value]) if value else ''}" for name, value in sorted(env.items())
    )
