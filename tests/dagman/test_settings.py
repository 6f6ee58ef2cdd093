"""DAGMAN_* settings: HTCondor's defaults (the param table, the manual), types, ranges and the
precedence defaults < pool config < the DAG's CONFIG file < condor_submit_dag options."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from htcd.config import table
from htcd.dagman.errors import DagError
from htcd.dagman.settings import KNOBS, UNHONOURED, DagmanSettings

# Every :macro-def: of HTCondor's docs/admin-manual/configuration/dagman.rst whose name starts
# with DAGMAN_ (DAGMAN_USER_LOG_SCAN_INTERVAL is listed there as "...[NEGOTIATOR]").
MANUAL_KNOBS = ["CONFIG_FILE", "USE_OLD_FILE_PARSER", "USE_STRICT", "STARTUP_CYCLE_DETECT", "ABORT_DUPLICATES", "USE_SHARED_PORT", "USE_DIRECT_SUBMIT", "PRODUCE_JOB_CREDENTIALS", "USE_JOIN_NODES", "PUT_FAILED_JOBS_ON_HOLD", "NODE_JOB_FAILURE_TOLERANCE", "REMOVE_JOB_LIST_ON_FAILURE", "DEFAULT_APPEND_VARS", "MANAGER_JOB_APPEND_GETENV", "NODE_RECORD_INFO", "RECORD_MACHINE_ATTRS", "METRICS_FILE_VERSION", "REPORT_GRAPH_METRICS", "DISABLE_PORT", "DISABLE_ADMIN_THROTTLE_LIMITING", "MAX_JOBS_IDLE", "MAX_JOBS_SUBMITTED", "MAX_PRE_SCRIPTS", "MAX_POST_SCRIPTS", "MAX_HOLD_SCRIPTS", "REMOVE_JOBS_AFTER_LIMIT_CHANGE", "DEFAULT_PRIORITY", "SUBMIT_DEPTH_FIRST", "ALWAYS_RUN_POST", "USER_LOG_SCAN_INTERVAL", "MAX_SUBMITS_PER_INTERVAL", "MAX_SUBMIT_ATTEMPTS", "MAX_JOB_HOLDS", "HOLD_CLAIM_TIME", "SUBMIT_DELAY", "PROHIBIT_MULTI_JOBS", "GENERATE_SUBDAG_SUBMITS", "REMOVE_NODE_JOBS", "MUNGE_NODE_NAMES", "SUPPRESS_JOB_LOGS", "SUPPRESS_NOTIFICATION", "CONDOR_SUBMIT_EXE", "CONDOR_RM_EXE", "AGGRESSIVE_SUBMIT", "ABORT_ON_SCARY_SUBMIT", "AUTO_RESCUE", "MAX_RESCUE_NUM", "RESET_RETRIES_UPON_RESCUE", "RETRY_SUBMIT_FIRST", "RETRY_NODE_FIRST", "DEFAULT_NODE_LOG", "LOG_ON_NFS_IS_ERROR", "ALLOW_ANY_NODE_NAME_CHARACTERS", "ALLOW_EVENTS", "DEBUG", "VERBOSITY", "DEBUG_CACHE_ENABLE", "DEBUG_CACHE_SIZE", "PENDING_REPORT_INTERVAL", "CHECK_QUEUE_INTERVAL", "PRINT_JOB_TABLE_INTERVAL", "INSERT_SUB_FILE", "ON_EXIT_REMOVE", "INHERIT_ATTRS", "INHERIT_ATTRS_PREFIX"]


def _pool(values: dict[str, str]):
    return lambda name: values.get(name)


def test_every_knob_of_the_manual_and_the_param_table_is_a_field() -> None:
    fields = {f.name for f in dataclasses.fields(DagmanSettings)} - {"sources", "warnings"}
    in_table = {k[len("dagman_"):] for k in table() if k.startswith("dagman_")}
    assert {k.lower() for k in MANUAL_KNOBS} | in_table <= fields
    assert fields == set(KNOBS)
    assert set(UNHONOURED) <= set(KNOBS)


def test_defaults_are_the_param_tables() -> None:
    s = DagmanSettings()
    checked = 0
    for key, param in table().items():
        if not key.startswith("dagman_") or param.default in ("", "-", None):
            continue
        attr = key[len("dagman_"):]
        value = getattr(s, attr)
        if param.type == "bool":
            assert value is (param.default == "true"), attr
        elif param.type == "int":
            assert value == eval(param.default, {}), attr  # "5*1024*1024"
        else:
            assert str(value) == param.default, attr
        checked += 1
    assert checked >= 50
    # Defaults the manual states and the param table lacks.
    assert (s.metrics_file_version, s.node_job_failure_tolerance, s.print_job_table_interval) == (2, 0, 900)
    assert (s.remove_job_list_on_failure, s.produce_job_credentials, s.use_old_file_parser) == (True, True, False)
    assert (s.max_jobs_idle, s.max_jobs_submitted, s.max_pre_scripts, s.max_post_scripts) == (1000, 0, 20, 20)
    assert (s.retry_submit_first, s.retry_node_first, s.max_submit_attempts, s.auto_rescue) == (True, False, 6, True)
    assert DagmanSettings.load(_pool({}), None, {}) == DagmanSettings()


def test_precedence(tmp_path: Path) -> None:
    conf = tmp_path / "dagman.conf"
    conf.write_text("# File: dagman.conf\nDAGMAN_MAX_JOBS_IDLE = 10\nDAGMAN_MAX_PRE_SCRIPTS = $(DAGMAN_MAX_JOBS_IDLE)\n")
    pool = _pool({"DAGMAN_MAX_JOBS_IDLE": "50", "DAGMAN_MAX_POST_SCRIPTS": "7", "DAGMAN_SUBMIT_DEPTH_FIRST": "True"})
    s = DagmanSettings.load(pool, str(conf), {"DAGMAN_MAX_PRE_SCRIPTS": "3"})
    assert (s.max_jobs_idle, s.max_post_scripts, s.max_pre_scripts, s.submit_depth_first) == (10, 7, 3, True)
    assert s.sources["max_jobs_idle"] == f"{conf}:2"
    assert s.sources["max_post_scripts"] == "pool"
    assert s.sources["max_pre_scripts"] == "command line"
    assert s.config_file == str(conf)
    assert s.knob("DAGMAN_MAX_JOBS_IDLE") == 10 and s.knob("max_post_scripts") == 7


def test_bad_values_name_the_knob_file_and_line(tmp_path: Path) -> None:
    conf = tmp_path / "dagman.conf"
    conf.write_text("DAGMAN_MAX_JOBS_IDLE = 10\n\nDAGMAN_AUTO_RESCUE = maybe\n")
    with pytest.raises(DagError) as err:
        DagmanSettings.load(_pool({}), str(conf), {})
    assert str(err.value) == f"{conf}:3: DAGMAN_AUTO_RESCUE = maybe: not a boolean (true or false)"
    with pytest.raises(DagError, match="DAGMAN_MAX_JOBS_IDLE = lots: not an integer"):
        DagmanSettings.load(_pool({"DAGMAN_MAX_JOBS_IDLE": "lots"}), None, {})
    with pytest.raises(DagError, match="DAGMAN_QUEUE_UPDATE_INTERVAL = x: not a number"):
        DagmanSettings.load(_pool({}), None, {"dagman_queue_update_interval": "x"})
    with pytest.raises(DagError, match="DAGMAN_NO_SUCH is not a DAGMan configuration knob"):
        DagmanSettings.load(_pool({}), None, {"DAGMAN_NO_SUCH": "1"})
    with pytest.raises(DagError, match="not found"):
        DagmanSettings.load(_pool({}), str(tmp_path / "missing.conf"), {})


def test_out_of_range_values_are_clamped_with_a_warning() -> None:
    s = DagmanSettings.load(_pool({"DAGMAN_MAX_SUBMIT_ATTEMPTS": "40", "DAGMAN_SUBMIT_DELAY": "-3",
                                   "DAGMAN_MAX_RESCUE_NUM": "1000"}), None, {})
    assert (s.max_submit_attempts, s.submit_delay, s.max_rescue_num) == (16, 0, 999)
    texts = [str(w) for w in s.warnings]
    assert "Warning: DAGMAN_MAX_SUBMIT_ATTEMPTS = 40 is outside its range (1 to 16); 16 is used" in texts
    assert "Warning: DAGMAN_SUBMIT_DELAY = -3 is outside its range (0 or more); 0 is used" in texts


def test_config_file_other_knobs_and_unhonoured_ones_are_warned_about(tmp_path: Path) -> None:
    conf = tmp_path / "dagman.conf"
    conf.write_text("NEGOTIATOR_INTERVAL = 5\nALL_DEBUG = D_FULLDEBUG\nDAGMAN_BOGUS = 1\n"
                    "DAGMAN_USE_JOIN_NODES = False\nDAGMAN_MAX_JOBS_IDLE = 10\n")
    s = DagmanSettings.load(_pool({"DAGMAN_ABORT_DUPLICATES": "true"}), str(conf), {})
    texts = [str(w) for w in s.warnings]
    assert texts[0] == (f"{conf}:1: Warning: NEGOTIATOR_INTERVAL in a DAG's CONFIG file has no effect: "
                        "only DAGMAN_* knobs apply to DAGMan")
    assert texts[1] == f"{conf}:3: Warning: DAGMAN_BOGUS is not a DAGMan configuration knob; ignored"
    assert any("DAGMAN_USE_JOIN_NODES (set in " in t and "not honoured" in t for t in texts)
    # Set to its default: nothing to warn about; ALL_DEBUG is allowed in the file.
    assert not any("ABORT_DUPLICATES" in t or "ALL_DEBUG" in t for t in texts)
    assert len(texts) == 3


def test_user_throttles_only_tighten_the_pools(tmp_path: Path) -> None:
    """DAGMAN_DISABLE_ADMIN_THROTTLE_LIMITING (default False): the CONFIG file and the command
    line may lower a throttle the pool sets (or defaults), not raise it, unless the pool's is 0."""
    conf = tmp_path / "dagman.conf"
    conf.write_text("DAGMAN_MAX_PRE_SCRIPTS = 50\nDAGMAN_USER_LOG_SCAN_INTERVAL = 1\n")
    pool = _pool({"DAGMAN_MAX_JOBS_IDLE": "100", "DAGMAN_USER_LOG_SCAN_INTERVAL": "2"})
    s = DagmanSettings.load(pool, str(conf), {"DAGMAN_MAX_JOBS_IDLE": "500", "DAGMAN_MAX_JOBS_SUBMITTED": "9",
                                              "DAGMAN_MAX_POST_SCRIPTS": "0"})
    assert (s.max_jobs_idle, s.max_pre_scripts, s.max_post_scripts, s.max_jobs_submitted) == (100, 20, 20, 9)
    assert s.user_log_scan_interval == 2
    texts = [str(w) for w in s.warnings]
    assert ("Warning: DAGMAN_MAX_JOBS_IDLE = 500 (set in command line) is above the pool's limit 100; 100 is used "
            "(DAGMAN_DISABLE_ADMIN_THROTTLE_LIMITING allows it)") in texts
    assert any(t.startswith("Warning: DAGMAN_MAX_POST_SCRIPTS = unlimited (0)") for t in texts)
    assert any(t.startswith("Warning: DAGMAN_USER_LOG_SCAN_INTERVAL = 1 (set in ") and "below" in t for t in texts)
    free = DagmanSettings.load(_pool({"DAGMAN_DISABLE_ADMIN_THROTTLE_LIMITING": "true"}), str(conf),
                               {"DAGMAN_MAX_JOBS_IDLE": "5000"})
    assert (free.max_jobs_idle, free.max_pre_scripts, free.user_log_scan_interval) == (5000, 50, 1)


