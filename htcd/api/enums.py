"""htcondor2's enumerations, with the same names and numbers (scripts compare ``event.type`` with
``JobEventType.JOB_TERMINATED`` and pass ``AdType.Schedd``; some store the numbers).

The plural aliases (``AdTypes``, ``DaemonTypes``, ``QueryOpts``) are the version 1 names that
htcondor2 keeps and HTCondor's tutorials still use."""

from __future__ import annotations

import enum


class JobAction(enum.IntEnum):
    Hold = 1
    Release = 2
    Remove = 3
    RemoveX = 4
    Vacate = 5
    VacateFast = 6
    Suspend = 8
    Continue = 9


class AdType(enum.IntEnum):
    Startd = 0
    Schedd = 1
    Master = 2
    StartdPrivate = 5
    Submitter = 6
    Collector = 7
    License = 8
    Any = 10
    Negotiator = 13
    HAD = 14
    Generic = 15
    Credd = 16
    Grid = 19
    Placementd = 20
    Defrag = 22
    Accounting = 23
    Slot = 24
    StartDaemon = 25


class DaemonType(enum.IntEnum):
    none = 0
    Any = 1
    Master = 2
    Schedd = 3
    Startd = 4
    Collector = 5
    Negotiator = 6
    Credd = 13
    Placementd = 15
    HAD = 17
    Generic = 18


class JobStatus(enum.IntEnum):
    IDLE = 1
    RUNNING = 2
    REMOVED = 3
    COMPLETED = 4
    HELD = 5
    TRANSFERRING_OUTPUT = 6
    SUSPENDED = 7


class QueryOpt(enum.IntFlag):
    Default = 0
    AutoCluster = 1
    GroupBy = 2
    DefaultMyJobsOnly = 4
    SummaryOnly = 8
    IncludeClusterAd = 16
    IncludeJobsetAds = 32


_EVENT_NAMES = ["SUBMIT", "EXECUTE", "EXECUTABLE_ERROR", "CHECKPOINTED", "JOB_EVICTED", "JOB_TERMINATED", "IMAGE_SIZE", "SHADOW_EXCEPTION", "GENERIC", "JOB_ABORTED", "JOB_SUSPENDED", "JOB_UNSUSPENDED", "JOB_HELD", "JOB_RELEASED", "NODE_EXECUTE", "NODE_TERMINATED", "POST_SCRIPT_TERMINATED", "GLOBUS_SUBMIT", "GLOBUS_SUBMIT_FAILED", "GLOBUS_RESOURCE_UP", "GLOBUS_RESOURCE_DOWN", "REMOTE_ERROR", "JOB_DISCONNECTED", "JOB_RECONNECTED", "JOB_RECONNECT_FAILED", "GRID_RESOURCE_UP", "GRID_RESOURCE_DOWN", "GRID_SUBMIT", "JOB_AD_INFORMATION", "JOB_STATUS_UNKNOWN", "JOB_STATUS_KNOWN", "JOB_STAGE_IN", "JOB_STAGE_OUT", "ATTRIBUTE_UPDATE", "PRESKIP", "CLUSTER_SUBMIT", "CLUSTER_REMOVE", "FACTORY_PAUSED", "FACTORY_RESUMED", "NONE", "FILE_TRANSFER", "RESERVE_SPACE", "RELEASE_SPACE", "FILE_COMPLETE", "FILE_USED", "FILE_REMOVED", "DATAFLOW_JOB_SKIPPED", "COMMON_FILES"]
_EP_EVENT_NAMES = ["EP_STARTUP", "EP_READY", "EP_RECONFIG", "EP_SHUTDOWN", "EP_REQUEST_CLAIM", "EP_RELEASE_CLAIM", "EP_ACTIVATE_CLAIM", "EP_DEACTIVATE_CLAIM", "EP_VACATE_CLAIM", "EP_DRAIN", "EP_RESOURCE_BREAK", "EP_RESOURCE_MEND"]

#: The event numbers of HTCondor's job event log (ULOG_*), by htcondor2's names.
JobEventType = enum.IntEnum(  # type: ignore[misc]  # the functional API: 60 names from one table
    "JobEventType",
    [*((name, n) for n, name in enumerate(_EVENT_NAMES)), *((name, 100 + n) for n, name in enumerate(_EP_EVENT_NAMES))],
    module=__name__,
)

AdTypes = AdType
DaemonTypes = DaemonType
QueryOpts = QueryOpt

#: The collector's MyType for each ad type (what ``htcd status`` asks for).
AD_TYPE_NAMES = {
    AdType.Startd: "Machine", AdType.Slot: "Machine", AdType.StartDaemon: "StartD", AdType.Schedd: "Scheduler",
    AdType.Master: "DaemonMaster", AdType.Submitter: "Submitter", AdType.Collector: "Collector",
    AdType.Negotiator: "Negotiator", AdType.Any: "Any", AdType.Generic: "Generic", AdType.Credd: "CredD",
    AdType.HAD: "HAD", AdType.License: "License", AdType.Grid: "Grid", AdType.Defrag: "Defrag",
    AdType.Accounting: "Accounting", AdType.Placementd: "Placementd",
}

#: The collector's MyType of each daemon type (``Collector.locate``).
DAEMON_TYPE_NAMES = {
    DaemonType.Master: "DaemonMaster", DaemonType.Schedd: "Scheduler", DaemonType.Startd: "Machine",
    DaemonType.Collector: "Collector", DaemonType.Negotiator: "Negotiator", DaemonType.Credd: "CredD",
    DaemonType.HAD: "HAD", DaemonType.Generic: "Generic", DaemonType.Placementd: "Placementd",
    DaemonType.Any: "Any",
}
