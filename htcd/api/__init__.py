"""A Python API for htcd shaped like HTCondor's ``htcondor2`` bindings: the same names, arguments
and return types for what scripts use most, so a script ports by changing its import::

    import htcd.api as htcondor2          # was: import htcondor2
    from htcd.api import classad          # was: import classad2 as classad

It talks to the pool through :mod:`htcd.client`, as the ``htcd`` commands do, and reads the
same configuration (``HTCD_CONFIG`` or ``CONDOR_CONFIG``).  What it covers and where it differs
from htcondor2: docs/api.md."""

from __future__ import annotations

from htcd.version import version_string

from . import classad
from .collector import Collector
from .config import param, reload_config, set_subsystem
from .enums import (
    AdType,
    AdTypes,
    DaemonType,
    DaemonTypes,
    JobAction,
    JobEventType,
    JobStatus,
    QueryOpt,
    QueryOpts,
)
from .errors import ClassAdException, HTCondorException
from .eventlog import JobEvent, JobEventLog
from .schedd import Schedd, SubmitResult
from .submit import Submit


def version() -> str:
    """htcd's version line, in HTCondor's ``$CondorVersion: ... $`` form, as htcondor2.version()."""
    return version_string()


__all__ = [
    "AdType",
    "AdTypes",
    "ClassAdException",
    "Collector",
    "DaemonType",
    "DaemonTypes",
    "HTCondorException",
    "JobAction",
    "JobEvent",
    "JobEventLog",
    "JobEventType",
    "JobStatus",
    "QueryOpt",
    "QueryOpts",
    "Schedd",
    "Submit",
    "SubmitResult",
    "classad",
    "param",
    "reload_config",
    "set_subsystem",
    "version",
]