def test_values_may_be_constant_expressions_as_in_htcondor() -> None:
    s = DagmanSettings.load(_pool({"DAGMAN_DEBUG_CACHE_SIZE": "5*1024*1024", "DAGMAN_AUTO_RESCUE": "1 == 2",
                                   "DAGMAN_QUEUE_UPDATE_INTERVAL": "60 * 2", "DAGMAN_MAX_JOBS_IDLE": "2.0 * 5"}),
                            None, {})
    assert (s.debug_cache_size, s.auto_rescue, s.queue_update_interval, s.max_jobs_idle) == (5242880, False, 120.0, 10)
    for bad in ("2.5", "x + 1", '"ten"', "1 ]"):
        with pytest.raises(DagError, match="not an integer"):
            DagmanSettings.load(_pool({"DAGMAN_MAX_JOBS_IDLE": bad}), None, {})


def test_the_honoured_knob_names_are_the_knobs_not_listed_as_unhonoured() -> None:
    from htcd.dagman.settings import HONOURED_KNOBS, KNOBS, UNHONOURED

    assert set(HONOURED_KNOBS) == {"DAGMAN_" + k.upper() for k in KNOBS if k not in UNHONOURED}
    assert len(HONOURED_KNOBS) == len(set(HONOURED_KNOBS))
