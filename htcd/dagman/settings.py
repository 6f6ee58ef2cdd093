"""The DAGMAN_* knobs a DAGMan job runs with, from the pool config, the DAG's CONFIG file and
the command line, in HTCondor's order of precedence.

The knobs, their defaults and their legal ranges are HTCondor's: the manual
(docs/admin-manual/configuration/dagman.rst), the param table (htcd/config/param_table.tsv)
and where the two disagree, what condor_dagman reads at start-up (its own default and range).
Precedence, lowest first (docs/automated-workflows/dagman-advance-functionality.rst, "DAG
Specific Configuration"): the defaults, the pool configuration (with its ``_CONDOR_``
environment overrides, which ``config_get`` already applies), the DAG's CONFIG file, then
condor_submit_dag options given as ``overrides``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from htcd.classad import ClassAd, ClassAdSyntaxError, parse_expr
from htcd.config import ConfigError, load
from htcd.dagman.errors import DagError, DagWarning, Origin

_TRUE = {"true", "yes", "t", "y", "1", "on"}
_FALSE = {"false", "no", "f", "n", "0", "off"}
_INT_MAX = 2**31 - 1


class Knob(NamedTuple):
    """One knob: its type, HTCondor's default, and the range condor_dagman clamps it to."""

    type: type
    default: object
    low: int | None = None
    high: int | None = None


#: Every DAGMAN_* knob of the manual and the param table, by attribute name (the knob's name in
#: lower case without ``DAGMAN_``).
KNOBS: dict[str, Knob] = {
    "abort_duplicates": Knob(bool, True),
    "abort_on_scary_submit": Knob(bool, True),
    "aggressive_submit": Knob(bool, False),
    "allow_any_node_name_characters": Knob(bool, False),
    "allow_events": Knob(int, 114),
    "always_run_post": Knob(bool, False),
    "auto_rescue": Knob(bool, True),
    "check_queue_interval": Knob(int, 28800),
    "condor_rm_exe": Knob(str, "$(BIN)/condor_rm"),
    "condor_submit_exe": Knob(str, "$(BIN)/condor_submit"),
    "config_file": Knob(str, ""),
    "debug": Knob(str, ""),
    "debug_cache_enable": Knob(bool, False),
    "debug_cache_size": Knob(int, 5 * 1024 * 1024, 0, _INT_MAX),
    "default_append_vars": Knob(bool, False),
    "default_node_log": Knob(str, "@(DAG_DIR)/@(DAG_FILE).nodes.log"),
    "default_priority": Knob(int, 0),
    "disable_admin_throttle_limiting": Knob(bool, False),
    "disable_port": Knob(bool, False),
    "generate_subdag_submits": Knob(bool, True),
    "hold_claim_time": Knob(int, 20),
    "inherit_attrs": Knob(str, ""),
    "inherit_attrs_prefix": Knob(str, ""),
    "insert_sub_file": Knob(str, ""),
    "log_on_nfs_is_error": Knob(bool, False),
    "manager_job_append_getenv": Knob(str, ""),
    "max_hold_scripts": Knob(int, 20, 0, _INT_MAX),
    "max_job_holds": Knob(int, 100),
    "max_jobs_idle": Knob(int, 1000, 0, _INT_MAX),
    "max_jobs_submitted": Knob(int, 0, 0, _INT_MAX),
    "max_post_scripts": Knob(int, 20, 0, _INT_MAX),
    "max_pre_scripts": Knob(int, 20, 0, _INT_MAX),
    "max_rescue_num": Knob(int, 100, 0, 999),
    "max_submit_attempts": Knob(int, 6, 1, 16),
    "max_submits_per_interval": Knob(int, 100, 1, _INT_MAX),
    "metrics_file_version": Knob(int, 2, 1, 2),
    "munge_node_names": Knob(bool, True),
    "node_job_failure_tolerance": Knob(int, 0, 0, _INT_MAX),
    "node_record_info": Knob(str, ""),
    "on_exit_remove": Knob(str, "(ExitSignal =?= 11 || (ExitCode =!= UNDEFINED && ExitCode >=0 && ExitCode <= 2))"),
    "pending_report_interval": Knob(int, 600),
    "print_job_table_interval": Knob(int, 900, 0, _INT_MAX),
    "produce_job_credentials": Knob(bool, True),
    "prohibit_multi_jobs": Knob(bool, False),
    "put_failed_jobs_on_hold": Knob(bool, False),
    "queue_update_interval": Knob(float, 300.0, 1, None),
    "record_machine_attrs": Knob(str, ""),
    "remove_job_list_on_failure": Knob(bool, True),
    "remove_jobs_after_limit_change": Knob(bool, False),
    "remove_node_jobs": Knob(bool, True),
    "report_graph_metrics": Knob(bool, False),
    "reset_retries_upon_rescue": Knob(bool, True),
    "retry_node_first": Knob(bool, False),
    "retry_submit_first": Knob(bool, True),
    "startup_cycle_detect": Knob(bool, False),
    "submit_delay": Knob(int, 0, 0, None),
    "submit_depth_first": Knob(bool, False),
    "suppress_job_logs": Knob(bool, False),
    "suppress_notification": Knob(bool, False),
    "use_direct_submit": Knob(bool, True),
    "use_join_nodes": Knob(bool, True),
    "use_old_file_parser": Knob(bool, False),
    "use_shared_port": Knob(bool, False),
    "use_strict": Knob(int, 1, 0, 3),
    "user_log_scan_interval": Knob(int, 5, 1, _INT_MAX),
    "verbosity": Knob(int, 3, 0, 7),
    "write_partial_rescue": Knob(bool, True),
}

