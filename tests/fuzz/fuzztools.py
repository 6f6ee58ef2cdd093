"""Helpers of the fuzz tests: raw protocol connections and generated requests."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from htcd.wire.commands import COMMANDS
from htcd.wire.framing import encode, recv_frame

#: Commands that would stop or cripple the pool under test whatever their arguments (shutdown,
#: restart, drain with exit): their argument handling is covered by tests of their own.
DESTRUCTIVE = {"DC_OFF_GRACEFUL", "DAEMONS_OFF", "DAEMON_OFF", "RESTART", "DRAIN_JOBS", "DC_CONFIG_PERSIST"}
#: Commands whose answer holds the connection for good (a CCB registration streams until the
#: daemon goes away): in a batch, the requests after them would never be answered.
HOLDS_THE_CONNECTION = {"CCB_REGISTER"}

#: Argument names the handlers read (a generated request mostly uses these, so that handlers get
#: past their first check), plus a few that none reads.
ARG_NAMES = sorted({
    "fast", "peaceful", "daemon", "pid", "timeout_secs", "updates", "ad_type", "ad", "private", "names",
    "values", "constraint", "name", "address", "schedd_name", "projection", "limit", "factor", "priority",
    "all", "claim_ids", "claim_id", "slots", "reason", "evict", "graceful", "job_ad", "schedd_host",
    "alive_interval", "preempt", "files", "how_fast", "on_completion", "start", "check", "request_id",
    "cluster_id", "cluster_ad", "proc_ads", "cluster", "totals", "owner", "autoclusters", "ids", "action",
    "attrs", "submitter", "slot_ads", "skip", "matches", "levels", "statistics", "set", "unset", "job_id",
    "id", "autocluster", "slot_ad", "fetched", "nonsense",
})

TEXTS = ["", "true", "false", "1", "-1", "Cpus", "JobStatus == 1", "MY.x +", "\"s\"", "Machine", "Scheduler",
         "Submitter", "Any", "Generic", "SCHEDD", "STARTD", "MASTER", "slot1@x", "a@b", "hold", "release",
         "remove", "graceful", "quick", "fast", "resume", "exit", "DC:2", "NONE", "ALL", "READ", "rank",
         "priority", "1.0", "1.1", "2", "X = 1", "\x00", "é" * 3, "[", "{1,2", "1e400", "x" * 300]


def _atoms() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(), st.booleans(),
        st.integers(min_value=-(2 ** 63), max_value=2 ** 64 - 1),
        st.sampled_from([0, 1, -1, 2 ** 31, 2 ** 63 - 1]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from(TEXTS), st.text(max_size=12), st.binary(max_size=12),
    )


ATOMS = _atoms()
VALUES = st.recursive(
    ATOMS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(st.sampled_from(ARG_NAMES + TEXTS), st.text(max_size=6)),
                                            inner, max_size=4)),
    max_leaves=8,
)
ARGS = st.dictionaries(st.sampled_from(ARG_NAMES), VALUES, max_size=6)


#: The arguments each command reads (docs/protocol.md), so that generated requests get deep.
COMMAND_ARGS: dict[str, list[str]] = {
    "FETCH_OUTPUT": ["id", "keys", "drop"],
    "DC_SEC_QUERY": ["levels"], "DC_QUERY_SELF": ["statistics"], "DC_CONFIG_RUNTIME": ["set", "unset"],
    "UPDATE_AD": ["ad_type", "ad", "private", "names", "values", "updates"],
    "INVALIDATE_AD": ["ad_type", "name", "address", "schedd_name", "constraint"],
    "QUERY_ADS": ["ad_type", "constraint", "projection", "limit"], "QUERY_PRIVATE_ADS": ["ad_type", "constraint"],
    "SET_PRIORITYFACTOR": ["name", "factor"], "SET_PRIORITY": ["name", "priority"], "RESET_USAGE": ["name", "all"],
    "DELETE_USER": ["name"], "SUBMIT": ["cluster_id", "cluster_ad", "proc_ads"],
    "QUERY_JOBS": ["constraint", "projection", "limit", "totals", "owner", "autoclusters", "cluster"],
    "ACT_ON_JOBS": ["action", "ids", "constraint", "reason"], "SET_ATTRIBUTES": ["ids", "constraint", "attrs"],
    "NEGOTIATE": ["submitter", "limit", "skip", "slot_ads"], "MATCHES": ["matches"],
    "VACATE_JOBS": ["ids", "constraint", "fast", "reason"],
    "REQUEST_CLAIM": ["claim_id", "job_ad", "schedd_host", "alive_interval", "preempt"],
    "ACTIVATE_CLAIM": ["claim_id", "job_ad", "files"], "DEACTIVATE_CLAIM": ["claim_id", "graceful", "evict", "reason"],
    "RELEASE_CLAIM": ["claim_id"], "ALIVE": ["claim_ids"], "RECONNECT_JOB": ["claim_id", "job_id"],
    "VACATE_CLAIMS": ["slots", "fast"], "DAEMON_ON": ["daemon"], "DC_CHILDALIVE": ["pid", "timeout_secs"],
    "CANCEL_DRAIN_JOBS": ["request_id"], "SPOOL_JOB_FILES": ["cluster_id"],
    "TRANSFER_DATA": ["ids", "constraint", "fetched"],
}
AD = st.dictionaries(st.sampled_from(["Cpus", "Memory", "Name", "Requirements", "MyType", "Owner", "JobStatus",
                                      *TEXTS[:6]]), st.one_of(st.sampled_from(TEXTS), ATOMS), max_size=5)
TYPED = st.one_of(VALUES, AD, st.lists(AD, max_size=3),
                  st.lists(st.fixed_dictionaries({}, optional={k: st.one_of(VALUES, AD) for k in (
                      "id", "autocluster", "slot_ad", "claim_id", "preempt", "ad_type", "ad", "names", "values")}),
                           max_size=3))


def args_for(command: str) -> st.SearchStrategy[dict[str, Any]]:
    names = COMMAND_ARGS.get(command)
    if not names:
        return ARGS
    return st.fixed_dictionaries({}, optional={n: TYPED for n in names})


def command_names(daemon: str) -> list[str]:
    """The commands ``daemon`` (e.g. "SCHEDD") serves that the fuzzer may send."""
    return sorted(n for n, c in COMMANDS.items()
                  if n not in DESTRUCTIVE and n not in HOLDS_THE_CONNECTION
                  and ("*" in c.daemons or daemon in c.daemons))


def requests_for(daemon: str) -> st.SearchStrategy[dict[str, Any]]:
    """A request to ``daemon``: mostly a known command with generated arguments, sometimes a
    malformed request (no command, arguments not a map)."""
    good = st.sampled_from(command_names(daemon)).flatmap(
        lambda c: st.builds(lambda a: {"cmd": c, "args": a}, args_for(c)))
    odd = st.one_of(st.builds(lambda c, a: {"cmd": c, "args": a}, ATOMS, VALUES),
                    st.builds(lambda c: {"cmd": c}, st.sampled_from(command_names(daemon))))
    return st.one_of(good, good, good, good, odd)


#: Values of every type, each put in turn in place of an argument (wrong types, edge values).
PALETTE: list[Any] = [None, 0, -1, 2 ** 64 - 1, 1.5, float("nan"), True, "", "x" * 2000, "\x00", b"\xff",
                      [], [1, "a", None], {}, {"k": [1]}, {"Name": 1}, [[[[[[[[]]]]]]]]]


def variants(request: dict[str, Any], start: int, count: int = 12) -> list[dict[str, Any]]:
    """``count`` copies of ``request`` with one argument (one it has, or one its command reads)
    replaced by a value of the palette: cheap inputs aimed at argument type checks."""
    args = request.get("args")
    if not isinstance(args, dict) or not isinstance(request.get("cmd"), str):
        return []
    names = sorted({*(k for k in args if isinstance(k, str)), *COMMAND_ARGS.get(request["cmd"], [])})
    if not names:
        return []
    out = []
    for i in range(start, start + count):
        name, value = names[i % len(names)], PALETTE[(i // len(names)) % len(PALETTE)]
        out.append({"cmd": request["cmd"], "args": {**args, name: value}})
    return out


class RawConnection:
    """A blocking connection speaking frames directly (FS on the daemon's Unix socket)."""

    def __init__(self, path: str | Path, timeout: float = 60.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.sock.sendall(encode({"hello": "htcd", "version": 1, "methods": ["FS"]}))
        hello = recv_frame(self.sock)
        assert hello.get("ok"), hello

    def send(self, request: dict[str, Any]) -> None:
        self.sock.sendall(encode(request))

    def final(self) -> dict[str, Any]:
        """The final reply of the oldest request not yet answered (partial replies skipped)."""
        while True:
            reply = recv_frame(self.sock)
            if not reply.get("more"):
                return reply

    def batch(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send every request while reading their final replies (pipelined; the sending is in a
        thread, or both ends could block writing with neither reading)."""
        import threading

        data = b"".join(encode(r) for r in requests)
        failed: list[BaseException] = []

        def send() -> None:
            try:
                self.sock.sendall(data)
            except OSError as exc:
                failed.append(exc)

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        try:
            return [self.final() for _ in requests]
        finally:
            sender.join(60)
            assert not failed, failed

    def close(self) -> None:
        self.sock.close()
