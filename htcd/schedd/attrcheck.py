"""What `htcd qedit` may change, and to what: protected attributes with the reason, and the
types of the job attributes the daemons read, checked before anything is written.

A value that is an expression (``RequestMemory = MemoryUsage * 2``) is accepted for any typed
attribute: it is evaluated when used, as in HTCondor.  Only a literal of the wrong type is refused,
since it could never be right (``JobPrio = "high"``).
"""

from __future__ import annotations

from htcd.classad import ClassAdSyntaxError, parse_expr

# lower-case name -> why it cannot be edited
PROTECTED = {
    "owner": "the owner comes from the identity that submitted the job",
    "user": "the user comes from the identity that submitted the job",
    "clusterid": "it identifies the job",
    "procid": "it identifies the job",
    "globaljobid": "it identifies the job",
    "jobstatus": "the status changes through htcd hold, release and rm",
    "autoclusterid": "the schedd computes it from the job's significant attributes",
    "autoclusterattrs": "the schedd computes it from the slots' and the job's requirements",
    "claimid": "the schedd keeps the claim of a running job (a secret shared with the startd)",
    "publicclaimid": "the schedd keeps the claim of a running job",
}

_NUMBER = "a number"
_INTEGER = "an integer"
_STRING = "a string"
_BOOLEAN = "a boolean"
TYPES = {
    **dict.fromkeys(("jobprio", "jobuniverse", "maxretries", "numjobstarts", "jobleaseduration",
                     "holdreasoncode", "holdreasonsubcode", "jobmaterializelimit", "jobmaterializemaxidle"),
                    _INTEGER),
    **dict.fromkeys(("requestcpus", "requestmemory", "requestdisk", "requestgpus", "imagesize", "diskusage",
                     "memoryusage"), _NUMBER),
    **dict.fromkeys(("cmd", "iwd", "in", "out", "err", "userlog", "arguments", "args", "environment", "env",
                     "accountinggroup", "acctgroup", "acctgroupuser", "concurrencylimits", "jobbatchname",
                     "holdreason", "transferinput", "transferoutput", "shouldtransferfiles",
                     "whentotransferoutput", "dockerimage"), _STRING),
    **dict.fromkeys(("transferexecutable", "leavejobinqueue", "wantcheckpointsignal"), _BOOLEAN),
}


def _is(kind: str, v: object) -> bool:
    if kind == _INTEGER:
        return type(v) is int
    if kind == _NUMBER:
        return type(v) in (int, float)
    if kind == _STRING:
        return type(v) is str
    return type(v) is bool


def check_edit(name: str, text: str) -> str | None:
    """Why ``name = text`` may not be set by qedit, or None when it may."""
    low = name.lower()
    if low in PROTECTED:
        return f"{name} cannot be changed: {PROTECTED[low]}"
    if not name or not (name[0].isalpha() or name[0] == "_") or not name.replace("_", "").replace(".", "").isalnum():
        return f"{name!r} is not an attribute name"
    try:
        expr = parse_expr(text)
    except ClassAdSyntaxError as exc:
        return f"{name} = {text}: not a ClassAd expression ({exc})"
    kind = TYPES.get(low)
    if kind is not None and expr.is_literal():
        v = expr.const_value()
        if not _is(kind, v):
            return f"{name} must be {kind}, and {text} is not"
    return None