#: Knobs htcd's DAGMan reads but does not act on, with the reason; the engine warns when one is
#: set to other than its default.
UNHONOURED: dict[str, str] = {
    "abort_duplicates": "a second DAGMan on a DAG whose lock file names a live DAGMan is always refused",
    "abort_on_scary_submit": "node jobs are submitted to the schedd directly; their ids are never guessed",
    "aggressive_submit": "the submit cycle always stops after max_submits_per_interval",
    "allow_any_node_name_characters": "the DAG parser refuses '+' in node names regardless",
    "allow_events": "htcd's event log has no bad-event classes to allow",
    "condor_rm_exe": "node jobs are removed through the schedd, no condor_rm is run",
    "condor_submit_exe": "node jobs are submitted through the schedd, no condor_submit is run",
    "debug": "dagman.out is written at DAGMAN_VERBOSITY; the debug categories are not read",
    "debug_cache_enable": "dagman.out is not cached",
    "debug_cache_size": "dagman.out is not cached",
    "disable_port": "htcd's DAGMan opens no command port",
    "hold_claim_time": "claims are not held after a node job ends (KeepClaimIdle is not set)",
    "inherit_attrs": "attributes of the DAGMan job are not passed to node jobs",
    "inherit_attrs_prefix": "attributes of the DAGMan job are not passed to node jobs",
    "log_on_nfs_is_error": "the node log's file system is not checked",
    "manager_job_append_getenv": "the DAGMan job's getenv is fixed by htcd submit_dag",
    "node_job_failure_tolerance": "a node whose job has any failed proc fails (TOLERANCE is not honoured)",
    "produce_job_credentials": "htcd produces no job credentials",
    "put_failed_jobs_on_hold": "a failed node job is not resubmitted on hold",
    "record_machine_attrs": "machine attributes are not added to node jobs",
    "remove_job_list_on_failure": "a failed node's other procs are left to finish",
    "remove_jobs_after_limit_change": "jobs are not removed when a throttle is lowered",
    "submit_delay": "node submits are not spaced out: the nodes ready at once go in one submit call",
    "use_direct_submit": "htcd always submits node jobs to the schedd directly",
    "user_log_scan_interval": "the nodes log is followed every 50 ms",
    "use_join_nodes": "no join nodes are made; the many-to-many edges are kept",
    "use_old_file_parser": "htcd has one DAG parser",
    "use_shared_port": "htcd has no shared port daemon",
    "write_partial_rescue": "rescue DAGs are always partial (a full rescue DAG is not written)",
}

#: The knobs htcd's DAGMan acts on, by their names (every knob of KNOBS not in UNHONOURED; a test
#: keeps the two in step).  Spelled out so that the scan behind the param table's ``use`` column
#: (htcd/config/knobscan.py) sees them: settings are read as ``"DAGMAN_" + name``.
HONOURED_KNOBS = (
    'DAGMAN_ALWAYS_RUN_POST', 'DAGMAN_AUTO_RESCUE', 'DAGMAN_CHECK_QUEUE_INTERVAL', 'DAGMAN_CONFIG_FILE',
    'DAGMAN_DEFAULT_APPEND_VARS', 'DAGMAN_DEFAULT_NODE_LOG', 'DAGMAN_DEFAULT_PRIORITY',
    'DAGMAN_DISABLE_ADMIN_THROTTLE_LIMITING', 'DAGMAN_GENERATE_SUBDAG_SUBMITS', 'DAGMAN_INSERT_SUB_FILE',
    'DAGMAN_MAX_HOLD_SCRIPTS', 'DAGMAN_MAX_JOBS_IDLE', 'DAGMAN_MAX_JOBS_SUBMITTED', 'DAGMAN_MAX_JOB_HOLDS',
    'DAGMAN_MAX_POST_SCRIPTS', 'DAGMAN_MAX_PRE_SCRIPTS', 'DAGMAN_MAX_RESCUE_NUM',
    'DAGMAN_MAX_SUBMITS_PER_INTERVAL', 'DAGMAN_MAX_SUBMIT_ATTEMPTS', 'DAGMAN_METRICS_FILE_VERSION',
    'DAGMAN_MUNGE_NODE_NAMES', 'DAGMAN_NODE_RECORD_INFO', 'DAGMAN_ON_EXIT_REMOVE',
    'DAGMAN_PENDING_REPORT_INTERVAL', 'DAGMAN_PRINT_JOB_TABLE_INTERVAL', 'DAGMAN_PROHIBIT_MULTI_JOBS',
    'DAGMAN_QUEUE_UPDATE_INTERVAL', 'DAGMAN_REMOVE_NODE_JOBS', 'DAGMAN_REPORT_GRAPH_METRICS',
    'DAGMAN_RESET_RETRIES_UPON_RESCUE', 'DAGMAN_RETRY_NODE_FIRST', 'DAGMAN_RETRY_SUBMIT_FIRST',
    'DAGMAN_STARTUP_CYCLE_DETECT', 'DAGMAN_SUBMIT_DEPTH_FIRST', 'DAGMAN_SUPPRESS_JOB_LOGS',
    'DAGMAN_SUPPRESS_NOTIFICATION', 'DAGMAN_USE_STRICT', 'DAGMAN_VERBOSITY',
)

#: The throttles the pool configuration bounds, with the default condor_dagman takes as the
#: pool's bound when the pool does not set one (MAX_SUBMITS_PER_INTERVAL's is 1000 there).
ADMIN_THROTTLE_DEFAULTS = {"max_jobs_idle": 1000, "max_jobs_submitted": 0, "max_pre_scripts": 20,
                           "max_hold_scripts": 20, "max_post_scripts": 20, "max_submits_per_interval": 1000,
                           "user_log_scan_interval": 5}

#: Knobs other than DAGMAN_* that a DAG's CONFIG file may set (DaemonCore's logging of the
#: DAGMan process, as the manual's note in "DAG Specific Configuration" says).
CONFIG_FILE_ALSO = {"all_debug", "max_dagman_log", "dagman_log", "max_num_dagman_log",
                    "touch_log_interval", "submit_send_reschedule"}


@dataclass(slots=True)
class DagmanSettings:
    """The values condor_dagman runs with; ``warnings`` say what was clamped or not honoured."""

    abort_duplicates: bool = True
    abort_on_scary_submit: bool = True
    aggressive_submit: bool = False
    allow_any_node_name_characters: bool = False
    allow_events: int = 114
    always_run_post: bool = False
    auto_rescue: bool = True
    check_queue_interval: int = 28800
    condor_rm_exe: str = "$(BIN)/condor_rm"
    condor_submit_exe: str = "$(BIN)/condor_submit"
    config_file: str = ""
    debug: str = ""
    debug_cache_enable: bool = False
    debug_cache_size: int = 5 * 1024 * 1024
    default_append_vars: bool = False
    default_node_log: str = "@(DAG_DIR)/@(DAG_FILE).nodes.log"
    default_priority: int = 0
    disable_admin_throttle_limiting: bool = False
    disable_port: bool = False
    generate_subdag_submits: bool = True
    hold_claim_time: int = 20
    inherit_attrs: str = ""
    inherit_attrs_prefix: str = ""
    insert_sub_file: str = ""
    log_on_nfs_is_error: bool = False
    manager_job_append_getenv: str = ""
    max_hold_scripts: int = 20
    max_job_holds: int = 100
    max_jobs_idle: int = 1000
    max_jobs_submitted: int = 0
    max_post_scripts: int = 20
    max_pre_scripts: int = 20
    max_rescue_num: int = 100
    max_submit_attempts: int = 6
    max_submits_per_interval: int = 100
    metrics_file_version: int = 2
    munge_node_names: bool = True
    node_job_failure_tolerance: int = 0
    node_record_info: str = ""
    on_exit_remove: str = "(ExitSignal =?= 11 || (ExitCode =!= UNDEFINED && ExitCode >=0 && ExitCode <= 2))"
    pending_report_interval: int = 600
    print_job_table_interval: int = 900
    produce_job_credentials: bool = True
    prohibit_multi_jobs: bool = False
    put_failed_jobs_on_hold: bool = False
    queue_update_interval: float = 300.0
    record_machine_attrs: str = ""
    remove_job_list_on_failure: bool = True
    remove_jobs_after_limit_change: bool = False
    remove_node_jobs: bool = True
    report_graph_metrics: bool = False
    reset_retries_upon_rescue: bool = True
    retry_node_first: bool = False
    retry_submit_first: bool = True
    startup_cycle_detect: bool = False
    submit_delay: int = 0
    submit_depth_first: bool = False
    suppress_job_logs: bool = False
    suppress_notification: bool = False
    use_direct_submit: bool = True
    use_join_nodes: bool = True
    use_old_file_parser: bool = False
    use_shared_port: bool = False
    use_strict: int = 1
    user_log_scan_interval: int = 5
    verbosity: int = 3
    write_partial_rescue: bool = True
    #: Where each knob that is not at its default was set: "pool", "file:line" or "command line".
    sources: dict[str, str] = field(default_factory=dict)
    warnings: list[DagWarning] = field(default_factory=list)

    @classmethod
    def load(cls, config_get: Callable[[str], str | None], dag_config_file: str | None,
             overrides: dict[str, str]) -> DagmanSettings:
        """Defaults < pool config (``config_get("DAGMAN_X")``) < the DAG's CONFIG file < ``overrides``
        (``{"DAGMAN_MAX_JOBS_IDLE": "10"}``, from condor_submit_dag's options).

        Raises DagError naming the knob (and the file and line) for a value of the wrong type,
        an unknown override, or an unreadable CONFIG file."""
        settings = cls()
        for attr in KNOBS:
            value = config_get("DAGMAN_" + attr.upper())
            if value is not None and value.strip() != "":
                settings._set(attr, value, "pool", None)
        admin = None if settings.disable_admin_throttle_limiting else {
            attr: getattr(settings, attr) if attr in settings.sources else default
            for attr, default in ADMIN_THROTTLE_DEFAULTS.items()}
        if dag_config_file:
            settings.config_file = dag_config_file
            for attr, value, origin in _read_config_file(dag_config_file, settings.warnings):
                settings._set(attr, value, f"{origin.file}:{origin.line}", origin)
        for name, value in overrides.items():
            known = _attribute(name)
            if known is None:
                raise DagError(f"{name} is not a DAGMan configuration knob")
            settings._set(known, value, "command line", None)
        if admin is not None:
            settings._limit_to_admin(admin)
        for attr, reason in UNHONOURED.items():
            if attr in settings.sources and getattr(settings, attr) != KNOBS[attr].default:
                where = settings.sources[attr]
                settings.warnings.append(DagWarning(
                    f"DAGMAN_{attr.upper()} (set in {where}) is not honoured by htcd's DAGMan: {reason}"))
        return settings

    def _set(self, attr: str, text: str, where: str, origin: Origin | None) -> None:
        knob = KNOBS[attr]
        name = "DAGMAN_" + attr.upper()
        value = _convert(name, knob, text.strip(), origin)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            clamped = _clamp(value, knob)
            if clamped != value:
                self.warnings.append(DagWarning(
                    f"{name} = {text.strip()} is outside {_range(knob)}; {clamped} is used", origin))
                value = clamped
        setattr(self, attr, value)
        self.sources[attr] = where

    def _limit_to_admin(self, admin: dict[str, int]) -> None:
        """The throttles set by the DAG's CONFIG file or the command line may only tighten the
        pool's (unless the pool's is 0, unlimited); the scan interval may not go below the pool's
        (DAGMAN_DISABLE_ADMIN_THROTTLE_LIMITING, as condor_dagman combines them)."""
        for attr, limit in admin.items():
            mine = getattr(self, attr)
            if attr == "user_log_scan_interval":
                if mine < limit:
                    self._admin_warning(attr, mine, limit, "below")
                    self.user_log_scan_interval = limit
            elif limit > 0 and (mine > limit or mine <= 0):
                if attr in self.sources and self.sources[attr] != "pool":
                    self._admin_warning(attr, mine, limit, "above")
                setattr(self, attr, limit)

    def _admin_warning(self, attr: str, mine: int, limit: int, side: str) -> None:
        what = "unlimited (0)" if mine <= 0 else str(mine)
        self.warnings.append(DagWarning(
            f"DAGMAN_{attr.upper()} = {what} (set in {self.sources.get(attr, 'the defaults')}) is {side} the "
            f"pool's limit {limit}; {limit} is used (DAGMAN_DISABLE_ADMIN_THROTTLE_LIMITING allows it)"))

    def knob(self, name: str) -> object:
        """The value of knob ``name`` (``DAGMAN_MAX_JOBS_IDLE`` or ``max_jobs_idle``)."""
        attr = _attribute(name)
        if attr is None:
            raise KeyError(name)
        return getattr(self, attr)


def _attribute(name: str) -> str | None:
    key = name.strip().lower()
    if key.startswith("dagman_"):
        key = key[len("dagman_"):]
    return key if key in KNOBS else None


def _convert(name: str, knob: Knob, text: str, origin: Origin | None) -> object:
    """As HTCondor's param_boolean/param_integer/param_double: a literal, or a ClassAd
    expression of constants that gives one (``5*1024*1024``)."""
    if knob.type is str:
        return text
    if knob.type is bool:
        low = text.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        value = _constant(text)
        if isinstance(value, bool):
            return value
        raise DagError(f"{name} = {text}: not a boolean (true or false)", origin)
    try:
        return int(text, 10) if knob.type is int else float(text)
    except ValueError:
        pass
    value = _constant(text)
    if knob.type is int and isinstance(value, (int, float)) and not isinstance(value, bool) \
            and float(value).is_integer():
        return int(value)
    if knob.type is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise DagError(f"{name} = {text}: not {'an integer' if knob.type is int else 'a number'}", origin)


def _constant(text: str) -> object:
    """The value of a ClassAd expression without references, or None."""
    try:
        return parse_expr(text).eval(ClassAd())
    except (ClassAdSyntaxError, ValueError, TypeError):
        return None


def _clamp(value: float, knob: Knob) -> float:
    if knob.low is not None and value < knob.low:
        return type(value)(knob.low)
    if knob.high is not None and value > knob.high:
        return type(value)(knob.high)
    return value


def _range(knob: Knob) -> str:
    if knob.high is None or knob.high == _INT_MAX:
        return f"its range ({knob.low} or more)"
    return f"its range ({knob.low} to {knob.high})"


def _read_config_file(path: str, warnings: list[DagWarning]) -> list[tuple[str, str, Origin]]:
    """The DAGMAN_* definitions of a DAG's CONFIG file, read with htcd's config language.

    Other knobs are warned about: condor_dagman reads the file into its configuration, where
    only DAGMan's and DaemonCore's logging knobs have an effect."""
    if not os.path.isfile(path):
        raise DagError(f"DAGMan config file {path} not found")
    try:
        cfg = load("DAGMAN", env={"HTCD_CONFIG": os.fspath(path)})
    except ConfigError as err:
        raise DagError(f"DAGMan config file {path}: {err.message}",
                       Origin(err.source or path, err.line) if err.line else None) from None
    found: list[tuple[str, str, Origin]] = []
    for entry in cfg.definitions():
        if entry.source.startswith("<"):
            continue
        origin = Origin(entry.source, entry.line)
        key = entry.name.lower()
        attr = _attribute(key) if key.startswith("dagman_") else None
        if attr is not None:
            try:
                value = cfg.get(entry.name) or ""
            except ConfigError as err:
                raise DagError(f"{entry.name}: {err.message}", origin) from None
            if value.strip():
                found.append((attr, value, origin))
        elif key.startswith("dagman_"):
            warnings.append(DagWarning(f"{entry.name} is not a DAGMan configuration knob; ignored", origin))
        elif key not in CONFIG_FILE_ALSO:
            warnings.append(DagWarning(
                f"{entry.name} in a DAG's CONFIG file has no effect: only DAGMAN_* knobs apply to DAGMan",
                origin))
    return found
